import type { Priority, ReviewerBrief } from '../events/catalogue/review';
import type { ReviewLevel } from '../events/catalogue/workspace';
import type { Rules } from '../rules/rules';

/** The reviewer briefs a review at this level dispatches (SPEC §9), from the rules' level table. */
export function rosterFor(level: ReviewLevel, rules: Rules): ReviewerBrief[] {
  return [...rules.levels[level].roster];
}

/** Whether a node of this priority is reported in the main list at this level (else "below threshold"). */
export function reportedInMainList(level: ReviewLevel, priority: Priority, rules: Rules): boolean {
  return rules.levels[level].mainPriorities.includes(priority);
}
