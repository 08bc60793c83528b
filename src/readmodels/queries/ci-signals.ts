import { z } from 'zod';
import { reviewTarget } from '../../events/streams';
import { shaSchema } from '../../events/catalogue/review';
import { currentRound } from '../../review/pr-state';
import type { QueryDefinition } from './query';
import { affectsReview, reviewSources, ReviewView, reviewViewFold } from './review-fold';

const input = z.object({ ...reviewTarget, headSha: shaSchema.optional() });
type Input = z.infer<typeof input>;

/** CI check results recorded for a head (default: the reviewed head), latest per check name (SPEC §13). */
export function ciSignalsView(s: ReviewView, headSha?: string) {
  const head = headSha ?? s.pr.observedHead ?? currentRound(s.pr)?.headSha ?? null;
  const signals = Object.values(s.pr.ciSignals)
    .filter((c) => c.headSha === head)
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { headSha: head, signals };
}

export const ciSignalsQuery: QueryDefinition<Input, ReviewView, ReturnType<typeof ciSignalsView>> = {
  name: 'ciSignals',
  description: 'CI check results recorded for a head of the PR (default: the latest observed head).',
  input,
  access: { minRole: 'viewer' },
  affects: affectsReview,
  fold: () => reviewViewFold(),
  sources: reviewSources,
  view: (s, i) => ciSignalsView(s, i.headSha),
};
