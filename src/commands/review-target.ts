import { DomainError, type ErrorCode } from '../domain-error';
import { currentRound, NodeCore, PrState } from '../review/pr-state';
import type { Frozen } from '../events/kernel-types';

export function requireReview(s: Frozen<PrState<NodeCore>>, t: { repoId: string; prNumber: number }): void {
  if (!s.exists) throw new DomainError('review_not_found', `prNumber: no review has been requested for ${t.repoId}#${t.prNumber}`, { repoId: t.repoId, prNumber: t.prNumber });
}

export function requireNode<B extends NodeCore>(s: PrState<B>, nodeId: string) {
  const n = s.nodes[nodeId];
  if (!n) throw new DomainError('node_not_found', `nodeId: "${nodeId}" is not a node of this review`, { nodeId });
  return n;
}

/** Confirm, dismiss and resolve act on live nodes only: a closed node stays closed. */
export function requireLiveNode<B extends NodeCore>(s: Frozen<PrState<B>>, nodeId: string, act: string) {
  const n = requireNode(s, nodeId);
  if (n.status === 'resolved' || n.status === 'dismissed' || n.status === 'superseded') {
    throw new DomainError('node_closed', `nodeId: "${nodeId}" is already ${n.status}; it cannot be ${act}`, { nodeId, status: n.status });
  }
  return n;
}

/**
 * The computation a human decision is about: the named head's, or the current round's. Contract
 * decisions and visual approvals are refused (with `code`) until that head has been computed.
 */
export function requireComputation(s: Frozen<PrState<NodeCore>>, t: { repoId: string; prNumber: number; headSha?: string }, code: ErrorCode, beforeWhat: string) {
  requireReview(s, t);
  const headSha = t.headSha ?? currentRound(s)!.headSha;
  const computed = s.computes[headSha];
  if (!computed) throw new DomainError(code, `headSha: the review has no computation for ${headSha}; compute it before ${beforeWhat}`, { headSha });
  return { headSha, computed };
}
