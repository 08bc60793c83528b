import { currentFinalization, currentRound, isStale } from '../../review/pr-state';
import { verdictStanding } from '../../review/provisional';
import type { QueryDefinition } from './query';
import { affectsReview, reviewQueryInput, ReviewQueryInput, reviewSources, ReviewView, reviewViewFold } from './review-fold';

/** The association ladder (SPEC §10) with the stale flag: is the reviewed head still the PR's head? */
export function reviewStatusView(s: ReviewView) {
  const pr = s.pr;
  const round = currentRound(pr);
  const f = currentFinalization(pr);
  const standing = verdictStanding(pr);
  return {
    exists: pr.exists,
    repoId: pr.repoId ?? null,
    prNumber: pr.prNumber ?? null,
    status: pr.exists ? pr.status : null,
    round: round?.round ?? null,
    reviewedHead: round?.headSha ?? null,
    observedHead: pr.observedHead,
    stale: isStale(pr),
    level: pr.exists ? pr.level : null,
    roster: pr.roster,
    finalized: f ? { verdict: f.verdict, confidence: f.confidence, position: f.at } : null,
    /** SPEC §7.1: what a client gating on this review may read — `final` or `provisional` (never a go-ahead). */
    verdictState: pr.exists ? standing.state : null,
    previousVerdict: standing.previous,
  };
}

export const reviewStatusQuery: QueryDefinition<ReviewQueryInput, ReviewView, ReturnType<typeof reviewStatusView>> = {
  name: 'reviewStatus',
  description: 'Ladder status (requested → in progress → awaiting approval → completed), round, level and the stale flag.',
  input: reviewQueryInput,
  access: { minRole: 'viewer' },
  affects: affectsReview,
  fold: () => reviewViewFold(),
  sources: reviewSources,
  view: (s) => reviewStatusView(s),
};
