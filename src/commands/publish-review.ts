import { z } from 'zod';
import { publishSelectionSchema } from '../events/catalogue/review';
import { isHuman } from '../events/envelope';
import { assertApproverExists, assertPublishable, executePublish, loadPublishState, PreparedPublish, publishOutcomeEvents, publishResult } from '../publish/run';
import { PublishState, publishFold } from '../publish/publish-state';
import type { CommandDefinition } from './kernel';
import type { PendingEvent } from '../events/kernel-types';
import { reviewStreamOf, reviewTarget } from '../events/streams';

/** Ship → APPROVE by default from the button; false leaves Ship as COMMENT. */
const APPROVE_ON_SHIP_DEFAULT = true;

/**
 * SPEC §14 spells the option `approve_on_ship`; the API has always said `approveOnShip`. Both are
 * accepted and folded into `approveOnShip`. The schema stays a plain object (checks, not a preprocess
 * pipe) because the MCP tool reshapes the object's fields and shows their defaults.
 */
const input = z
  .object({
    ...reviewTarget,
    /** The button publishes every open finding; the MCP tool asks for `consensus` (peer-confirmed only). */
    selection: publishSelectionSchema.default('all_open'),
    approveOnShip: z.boolean().describe('Ship → APPROVE when true; false leaves Ship as COMMENT.').optional(),
    approve_on_ship: z.boolean().describe('The SPEC §14 spelling of approveOnShip (give one of the two).').optional(),
  })
  .superRefine((v, ctx) => {
    if (v.approveOnShip !== undefined && v.approve_on_ship !== undefined && v.approveOnShip !== v.approve_on_ship) {
      ctx.addIssue({
        code: 'custom',
        path: ['approve_on_ship'],
        message: `approve_on_ship (${v.approve_on_ship}) and approveOnShip (${v.approveOnShip}) are two spellings of one option and disagree; give one of them`,
      });
    }
  })
  .overwrite(({ approve_on_ship, ...v }) => ({ ...v, approveOnShip: v.approveOnShip ?? approve_on_ship ?? APPROVE_ON_SHIP_DEFAULT }));
type Input = Omit<z.infer<typeof input>, 'approve_on_ship' | 'approveOnShip'> & { approveOnShip: boolean };
type Prepared = Input & ({ mode: 'request' } | { mode: 'publish'; prepared: PreparedPublish });

/**
 * Publish to GitHub (SPEC §14), a guarded action: a human member or above publishes at once (the
 * review is posted under the server's identity, the presser is recorded); an agent's call records a
 * publish request that waits for a human's `approvePublish`, and is refused when no human could
 * ever approve it (fail closed).
 */
export const publish: CommandDefinition<Input, PublishState, Prepared> = {
  name: 'publish',
  description:
    'Publish the review to GitHub as one review: inline comments on verified anchors, the rest in the body; verdict → event. A human member publishes directly; an agent records a request that waits for human approval.',
  // The overwrite always sets approveOnShip and drops the other spelling.
  input: input as z.ZodType<Input>,
  access: { minRole: 'member' },
  stream: reviewStreamOf,
  fold: publishFold,
  async prepare(cmd, env) {
    if (!isHuman(env.principal)) {
      assertPublishable(await loadPublishState(env.workspace, cmd), cmd);
      await assertApproverExists(env.workspace, env.principal);
      return { ...cmd, mode: 'request' };
    }
    return { ...cmd, mode: 'publish', prepared: await executePublish(env, cmd, cmd.selection, cmd.approveOnShip) };
  },
  decide(state, cmd, ctx) {
    const requestId = `p${state.requestCount + 1}`;
    const requested: PendingEvent = {
      type: 'PublishRequested',
      data: { requestId, selection: cmd.selection, approveOnShip: cmd.approveOnShip, needsApproval: cmd.mode === 'request', by: ctx.principal, role: ctx.role },
    };
    if (cmd.mode === 'request') {
      assertPublishable(state, cmd);
      return [requested];
    }
    return [requested, ...publishOutcomeEvents(state, cmd.prepared, requestId, ctx, cmd)];
  },
  result: (events) => publishResult(events),
};

// The guarded pair, re-exported so the registry imports the publish commands in one line.
export { requestPublish } from './request-publish';
export { approvePublish } from './approve-publish';
