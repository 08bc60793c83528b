import { z } from 'zod';
import { DomainError } from '../domain-error';
import { nodeIdSchema } from '../events/catalogue/review';
import { PrState, NodeCore, prDecisionFold } from '../review/pr-state';
import type { CommandDefinition } from './kernel';
import { requireLiveNode, requireReview } from './review-target';
import { reviewStreamOf, reviewTarget } from '../events/streams';
import { reopenAfterFinalization } from '../review/ladder';

const input = z.object({ ...reviewTarget, nodeId: nodeIdSchema, note: z.string().max(4000).optional() });

/**
 * A peer confirms a node (SPEC §5). First of the three no-self-confirm checks: the author can never
 * confirm its own node. Confirming twice is a no-op.
 */
export const confirmNode: CommandDefinition<z.infer<typeof input>, PrState<NodeCore>> = {
  name: 'confirmNode',
  description: "Confirm a peer's review node; it becomes consensus-ready. Authors cannot confirm their own nodes.",
  input,
  access: { minRole: 'member' },
  stream: reviewStreamOf,
  fold: prDecisionFold,
  decide(state, cmd, ctx) {
    requireReview(state, cmd);
    const node = requireLiveNode(state, cmd.nodeId, 'confirmed');
    if (node.author === ctx.principal) {
      throw new DomainError('self_confirmation_refused', `nodeId: "${cmd.nodeId}" was filed by ${ctx.principal}; a node needs a different principal to confirm it`, { nodeId: cmd.nodeId, principal: ctx.principal });
    }
    if (node.confirmations.some((c) => c.by === ctx.principal)) return [];
    return [{ type: 'ReviewNodeConfirmed', data: { nodeId: cmd.nodeId, by: ctx.principal, role: ctx.role, note: cmd.note } }, ...reopenAfterFinalization(state.status, 'a confirmation')];
  },
  result: (events) => ({ confirmed: events.length > 0 }),
};
