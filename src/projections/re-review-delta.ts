import { z } from 'zod';
import { reviewTarget } from '../commands/review-target';
import type { PrState } from '../review/pr-state';
import type { QueryDefinition } from './query';
import { affectsReview, reviewSources, ReviewView, reviewViewFold } from './review-fold';

const input = z.object({ ...reviewTarget, round: z.number().int().min(1).optional() });
type Input = z.infer<typeof input>;

export interface DeltaEntry {
  fingerprint: string;
  state: 'new' | 'persisting' | 'gone';
  /** Nodes carrying the fingerprint in round N (new, persisting) or in round N−1 (gone). */
  nodeIds: string[];
  title: string;
  priority: string;
}

/**
 * SPEC §5 re-review delta: round N against round N−1 by fingerprint. Every node filed in a round counts,
 * whatever its status, so a finding fixed (resolved) in N−1 and not re-filed in N shows as gone.
 * Ordered new, persisting, gone: what changed surfaces first.
 */
export function reReviewDelta(pr: PrState, roundNumber?: number) {
  const n = roundNumber ?? pr.rounds.length;
  const cur = pr.rounds[n - 1];
  if (!cur) return { round: null, previousRound: null, entries: [] as DeltaEntry[] };
  const prev = pr.rounds[n - 2];
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
  const entry = (fp: string, state: DeltaEntry['state'], ids: string[]): DeltaEntry => ({ fingerprint: fp, state, nodeIds: ids, title: pr.nodes[ids[0]].node.title, priority: pr.nodes[ids[0]].node.priority });
  const fresh: DeltaEntry[] = [];
  const persisting: DeltaEntry[] = [];
  const gone: DeltaEntry[] = [];
  for (const [fp, ids] of now) (before.has(fp) ? persisting : fresh).push(entry(fp, before.has(fp) ? 'persisting' : 'new', ids));
  for (const [fp, ids] of before) if (!now.has(fp)) gone.push(entry(fp, 'gone', ids));
  return { round: cur.round, previousRound: prev?.round ?? null, entries: [...fresh, ...persisting, ...gone] };
}

export const reReviewDeltaQuery: QueryDefinition<Input, ReviewView> = {
  name: 'reReviewDelta',
  description: 'Fingerprints new / persisting / gone between a round and the one before it.',
  input,
  access: { minRole: 'viewer' },
  affects: affectsReview,
  fold: () => reviewViewFold(),
  sources: reviewSources,
  view: (s, i) => reReviewDelta(s.pr, i.round),
};
