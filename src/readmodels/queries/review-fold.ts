import { z } from 'zod';
import type { StreamFold } from '../../events/kernel-types';
import { reviewStreamOf, reviewTarget } from '../../events/streams';
import type { RecordedEvent } from '../../events/envelope';
import type { ReviewNodeBody } from '../../events/catalogue/review';
import { currentRound, dict, evolvePr, initialPrState, isLive, NodeCore, PrState } from '../../review/pr-state';
import { buildVerdictIndex, indexNode, VerdictIndex } from '../../review/verdict-index';
import { activeRules, Rules } from '../../rules/rules';
import { catalogued } from '../../events/catalogue/event-types';

export const reviewQueryInput = z.object(reviewTarget);
export type ReviewQueryInput = z.infer<typeof reviewQueryInput>;

/**
 * What every review read model folds: the PR stream, plus the workspace facts a review's answer depends
 * on — the rules in force (RulesVersionActivated) and suppression facts. Rules are a parameter: when
 * `pinned` is given (replay) activations are ignored, else the rules are those active at the position
 * folded to, so an "as of" read answers under the rules of that time.
 */
export interface ReviewView<B extends NodeCore = ReviewNodeBody> {
  pr: PrState<B>;
  rules: Rules;
  /** fingerprint → the dismissed node that recorded it first. */
  suppressions: Record<string, { nodeId: string; repoId?: string; prNumber?: number; at: number }>;
  /** nodeId → the suppression fact that existed when the node was filed ("previously dismissed"). */
  previouslyDismissed: Record<string, { nodeId: string; repoId?: string; prNumber?: number; at: number }>;
}

function hasAny(d: Record<string, unknown>): boolean {
  for (const _ in d) return true;
  return false;
}

/**
 * The verdict's findings part of a view: absent until the verdict is first read (verdictIndexOf builds
 * it), then kept up to date event by event; dropped again when the round or the rules change. A pure
 * function of `pr` and `rules`, so building it late gives what maintaining it all along gives — and a
 * rebuild, which reads each verdict once at the end, indexes only the nodes still live then (maintaining
 * it through the log cost ~1.2 µs per event, 15 % of a verdict rebuild: bench:projections).
 *
 * Held beside the view, not in it: the index keys its defects by fingerprint in a Map (a fingerprint
 * fresh from JSON.parse used as an object key is first internalized into V8's string table; building the
 * index over a 200k-event log took 0.52 µs per event with objects, 0.37 with Maps), and a Map has no JSON
 * form — the view stays plain JSON data, and a view restored from a snapshot builds its index again.
 */
const VERDICT_INDEXES = new WeakMap<ReviewView<NodeCore>, VerdictIndex>();

/** The view's verdict index, built on first use. */
export function verdictIndexOf<B extends NodeCore>(s: ReviewView<B>): VerdictIndex {
  let ix = VERDICT_INDEXES.get(s);
  if (!ix) VERDICT_INDEXES.set(s, (ix = buildVerdictIndex(s.pr, s.rules)));
  return ix;
}

const WORKSPACE_TYPES = new Set(['RulesVersionActivated', 'SuppressionFactRecorded']);

export function reviewViewFold(pinned?: Rules): StreamFold<ReviewView> {
  return makeReviewViewFold<ReviewNodeBody>(pinned, false);
}

/** The same fold keeping only what the verdict reads of each node: the verdict projection and rebuilds use it. */
export function leanReviewViewFold(pinned?: Rules): StreamFold<ReviewView<NodeCore>> {
  return makeReviewViewFold<NodeCore>(pinned, true);
}

function makeReviewViewFold<B extends NodeCore>(pinned: Rules | undefined, lean: boolean): StreamFold<ReviewView<B>> {
  return {
    // evolvePr and the suppression facts read an event's type, stream, position and data only.
    leanEvents: true,
    initialState: () => {
      const pr = initialPrState<B>();
      const rules = pinned ?? activeRules(null);
      return { pr, rules, suppressions: dict(), previouslyDismissed: dict() };
    },
    evolve(s, e) {
      const ev = catalogued(e);
      if (e.streamId === 'workspace') {
        if (ev.type === 'RulesVersionActivated' && !pinned) {
          s.rules = activeRules(ev.data.document);
          VERDICT_INDEXES.delete(s);
        } else if (ev.type === 'SuppressionFactRecorded' && !s.suppressions[ev.data.fingerprint]) s.suppressions[ev.data.fingerprint] = { nodeId: ev.data.nodeId, repoId: ev.data.repoId, prNumber: ev.data.prNumber, at: e.globalPosition };
        return s;
      }
      const filed = ev.type === 'ReviewNodeFiled' ? ev.data : undefined;
      // Looked up only when there are facts: the first property lookup with a fingerprint fresh from
      // JSON.parse (not internalized) goes through the runtime and V8's string table, ~0.5 µs per filed
      // node (6 % of a verdict rebuild in bench:projections, whose log records no suppression).
      if (filed && hasAny(s.suppressions)) {
        const fact = s.suppressions[filed.fingerprint];
        if (fact) s.previouslyDismissed[filed.nodeId] = fact;
      }
      const ix = VERDICT_INDEXES.get(s);
      if (ix === undefined) {
        evolvePr(s.pr, e, lean);
        return s;
      }
      // A re-filed report superseding an outdated node closes that node (pr-state.ts joinCarried).
      const closing = ev.type === 'ReviewNodeDismissed' || ev.type === 'ReviewNodeResolved' ? s.pr.nodes[ev.data.nodeId] : filed?.joins ? s.pr.nodes[filed.joins] : undefined;
      const wasLive = closing !== undefined && isLive(closing);
      evolvePr(s.pr, e, lean);
      const rounds = s.pr.rounds;
      if ((rounds.length === 0 ? 0 : rounds[rounds.length - 1].round) !== ix.round || ev.type === 'FindingsCarriedOver') VERDICT_INDEXES.delete(s);
      else {
        if (wasLive && !isLive(closing!) && closing!.round === ix.round) indexNode(ix, closing!, s.rules, -1);
        if (filed) {
          const n = s.pr.nodes[filed.nodeId];
          if (n.round === ix.round) indexNode(ix, n, s.rules, +1);
        }
      }
      return s;
    },
  };
}

/** The sources and filter shared by the review queries. */
export const reviewSources = (input: ReviewQueryInput): string[] => [reviewStreamOf(input), 'workspace'];
export function affectsReview(input: ReviewQueryInput, e: RecordedEvent): boolean {
  return e.streamId === 'workspace' ? WORKSPACE_TYPES.has(e.type) : e.streamId === reviewStreamOf(input);
}
