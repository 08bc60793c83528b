import { DomainError } from '../domain-error';
import type { LadderStatus } from '../events/catalogue/review';

/**
 * The review association ladder (SPEC §10): requested → in_progress → awaiting_approval → completed.
 * A node filed after finalization sends the review back to in_progress (the finalization no longer
 * describes it); a new round (the head moved and the review was requested again) restarts at requested.
 */
const LEGAL: Record<LadderStatus, readonly LadderStatus[]> = {
  requested: ['in_progress'],
  in_progress: ['awaiting_approval', 'requested'],
  awaiting_approval: ['in_progress', 'completed', 'requested'],
  completed: ['requested'],
};

export function isLegalTransition(from: LadderStatus, to: LadderStatus): boolean {
  return LEGAL[from].includes(to);
}

export function assertTransition(from: LadderStatus, to: LadderStatus, act: string): void {
  if (!isLegalTransition(from, to)) {
    throw new DomainError('illegal_ladder_transition', `${act}: the review is "${from}"; ${from} → ${to} is not a ladder transition (legal from ${from}: ${LEGAL[from].join(', ') || 'none'})`, { from, to });
  }
}

/**
 * A decision made after the round was finalized (a confirmation, dismissal or resolution, a contract
 * decision, a visual approval) changes what the finalization decided on: like a node filed then, it
 * reopens the round (awaiting_approval → in_progress), so the verdict reads provisional — "round N
 * changed after it was finalized; finalize it again" — with the finalized one as `previous`, never a
 * live verdict beside a finalization it contradicts (issue 38). A published round (completed) keeps its
 * status: what was published stands; the decision is recorded and counts from the next round on.
 */
export function reopenAfterFinalization(status: LadderStatus, act: string): Array<{ type: 'ReviewStatusChanged'; data: { from: LadderStatus; to: LadderStatus; reason: string } }> {
  if (status !== 'awaiting_approval') return [];
  return [{ type: 'ReviewStatusChanged', data: { from: status, to: 'in_progress', reason: `${act} after the finalization: finalize the round again` } }];
}
