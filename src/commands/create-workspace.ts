import { z } from 'zod';
import { ofType } from '../events/catalogue/event-types';
import { DomainError } from '../domain-error';
import { reviewLevelSchema, workspaceIdSchema } from '../events/catalogue/workspace';
import { streamIds } from '../events/envelope';
import { workspaceFold, WorkspaceState } from '../workspaces/workspace-state';
import type { CommandDefinition } from './kernel';
import { assertMayHoldRole } from '../workspaces/provisioning';

const input = z.object({
  workspaceId: workspaceIdSchema,
  name: z.string().min(1).max(200).optional(),
  defaultLevel: reviewLevelSchema.default('balanced'),
});

/** Creates a workspace; its creator becomes the owner. Creating it again with the same key is a replay. */
export const createWorkspace: CommandDefinition<z.infer<typeof input>, WorkspaceState> = {
  name: 'createWorkspace',
  description: 'Create a workspace (a tenant with its own store); the caller becomes its owner.',
  input,
  access: { minRole: 'owner' },
  stream: () => streamIds.workspace(),
  fold: workspaceFold,
  decide(state, cmd, ctx) {
    // Its creator becomes its owner, and agents never hold owner (SPEC §16).
    assertMayHoldRole(ctx.principal, 'owner', 'principal');
    if (state.created) throw new DomainError('workspace_exists', `workspaceId: "${cmd.workspaceId}" already exists`);
    return [
      { type: 'WorkspaceCreated', data: { workspaceId: cmd.workspaceId, name: cmd.name ?? cmd.workspaceId, defaultLevel: cmd.defaultLevel } },
      { type: 'MemberAdded', data: { principal: ctx.principal, role: 'owner' } },
    ];
  },
  result: (events) => ({ workspaceId: events.find(ofType('WorkspaceCreated'))!.data.workspaceId }),
};
