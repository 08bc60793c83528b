import { z } from 'zod';
import { reviewTarget } from '../../events/streams';
import { isLive, PrState } from '../../review/pr-state';
import type { QueryDefinition } from './query';
import { affectsReview, reviewSources, ReviewView, reviewViewFold } from './review-fold';

const input = z.object({ ...reviewTarget, round: z.number().int().min(1).optional() });
type Input = z.infer<typeof input>;

export type DeltaState = 'new' | 'outdated' | 'persisting' | 'carried' | 'gone';

export interface DeltaEntry {
  fingerprint: string;
  state: DeltaState;
  /** Nodes carrying the fingerprint in round N (new, outdated, persisting, carried) or in round N−1 (gone). */
  nodeIds: string[];
  title: string;
  priority: string;
  /** Why it is outdated or gone, when the carry-over said (SPEC §5). */
  reason?: string;
}

const ORDER: readonly DeltaState[] = ['new', 'outdated', 'persisting', 'carried', 'gone'];

/**
 * SPEC §5 re-review delta: round N against round N−1 by fingerprint. Every node of a round counts,
 * whatever its status. With the carry-over recorded (`round.carry`), a fingerprint is
 *  - `carried`: a node of N−1 whose anchored code is unchanged is in N (re-filed reports join it);
 *  - `outdated`: a node of N−1 whose anchored code changed is in N, live, and nobody has re-reviewed it;
 *  - `persisting`: in both rounds otherwise (re-filed, e.g. an outdated node's re-review);
 *  - `new`: only in N; `gone`: only in N−1 (fixed, resolved and not carried, or its code deleted).
 * Ordered new, outdated, persisting, carried, gone: what changed and what needs re-review surfaces first.
 */
export function reReviewDelta(pr: PrState, roundNumber?: number) {
  const n = roundNumber ?? pr.rounds.length;
  const cur = pr.rounds[n - 1];
  if (!cur) return { round: null, previousRound: null, reReview: [] as string[], entries: [] as DeltaEntry[] };
  const prev = pr.rounds[n - 2];
  const carry = cur.carry;
  const group = (ids: string[]) => {
    const m = new Map<string, string[]>();
    for (const id of ids) {
      const fp = pr.nodes[id].fingerprint;
      const list = m.get(fp);
      if (list) list.push(id);
      else m.set(fp, [id]);
    }
    return m;
  };
  const now = group(cur.nodeIds);
  const before = group(prev?.nodeIds ?? []);
  const entry = (fp: string, state: DeltaState, ids: string[], reason?: string): DeltaEntry => ({ fingerprint: fp, state, nodeIds: ids, title: pr.nodes[ids[0]].node.title, priority: pr.nodes[ids[0]].node.priority, ...(reason ? { reason } : {}) });
  const out: Record<DeltaState, DeltaEntry[]> = { new: [], outdated: [], persisting: [], carried: [], gone: [] };
  const reReview: string[] = [];
  for (const [fp, ids] of now) {
    let carried = false;
    let outdated: string | undefined;
    for (const id of ids) {
      const fate = carry?.entries[id]?.fate;
      if (fate === 'carried') carried = true;
      else if (fate === 'outdated' && pr.nodes[id].status !== 'superseded') {
        outdated ??= carry!.entries[id].reason ?? 'its anchored code changed';
        if (isLive(pr.nodes[id])) reReview.push(id);
      }
    }
    if (carried) out.carried.push(entry(fp, 'carried', ids));
    else if (outdated !== undefined) out.outdated.push(entry(fp, 'outdated', ids, outdated));
    else out[before.has(fp) ? 'persisting' : 'new'].push(entry(fp, before.has(fp) ? 'persisting' : 'new', ids));
  }
  for (const [fp, ids] of before) {
    if (now.has(fp)) continue;
    const reason = ids.map((id) => carry?.entries[id]?.reason).find((r) => r !== undefined);
    out.gone.push(entry(fp, 'gone', ids, reason));
  }
  return { round: cur.round, previousRound: prev?.round ?? null, reReview, entries: ORDER.flatMap((st) => out[st]) };
}

export const reReviewDeltaQuery: QueryDefinition<Input, ReviewView, ReturnType<typeof reReviewDelta>> = {
  name: 'reReviewDelta',
  description: 'Fingerprints new / outdated / persisting / carried / gone between a round and the one before it; reReview lists the outdated live nodes.',
  input,
  access: { minRole: 'viewer' },
  affects: affectsReview,
  fold: () => reviewViewFold(),
  sources: reviewSources,
  view: (s, i) => reReviewDelta(s.pr, i.round),
};
