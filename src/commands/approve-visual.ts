import { z } from 'zod';
import { ofType } from '../events/catalogue/event-types';
import { approvalKeyOf } from '../axes/visual/gate';
import { DomainError } from '../domain-error';
import { shaSchema } from '../events/catalogue/review';
import { PrState, NodeCore, prDecisionFold } from '../review/pr-state';
import type { CommandDefinition } from './kernel';
import { requireComputation } from './review-target';
import { reviewStreamOf, reviewTarget } from '../events/streams';
import { reopenAfterFinalization } from '../review/ladder';

const input = z.object({
  ...reviewTarget,
  snapshotId: z.string().min(1, 'snapshotId must not be empty').max(500, 'snapshotId must be at most 500 characters'),
  /** The head whose computed snapshot is approved; default: the current round's head. */
  headSha: shaSchema.optional(),
});

/**
 * A human approves one visual change (SPEC §12). The approval is recorded under the content hash of
 * the head image as computed (`approvalKeyOf`), so it applies for as long as that exact image comes
 * back, across rebases and recomputes, and lapses when the image changes. The verdict reads approvals
 * directly, so approving updates the axis and the verdict at once. Approving an image already approved
 * is a no-op; approving a snapshot that holds nothing (unchanged/added) is refused, as is an unknown one.
 */
export const approveVisual: CommandDefinition<z.infer<typeof input>, PrState<NodeCore>> = {
  name: 'approveVisual',
  description: 'Approve a changed or removed visual snapshot of the computed head (human principals, member or above); keyed by the head image hash.',
  input,
  access: { minRole: 'member', humanOnly: true },
  stream: reviewStreamOf,
  fold: prDecisionFold,
  decide(state, cmd, ctx) {
    const { headSha, computed } = requireComputation(state, cmd, 'not_computed', 'approving visual changes');
    const snapshot = computed.visual.snapshots.find((s) => s.snapshotId === cmd.snapshotId);
    if (!snapshot) {
      const known = computed.visual.snapshots.map((s) => s.snapshotId);
      throw new DomainError(
        'unknown_snapshot',
        `snapshotId: "${cmd.snapshotId}" is not a visual snapshot computed for ${headSha.slice(0, 12)} (${known.length ? `known: ${known.slice(0, 20).join(', ')}` : 'it has none'})`,
        { snapshotId: cmd.snapshotId, headSha },
      );
    }
    if (snapshot.error === undefined && snapshot.state !== 'changed' && snapshot.state !== 'removed') {
      throw new DomainError('visual_approval_not_needed', `snapshotId: "${cmd.snapshotId}" is ${snapshot.state}; only changed, removed or failed snapshots need an approval`, {
        snapshotId: cmd.snapshotId,
        state: snapshot.state,
      });
    }
    const approvalKey = approvalKeyOf(snapshot);
    if (!approvalKey) {
      throw new DomainError('snapshot_not_approvable', `snapshotId: "${cmd.snapshotId}" has no image to approve (${snapshot.error ?? 'no content hash'})`, { snapshotId: cmd.snapshotId });
    }
    if (state.visualApprovals[approvalKey]) return [];
    return [{ type: 'VisualChangeApproved', data: { snapshotId: snapshot.snapshotId, approvalKey, by: ctx.principal, headSha } }, ...reopenAfterFinalization(state.status, 'a visual approval')];
  },
  result: (events) => ({ approved: events.length > 0, approvalKey: events.find(ofType('VisualChangeApproved'))?.data.approvalKey ?? null }),
};
