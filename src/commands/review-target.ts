import { z } from 'zod';
import { DomainError, type ErrorCode } from '../domain-error';
import { prNumberSchema, repoIdSchema } from '../events/catalogue/review';
import { streamIds } from '../events/envelope';
import { workspaceFold, WorkspaceState } from '../projections/workspace-state';
import { currentRound, PrState, prFold } from '../review/pr-state';
import { activeRules, Rules } from '../rules/rules';
import type { WorkspaceHandle } from '../workspaces/registry';
import { CommandExecutor } from './kernel';

/** Every review command names its PR the same way: one code path from (repo, number) to the review stream (SPEC §10). */
export const reviewTarget = { repoId: repoIdSchema, prNumber: prNumberSchema };
export const reviewTargetSchema = z.object(reviewTarget);
export const reviewStreamOf = (t: { repoId: string; prNumber: number }): string => streamIds.pr(t.repoId, t.prNumber);

/** Parses `pr-<repoId>-<number>` back (repo ids may contain "-", the number never does). */
export function parseReviewStream(streamId: string): { repoId: string; prNumber: number } | null {
  const m = /^pr-(.+)-(\d+)$/.exec(streamId);
  return m ? { repoId: m[1], prNumber: Number(m[2]) } : null;
}

// Folds read at the edge reuse the kernel's per-workspace cache (keyed by fold), so they cost only the tail.
const reader = new CommandExecutor();

export async function loadWorkspaceState(ws: WorkspaceHandle): Promise<WorkspaceState> {
  return (await reader.load(workspaceFold, ws, streamIds.workspace())).state;
}

export async function loadActiveRules(ws: WorkspaceHandle): Promise<Rules> {
  return activeRules((await loadWorkspaceState(ws)).rulesDocument);
}

export async function loadPrState(ws: WorkspaceHandle, streamId: string): Promise<PrState> {
  return (await reader.load(prFold, ws, streamId)).state;
}

export function requireReview(s: PrState, t: { repoId: string; prNumber: number }): void {
  if (!s.exists) throw new DomainError('review_not_found', `prNumber: no review has been requested for ${t.repoId}#${t.prNumber}`, { repoId: t.repoId, prNumber: t.prNumber });
}

export function requireNode(s: PrState, nodeId: string) {
  const n = s.nodes[nodeId];
  if (!n) throw new DomainError('node_not_found', `nodeId: "${nodeId}" is not a node of this review`, { nodeId });
  return n;
}

/** Confirm, dismiss and resolve act on live nodes only: a closed node stays closed. */
export function requireLiveNode(s: PrState, nodeId: string, act: string) {
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
export function requireComputation(s: PrState, t: { repoId: string; prNumber: number; headSha?: string }, code: ErrorCode, beforeWhat: string) {
  requireReview(s, t);
  const headSha = t.headSha ?? currentRound(s)!.headSha;
  const computed = s.computes[headSha];
  if (!computed) throw new DomainError(code, `headSha: the review has no computation for ${headSha}; compute it before ${beforeWhat}`, { headSha });
  return { headSha, computed };
}
