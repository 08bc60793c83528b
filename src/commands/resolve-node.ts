import { z } from 'zod';
import { nodeIdSchema } from '../events/catalogue/review';
import { PrState, NodeCore, prDecisionFold } from '../review/pr-state';
import type { CommandDefinition } from './kernel';
import { requireLiveNode, requireReview } from './review-target';
import { reviewStreamOf, reviewTarget } from '../events/streams';
import { reopenAfterFinalization } from '../review/ladder';

const input = z.object({ ...reviewTarget, nodeId: nodeIdSchema, reason: z.string().min(1, 'reason: say how the node was resolved').max(10_000) });

/** Marks a live node resolved (fixed, answered, ticketed). */
export const resolveNode: CommandDefinition<z.infer<typeof input>, PrState<NodeCore>> = {
  name: 'resolveNode',
  description: 'Resolve a live review node with a reason.',
  input,
  access: { minRole: 'member' },
  stream: reviewStreamOf,
  fold: prDecisionFold,
  decide(state, cmd, ctx) {
    requireReview(state, cmd);
    requireLiveNode(state, cmd.nodeId, 'resolved');
    return [{ type: 'ReviewNodeResolved', data: { nodeId: cmd.nodeId, by: ctx.principal, role: ctx.role, reason: cmd.reason } }, ...reopenAfterFinalization(state.status, 'a resolution')];
  },
  result: (events) => ({ resolved: events.length > 0 }),
};
