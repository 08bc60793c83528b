import { z } from 'zod';
import { DomainError } from '../domain-error';
import { principalSchema, streamIds } from '../events/envelope';
import { workspaceFold, WorkspaceState } from '../workspaces/workspace-state';
import { assertManages, assertMayGrant } from '../workspaces/provisioning';
import { roleSchema } from '../events/roles';
import type { CommandDefinition } from './kernel';
import type { Frozen } from '../events/kernel-types';

const memberInput = z.object({ principal: principalSchema, role: roleSchema });
const removeInput = z.object({ principal: principalSchema });

const owners = (s: Frozen<WorkspaceState>): string[] => Object.entries(s.members).filter(([, r]) => r === 'owner').map(([p]) => p);

/** Adds a member with a role (members/tokens are managed by admin and owner, SPEC §16). */
export const addMember: CommandDefinition<z.infer<typeof memberInput>, WorkspaceState> = {
  name: 'addMember',
  description: 'Add a principal to the workspace with a role.',
  input: memberInput,
  access: { minRole: 'admin' },
  stream: () => streamIds.workspace(),
  fold: workspaceFold,
  authorize(_state, cmd, ctx) {
    assertMayGrant(ctx, cmd.principal, cmd.role, 'role');
  },
  decide(state, cmd, ctx) {
    assertMayGrant(ctx, cmd.principal, cmd.role, 'role');
    if (state.members[cmd.principal] !== undefined) throw new DomainError('member_exists', `principal: ${cmd.principal} is already a member (${state.members[cmd.principal]})`);
    return [{ type: 'MemberAdded', data: { principal: cmd.principal, role: cmd.role } }];
  },
};

/** Changes a member's role; the last owner cannot be demoted. */
export const changeMemberRole: CommandDefinition<z.infer<typeof memberInput>, WorkspaceState> = {
  name: 'changeMemberRole',
  description: "Change a member's role (caps every token issued to that principal).",
  input: memberInput,
  access: { minRole: 'admin' },
  stream: () => streamIds.workspace(),
  fold: workspaceFold,
  authorize(_state, cmd, ctx) {
    assertMayGrant(ctx, cmd.principal, cmd.role, 'role');
  },
  decide(state, cmd, ctx) {
    const from = state.members[cmd.principal];
    if (from === undefined) throw new DomainError('not_a_member', `principal: ${cmd.principal} is not a member`);
    assertManages(ctx, cmd.principal, from);
    assertMayGrant(ctx, cmd.principal, cmd.role, 'role');
    if (from === cmd.role) return [];
    if (from === 'owner' && owners(state).length === 1) throw new DomainError('last_owner', `principal: ${cmd.principal} is the last owner`);
    return [{ type: 'MemberRoleChanged', data: { principal: cmd.principal, from, to: cmd.role } }];
  },
};

/** Removes a member; the last owner cannot be removed. */
export const removeMember: CommandDefinition<z.infer<typeof removeInput>, WorkspaceState> = {
  name: 'removeMember',
  description: 'Remove a principal from the workspace.',
  input: removeInput,
  access: { minRole: 'admin' },
  stream: () => streamIds.workspace(),
  fold: workspaceFold,
  decide(state, cmd, ctx) {
    const role = state.members[cmd.principal];
    if (role === undefined) return [];
    assertManages(ctx, cmd.principal, role);
    if (role === 'owner' && owners(state).length === 1) throw new DomainError('last_owner', `principal: ${cmd.principal} is the last owner`);
    return [{ type: 'MemberRemoved', data: { principal: cmd.principal } }];
  },
};
