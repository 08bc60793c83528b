import { createHash } from 'node:crypto';
import { DomainError } from '../domain-error';
import type { GitRepo } from '../git/repo';
import { currentRound, type PrState } from '../review/pr-state';

/**
 * The base or head PNG of one snapshot of the reviewed head's computation. Committed goldens are blobs
 * of the repo (the snapshot id is the repo path), so they are read back at the base/head commit and
 * served only if their sha256 is the hash the computation recorded — what the human sees is exactly
 * what was diffed and what an approval will be keyed by.
 */
export async function snapshotImage(pr: PrState, side: 'base' | 'head', snapshotId: string, withRepo: <T>(read: (repo: GitRepo) => Promise<T>) => Promise<T>): Promise<Buffer> {
  const round = currentRound(pr);
  const computed = round ? pr.computes[round.headSha] : undefined;
  if (!round || !computed) throw new DomainError('not_computed', 'the review has no computation for its reviewed head');
  const snap = computed.visual.snapshots.find((s) => s.snapshotId === snapshotId);
  if (!snap) throw new DomainError('unknown_snapshot', `id: "${snapshotId.slice(0, 200)}" is not a snapshot of the computation at ${round.headSha.slice(0, 12)}`);
  const expected = side === 'base' ? snap.baseHash : snap.headHash;
  if (!expected) throw new DomainError('image_not_found', `id: "${snapshotId.slice(0, 200)}" has no ${side} image (${snap.state})`);
  if (snap.harness !== 'goldens') {
    throw new DomainError('image_not_stored', `id: ${snap.harness} images are rendered in a worktree and not kept; only the diff image is stored`);
  }
  const commit = side === 'base' ? computed.baseSha : round.headSha;
  const png = await withRepo((repo) => repo.readFileAt(commit, snapshotId));
  if (!png) throw new DomainError('image_not_found', `id: "${snapshotId.slice(0, 200)}" is not in ${commit.slice(0, 12)}`);
  if (createHash('sha256').update(png).digest('hex') !== expected) {
    throw new DomainError('image_mismatch', `id: the ${side} image at ${commit.slice(0, 12)} is not the one the review computed`);
  }
  return png;
}
