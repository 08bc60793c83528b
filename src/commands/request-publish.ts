import { z } from 'zod';
import { publishSelectionSchema } from '../events/catalogue/review';
import { assertApproverExists, assertPublishable, loadPublishState, publishResult } from '../publish/run';
import { PublishState, publishFold } from '../publish/publish-state';
import type { CommandDefinition } from './kernel';
import { reviewStreamOf, reviewTarget } from '../events/streams';

const input = z.object({
  ...reviewTarget,
  /** Agents publish peer-confirmed findings unless they ask for all open ones. */
  selection: publishSelectionSchema.default('consensus'),
  approveOnShip: z.boolean().default(false),
});
type Input = z.infer<typeof input>;

/**
 * Asks for the review to be published; nothing is posted until a human member approves the request
 * (`approvePublish`). Refused when the workspace has no human who could approve it (fail closed).
 */
export const requestPublish: CommandDefinition<Input, PublishState> = {
  name: 'requestPublish',
  description: 'Request that the review be published to GitHub; a human member must approve the request before anything is posted.',
  input,
  access: { minRole: 'member' },
  stream: reviewStreamOf,
  fold: publishFold,
  async prepare(cmd, env) {
    assertPublishable(await loadPublishState(env.workspace, cmd), cmd);
    await assertApproverExists(env.workspace, env.principal);
    return cmd;
  },
  decide(state, cmd, ctx) {
    assertPublishable(state, cmd);
    return [
      {
        type: 'PublishRequested',
        data: { requestId: `p${state.requestCount + 1}`, selection: cmd.selection, approveOnShip: cmd.approveOnShip, needsApproval: true, by: ctx.principal, role: ctx.role },
      },
    ];
  },
  result: (events) => publishResult(events),
};
