import { approvalKeyOf, visualGate } from '../../axes/visual/gate';
import type { QueryDefinition } from './query';
import { computationFor } from './api-contract';
import { affectsReview, reviewQueryInput, ReviewQueryInput, reviewSources, ReviewView, reviewViewFold } from './review-fold';

/**
 * SPEC §12 for the page: the snapshots computed for the reviewed head with their state (an approved
 * change reads `approved`), content hashes (the diff image is served from its hash), changed-pixel ratio
 * and who approved; plus the visual gate — the same `visualGate` the verdict folds in.
 */
export function visualView(s: ReviewView) {
  const pr = s.pr;
  const computed = computationFor(s);
  if (!computed) return { computed: false as const, headSha: null, status: null, reason: 'the review has not been computed yet', snapshots: [], pending: [] };
  const approvedKeys = new Set(Object.keys(pr.visualApprovals));
  const gate = visualGate(computed.c.visual, approvedKeys);
  const snapshots = gate.snapshots.map((snap) => {
    const key = approvalKeyOf(snap);
    const approval = key ? pr.visualApprovals[key] : undefined;
    return {
      ...snap,
      displayState: snap.approved ? ('approved' as const) : snap.state,
      needsApproval: !snap.approved && (snap.error !== undefined || snap.state === 'changed' || snap.state === 'removed') && key !== undefined,
      approval: snap.approved && approval ? { by: approval.by, position: approval.at } : null,
    };
  });
  return { computed: true as const, headSha: computed.headSha, baseSha: computed.c.baseSha, status: gate.status, reason: gate.reason ?? null, snapshots, pending: gate.pending };
}

export const visualQuery: QueryDefinition<ReviewQueryInput, ReviewView, ReturnType<typeof visualView>> = {
  name: 'visual',
  description: 'Visual snapshots of the reviewed head (state, hashes of base/head/diff images, changed-pixel ratio, approval) and the visual gate.',
  input: reviewQueryInput,
  access: { minRole: 'viewer' },
  affects: affectsReview,
  fold: () => reviewViewFold(),
  sources: reviewSources,
  view: (s) => visualView(s),
};
