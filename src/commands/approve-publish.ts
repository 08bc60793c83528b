import { z } from 'zod';
import { DomainError } from '../domain-error';
import { currentRound } from '../review/pr-state';
import { executePublish, loadPublishState, PreparedPublish, publishOutcomeEvents, publishResult } from '../publish/run';
import { PublishRequestRecord, PublishState, publishFold } from '../publish/publish-state';
import type { CommandDefinition } from './kernel';
import type { PendingEvent } from '../events/kernel-types';
import { reviewStreamOf, reviewTarget } from '../events/streams';

const input = z.object({ ...reviewTarget, requestId: z.string().regex(/^p[0-9]{1,9}$/, 'requestId must look like "p<number>" as returned by a publish request') });
type Input = z.infer<typeof input>;

/** A request can be approved once, on the round it was made for, by a human other than its requester. */
function approvableRequest(s: PublishState, requestId: string, approver: string): PublishRequestRecord {
  const r = s.requests[requestId];
  if (!r) throw new DomainError('publish_request_not_found', `requestId: "${requestId}" is not a publish request of this review`, { requestId });
  if (r.status === 'published') throw new DomainError('publish_request_settled', `requestId: "${requestId}" was already published`, { requestId });
  if (!r.needsApproval) throw new DomainError('publish_request_settled', `requestId: "${requestId}" was a direct publish and needs no approval`, { requestId });
  if (r.round !== currentRound(s.pr)?.round) {
    throw new DomainError('publish_request_stale', `requestId: "${requestId}" was made on round ${r.round}; the review is now on round ${currentRound(s.pr)?.round} — request again`, { requestId });
  }
  if (r.by === approver) throw new DomainError('self_approval_refused', `requestId: "${requestId}" was requested by ${approver}; another human must approve it`, { requestId });
  return r;
}

/**
 * A human member approves an agent's publish request: the review is published now, under the server's
 * identity, with the request's selection. A failed publish leaves the request approvable again.
 */
export const approvePublish: CommandDefinition<Input, PublishState, Input & { prepared: PreparedPublish }> = {
  name: 'approvePublish',
  description: "Approve a pending publish request (human members and above): the review is published to GitHub with the request's selection.",
  input,
  access: { minRole: 'member', humanOnly: true },
  stream: reviewStreamOf,
  fold: publishFold,
  async prepare(cmd, env) {
    const request = approvableRequest(await loadPublishState(env.workspace, cmd), cmd.requestId, env.principal);
    // Checked again inside the publish lock: another approver may have published it meanwhile.
    const prepared = await executePublish(env, cmd, request.selection, request.approveOnShip, (s) => void approvableRequest(s, cmd.requestId, env.principal));
    return { ...cmd, prepared };
  },
  decide(state, cmd, ctx) {
    const r = state.requests[cmd.requestId];
    const events: PendingEvent[] = [];
    if (r && r.status === 'pending') events.push({ type: 'PublishApproved', data: { requestId: cmd.requestId, by: ctx.principal, role: ctx.role } });
    return [...events, ...publishOutcomeEvents(state, cmd.prepared, cmd.requestId, ctx, cmd)];
  },
  result: (events) => publishResult(events),
};
