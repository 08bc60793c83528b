import type { Verdict } from '../events/catalogue/review';
import { verdictView } from '../readmodels/queries/verdict';
import type { ReviewView } from '../readmodels/queries/review-fold';
import { currentFinalization, currentRound, type NodeCore } from '../review/pr-state';
import { DEFAULT_CONTEXT, type CommitState } from '../events/catalogue/status-check';

/** GitHub keeps at most 140 characters of a status description. */
export const MAX_DESCRIPTION = 140;

/** The commit status a review's verdict asks for: on which commit, in which state, saying what. */
export interface VerdictStatusIntent {
  sha: string;
  state: CommitState;
  description: string;
  verdict: Verdict | null;
  provisional: boolean;
}

const short = (sha: string) => sha.slice(0, 7);

export function clip(text: string, max = MAX_DESCRIPTION): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

/**
 * The verdict as a commit status (SPEC §14): provisional → pending, Ship → success, Hold / Block →
 * failure, on the PR's newest known head, with the deciding reason.
 *
 * The verdict projection says whether its answer is `final` (the current round finalized at the newest
 * head known, nothing filed since) or `provisional` (src/review/provisional.ts). Only a final verdict
 * ever turns the gate green or red; a provisional one is pending, whatever it reads. A newer head
 * observed than the one reviewed gets pending on that head: nobody reviewed that commit.
 * Pure: the same folded review always gives the same intent.
 */
export function verdictStatusIntent(s: ReviewView<NodeCore>): VerdictStatusIntent | null {
  const v = verdictView(s);
  const round = currentRound(s.pr);
  if (!v.exists || !round) return null;
  const sha = v.latestHead ?? round.headSha;
  if (v.state === 'provisional') {
    if (sha !== round.headSha) {
      const f = currentFinalization(s.pr);
      const last = f && f.headSha === round.headSha ? f.verdict : `provisional ${v.verdict}`;
      return { sha, state: 'pending', provisional: true, verdict: null, description: clip(`head ${short(sha)} not reviewed yet (review of ${short(round.headSha)}: ${last})`) };
    }
    return { sha, state: 'pending', provisional: true, verdict: v.verdict, description: clip(`provisional ${v.verdict}: ${v.provisionalReason ?? 'not finalized'}`) };
  }
  // The reason that decided the verdict: an axis that forced Block outranks the findings' Hold.
  const reason = v.reasons.find((r) => r.startsWith(v.verdict)) ?? v.reasons[0] ?? '';
  const state: CommitState = v.verdict === 'Ship' ? 'success' : 'failure';
  return { sha, state, provisional: false, verdict: v.verdict, description: clip(`${v.verdict} (confidence ${v.confidence}): ${reason}`) };
}

/** The status for a head GitHub shows but the ledger has not seen (it moved while we posted). */
export function unreviewedHeadIntent(sha: string, reviewed: VerdictStatusIntent): VerdictStatusIntent {
  return { sha, state: 'pending', provisional: true, verdict: null, description: clip(`head ${short(sha)} not reviewed yet (review of ${short(reviewed.sha)}: ${reviewed.provisional ? 'provisional ' : ''}${reviewed.verdict ?? 'none'})`) };
}
