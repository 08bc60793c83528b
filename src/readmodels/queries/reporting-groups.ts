import { reportedInMainList } from '../../review/levels';
import { currentRound } from '../../review/pr-state';
import type { QueryDefinition } from './query';
import { affectsReview, reviewQueryInput, ReviewQueryInput, reviewSources, ReviewView, reviewViewFold } from './review-fold';

/**
 * SPEC §9 reporting: the review's snapshotted level decides which priorities go to the main list; the
 * rest are grouped "below threshold". Every node of the round appears in exactly one group: a level that
 * reports less records exactly as much.
 */
export function reportingGroupsView(s: ReviewView) {
  const pr = s.pr;
  const round = currentRound(pr);
  const main: string[] = [];
  const belowThreshold: string[] = [];
  for (const id of round?.nodeIds ?? []) {
    const n = pr.nodes[id];
    (reportedInMainList(pr.level, n.node.priority, s.rules) ? main : belowThreshold).push(id);
  }
  return { level: pr.exists ? pr.level : null, mainPriorities: s.rules.levels[pr.level].mainPriorities, main, belowThreshold };
}

export const reportingGroupsQuery: QueryDefinition<ReviewQueryInput, ReviewView, ReturnType<typeof reportingGroupsView>> = {
  name: 'reportingGroups',
  description: "The round's nodes split into the main list and the below-threshold group by the review's level.",
  input: reviewQueryInput,
  access: { minRole: 'viewer' },
  affects: affectsReview,
  fold: () => reviewViewFold(),
  sources: reviewSources,
  view: (s) => reportingGroupsView(s),
};
