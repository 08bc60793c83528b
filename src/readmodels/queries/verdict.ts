import { currentFinalization } from '../../review/pr-state';
import { verdictStanding, withStanding } from '../../review/provisional';
import { verdictFromIndex } from '../../review/verdict-index';
import type { QueryDefinition } from './query';
import type { NodeCore } from '../../review/pr-state';
import { affectsReview, leanReviewViewFold, reviewQueryInput, ReviewQueryInput, reviewSources, ReviewView, verdictIndexOf } from './review-fold';

/**
 * The live verdict of a review (SPEC §7) under the rules in force, with its axes and reasons, and its
 * standing: `state` is `final` only while the current round is finalized at the newest head known;
 * otherwise `provisional` (never Ship), with the last finalized verdict as `previous` and `previousStale`
 * when that verdict describes another head; `stale` is reviewStatus's (a newer head observed than the
 * round reviews) (src/review/provisional.ts).
 */
export function verdictView(s: ReviewView<NodeCore>) {
  if (!s.pr.exists) return { exists: false as const };
  const v = withStanding(verdictFromIndex(s.pr, verdictIndexOf(s), s.rules), verdictStanding(s.pr));
  const f = currentFinalization(s.pr);
  return {
    exists: true as const,
    ...v,
    status: s.pr.status,
    finalized: f ? { verdict: f.verdict, confidence: f.confidence, rulesVersion: f.rulesVersion, by: f.by, position: f.at } : null,
  };
}

export const verdictQuery: QueryDefinition<ReviewQueryInput, ReviewView<NodeCore>, ReturnType<typeof verdictView>> = {
  name: 'verdict',
  description: 'Ship / Hold / Block with aggregate confidence, the axes and the deciding reasons, for one review; state final | provisional (a provisional verdict is never Ship), previous, previousStale, stale.',
  input: reviewQueryInput,
  access: { minRole: 'viewer' },
  affects: affectsReview,
  fold: () => leanReviewViewFold(),
  sources: reviewSources,
  view: (s) => verdictView(s),
};
