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
