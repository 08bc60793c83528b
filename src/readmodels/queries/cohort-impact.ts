import { cohortImpactQueryInput } from '../../compute/queries';
import type { z } from 'zod';
import { reviewStreamOf } from '../../events/streams';
import { cohortsFold, CohortsState } from './cohorts';
import type { QueryDefinition } from './query';

type Input = z.infer<typeof cohortImpactQueryInput>;

/**
 * SPEC §8.5 `cohortImpact`: who depends on one cohort of the latest computation. The blast radius was
 * computed from the code graph when the review was computed and recorded in ReviewComputed, so this is a
 * pure read of events. A key the latest computation does not hold answers `found: false` (a watcher
 * stays subscribed across a recompute that drops or brings back the cohort).
 */
export function cohortImpactView(s: CohortsState, cohortKey: string) {
  const c = s.computation;
  const cohort = c?.cohorts.find((x) => x.key === cohortKey);
  if (!c || !cohort) return { found: false as const, cohortKey, headSha: c?.headSha ?? null, reason: c ? `cohortKey: "${cohortKey}" is not a cohort of the computation at ${c.headSha}` : 'the review has not been computed yet' };
  return { found: true as const, cohortKey, headSha: c.headSha, rank: cohort.rank, title: cohort.title, files: cohort.files, anchors: cohort.anchors, blastRadius: cohort.blastRadius };
}

export const cohortImpactQuery: QueryDefinition<Input, CohortsState, ReturnType<typeof cohortImpactView>> = {
  name: 'cohortImpact',
  description: 'Per cohort of the latest computation: dependents (files, symbols), public API touched, tests reaching it, score.',
  input: cohortImpactQueryInput,
  access: { minRole: 'viewer' },
  affects: (input, e) => e.streamId === reviewStreamOf(input) && e.type === 'ReviewComputed',
  fold: () => cohortsFold,
  sources: (input) => [reviewStreamOf(input)],
  view: (s, i) => cohortImpactView(s, i.cohortKey),
};
