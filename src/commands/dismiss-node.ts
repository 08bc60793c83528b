import { z } from 'zod';
import { nodeIdSchema } from '../events/catalogue/review';
import { streamIds } from '../events/envelope';
import { PrState, NodeCore, prDecisionFold } from '../review/pr-state';
import type { CommandDefinition } from './kernel';
import { parseReviewStream, reviewStreamOf, reviewTarget } from '../events/streams';
import { requireLiveNode, requireReview } from './review-target';
import { ofType } from '../events/catalogue/event-types';
import { reopenAfterFinalization } from '../review/ladder';

const input = z.object({ ...reviewTarget, nodeId: nodeIdSchema, reason: z.string().min(1, 'reason: say why the node is dismissed').max(10_000) });

/**
 * Dismisses a live node. The dismissal also leaves a low-confidence suppression fact in the workspace
 * (SPEC §5), so a later node with the same fingerprint is flagged "previously dismissed", never hidden.
 */
export const dismissNode: CommandDefinition<z.infer<typeof input>, PrState<NodeCore>> = {
  name: 'dismissNode',
  description: 'Dismiss a live review node with a reason (records a suppression fact for its fingerprint).',
  input,
  access: { minRole: 'member' },
  stream: reviewStreamOf,
  fold: prDecisionFold,
  decide(state, cmd, ctx) {
    requireReview(state, cmd);
    const node = requireLiveNode(state, cmd.nodeId, 'dismissed');
    return [{ type: 'ReviewNodeDismissed', data: { nodeId: cmd.nodeId, by: ctx.principal, role: ctx.role, reason: cmd.reason, fingerprint: node.fingerprint } }, ...reopenAfterFinalization(state.status, 'a dismissal')];
  },
  result: (events) => ({ dismissed: events.length > 0 }),
  followUps(events) {
    const target = parseReviewStream(events[0].streamId);
    return events
      .filter(ofType('ReviewNodeDismissed'))
      .map((e) => {
        const d = e.data;
        return {
          stream: streamIds.workspace(),
          events: [{ type: 'SuppressionFactRecorded', data: { fingerprint: d.fingerprint, repoId: target?.repoId, prNumber: target?.prNumber, nodeId: d.nodeId, reason: d.reason, confidence: 'low' } }],
        };
      });
  },
};
