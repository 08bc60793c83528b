import { currentFinalization } from '../review/pr-state';
import { verdictFromIndex } from '../review/verdict-index';
import type { QueryDefinition } from './query';
import type { NodeCore } from '../review/pr-state';
import { affectsReview, leanReviewViewFold, reviewQueryInput, ReviewQueryInput, reviewSources, ReviewView } from './review-fold';

/** The live verdict of a review (SPEC §7) under the rules in force, with its axes and reasons. */
export function verdictView(s: ReviewView<NodeCore>) {
  if (!s.pr.exists) return { exists: false as const };
  const v = verdictFromIndex(s.pr, s.verdictIndex, s.rules);
  const f = currentFinalization(s.pr);
  return {
    exists: true as const,
    ...v,
    status: s.pr.status,
    finalized: f ? { verdict: f.verdict, confidence: f.confidence, rulesVersion: f.rulesVersion, by: f.by, position: f.at } : null,
  };
}

export const verdictQuery: QueryDefinition<ReviewQueryInput, ReviewView<NodeCore>> = {
  name: 'verdict',
  description: 'Ship / Hold / Block with aggregate confidence, the axes and the deciding reasons, for one review.',
  input: reviewQueryInput,
  access: { minRole: 'viewer' },
  affects: affectsReview,
  fold: () => leanReviewViewFold(),
  sources: reviewSources,
  view: (s) => verdictView(s),
};
