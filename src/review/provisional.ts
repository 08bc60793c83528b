import type { Verdict } from '../events/catalogue/review';
import { currentRound, isStale, NodeCore, PrState } from './pr-state';
import type { VerdictResult } from './verdict';

/**
 * SPEC §7.1: whether the verdict of a review is the finalized answer for the head under review, or a
 * provisional one. `final` only while the current round is finalized (awaiting approval or completed)
 * and no newer head has been observed; everything else — a round nobody finalized, a node filed after
 * the finalization, a new head observed or computed — is `provisional`.
 */
export interface VerdictStanding {
  state: 'provisional' | 'final';
  /** The last finalized verdict (of this round or an earlier one) while the verdict is provisional. */
  previous: PreviousVerdict | null;
  /**
   * A newer head than the one the current round reviews has been observed: the same `stale` as
   * reviewStatus's (one definition for every read model, issue 38).
   */
  stale: boolean;
  /** The last finalized verdict (`previous`) describes another head than the newest known. */
  previousStale: boolean;
  /** The PR's newest head known to the review: observed, else the current round's. */
  latestHead: string | null;
  /** Why the verdict is provisional (null when final). */
  why: string | null;
}

export interface PreviousVerdict {
  verdict: Verdict;
  confidence: number;
  round: number;
  headSha: string;
  rulesVersion: string;
  by: string;
  position: number;
}

export function verdictStanding(s: PrState<NodeCore>): VerdictStanding {
  const round = currentRound(s);
  const f = s.finalization;
  const latestHead = s.observedHead && round && isStale(s) ? s.observedHead : (round?.headSha ?? s.observedHead);
  const finalizedHere = !!f && !!round && f.round === round.round && (s.status === 'awaiting_approval' || s.status === 'completed');
  if (finalizedHere && !isStale(s)) return { state: 'final', previous: null, stale: false, previousStale: false, latestHead, why: null };
  const previous: PreviousVerdict | null = f ? { verdict: f.verdict, confidence: f.confidence, round: f.round, headSha: f.headSha, rulesVersion: f.rulesVersion, by: f.by, position: f.at } : null;
  const stale = isStale(s);
  const previousStale = previous !== null && previous.headSha !== latestHead;
  let why: string;
  if (!round) why = 'no review has been requested';
  else if (isStale(s)) why = `head ${short(s.observedHead!)} was observed after round ${round.round} at ${short(round.headSha)}; nobody has reviewed it yet`;
  else if (f && f.round === round.round) why = `round ${round.round} changed after it was finalized (status ${s.status}); finalize it again`;
  else why = `round ${round.round} at ${short(round.headSha)} is not finalized yet`;
  return { state: 'provisional', previous, stale, previousStale, latestHead, why };
}

/**
 * A provisional verdict never reads Ship: nobody has finalized what it describes, so at most it can say
 * what the findings so far ask for. When that is Ship it is raised to Hold with confidence 0 (nothing
 * has been decided yet), and the provisional reason is the deciding one. Hold and Block stand as the
 * findings or axes decided them.
 */
export function withStanding<V extends VerdictResult>(v: V, standing: VerdictStanding): V & { state: VerdictStanding['state']; previous: PreviousVerdict | null; stale: boolean; previousStale: boolean; latestHead: string | null; provisionalReason: string | null } {
  const extra = { state: standing.state, previous: standing.previous, stale: standing.stale, previousStale: standing.previousStale, latestHead: standing.latestHead, provisionalReason: standing.why };
  if (standing.state === 'final' || v.verdict !== 'Ship') return { ...v, ...extra };
  return { ...v, ...extra, verdict: 'Hold', confidence: 0, reasons: [`Hold: provisional — ${standing.why}; a round is Ship only once finalized`, ...v.reasons] };
}

const short = (sha: string) => sha.slice(0, 12);
