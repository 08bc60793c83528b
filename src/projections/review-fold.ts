import { z } from 'zod';
import type { StreamFold } from '../commands/kernel';
import { reviewStreamOf, reviewTarget } from '../commands/review-target';
import type { RecordedEvent } from '../events/envelope';
import { evolvePr, initialPrState, PrState } from '../review/pr-state';
import { activeRules, Rules } from '../rules/rules';

export const reviewQueryInput = z.object(reviewTarget);
export type ReviewQueryInput = z.infer<typeof reviewQueryInput>;

/**
 * What every review read model folds: the PR stream, plus the workspace facts a review's answer depends
 * on — the rules in force (RulesVersionActivated) and suppression facts. Rules are a parameter: when
 * `pinned` is given (replay) activations are ignored, else the rules are those active at the position
 * folded to, so an "as of" read answers under the rules of that time.
 */
export interface ReviewView {
  pr: PrState;
  rules: Rules;
  /** fingerprint → the dismissed node that recorded it first. */
  suppressions: Record<string, { nodeId: string; repoId?: string; prNumber?: number; at: number }>;
  /** nodeId → the suppression fact that existed when the node was filed ("previously dismissed"). */
  previouslyDismissed: Record<string, { nodeId: string; repoId?: string; prNumber?: number; at: number }>;
}

const WORKSPACE_TYPES = new Set(['RulesVersionActivated', 'SuppressionFactRecorded']);

export function reviewViewFold(pinned?: Rules): StreamFold<ReviewView> {
  return {
    initialState: () => ({ pr: initialPrState(), rules: pinned ?? activeRules(null), suppressions: {}, previouslyDismissed: {} }),
    evolve(s, e) {
      if (e.streamId === 'workspace') {
        const d = e.data as any;
        if (e.type === 'RulesVersionActivated' && !pinned) s.rules = activeRules(d.document);
        else if (e.type === 'SuppressionFactRecorded' && !s.suppressions[d.fingerprint]) s.suppressions[d.fingerprint] = { nodeId: d.nodeId, repoId: d.repoId, prNumber: d.prNumber, at: e.globalPosition };
        return s;
      }
      if (e.type === 'ReviewNodeFiled') {
        const d = e.data as { nodeId: string; fingerprint: string };
        const fact = s.suppressions[d.fingerprint];
        if (fact) s.previouslyDismissed[d.nodeId] = fact;
      }
      evolvePr(s.pr, e);
      return s;
    },
  };
}

/** The sources and filter shared by the review queries. */
export const reviewSources = (input: ReviewQueryInput): string[] => [reviewStreamOf(input), 'workspace'];
export function affectsReview(input: ReviewQueryInput, e: RecordedEvent): boolean {
  return e.streamId === 'workspace' ? WORKSPACE_TYPES.has(e.type) : e.streamId === reviewStreamOf(input);
}
