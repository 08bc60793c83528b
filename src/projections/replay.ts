import { parseReviewStream } from '../events/streams';
import type { RecordedEvent } from '../events/envelope';
import { evolvePr, initialPrState, NodeCore, PrState as FullPrState } from '../review/pr-state';

// Replay only scores verdicts: the lean fold keeps what the verdict reads of each node.
type PrState = FullPrState<NodeCore>;
import { verdictOfPr } from '../review/pr-verdict';
import { activeRules, Rules } from '../rules/rules';
import type { WorkspaceHandle } from '../workspaces/registry';
import { isEvent } from '../events/catalogue/event-types';

export interface ReplayRow {
  repoId: string;
  prNumber: number;
  old: { verdict: string; confidence: number; rulesVersion: string };
  new: { verdict: string; confidence: number; rulesVersion: string };
  changed: boolean;
  /** The deciding reason under the new rules. */
  reason: string;
}

export interface ReplayFilter {
  repoId?: string;
  prNumber?: number;
  /** Global position to replay up to (default: the head). */
  asOf?: number;
}

/**
 * SPEC §7.4 replay: re-folds every review (or those matching the filter) and scores it under the rules
 * in force and under `rules`, reporting old → new and why. Reads only; recording the new rules is a
 * separate, explicit command (`activateRules`).
 */
export async function replayReviews(ws: WorkspaceHandle, rules: Rules, filter: ReplayFilter = {}): Promise<ReplayRow[]> {
  const prs = new Map<string, PrState>();
  let activeDocument: Record<string, unknown> | null = null;
  for await (const e of ws.store.readAll({ until: filter.asOf })) foldForReplay(prs, e, filter, (doc) => (activeDocument = doc));
  return compareUnder(prs, activeRules(activeDocument), rules);
}

export function foldForReplay(prs: Map<string, PrState>, e: RecordedEvent, filter: ReplayFilter, onRules: (doc: Record<string, unknown>) => void): void {
  if (e.streamId === 'workspace') {
    if (isEvent(e, 'RulesVersionActivated')) onRules(e.data.document);
    return;
  }
  if (!e.streamId.startsWith('pr-')) return;
  let s = prs.get(e.streamId);
  if (!s) {
    const target = parseReviewStream(e.streamId);
    if (!target || (filter.repoId !== undefined && target.repoId !== filter.repoId) || (filter.prNumber !== undefined && target.prNumber !== filter.prNumber)) return;
    prs.set(e.streamId, (s = initialPrState<NodeCore>()));
  }
  evolvePr(s, e, true);
}

export function compareUnder(prs: Map<string, PrState>, current: Rules, next: Rules): ReplayRow[] {
  const rows: ReplayRow[] = [];
  for (const [streamId, s] of prs) {
    if (!s.exists) continue;
    const target = parseReviewStream(streamId)!;
    const before = verdictOfPr(s, current);
    const after = verdictOfPr(s, next);
    const changed = before.verdict !== after.verdict || before.confidence !== after.confidence;
    const reason = after.reasons.find((r) => !before.reasons.includes(r)) ?? after.reasons[0] ?? '';
    rows.push({
      repoId: target.repoId,
      prNumber: target.prNumber,
      old: { verdict: before.verdict, confidence: before.confidence, rulesVersion: before.rulesVersion },
      new: { verdict: after.verdict, confidence: after.confidence, rulesVersion: after.rulesVersion },
      changed,
      reason,
    });
  }
  return rows.sort((a, b) => (a.repoId < b.repoId ? -1 : a.repoId > b.repoId ? 1 : a.prNumber - b.prNumber));
}
