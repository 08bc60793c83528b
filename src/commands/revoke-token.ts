import { z } from 'zod';
import { DomainError } from '../domain-error';
import { streamIds } from '../events/envelope';
import { workspaceFold, WorkspaceState } from '../workspaces/workspace-state';
import { assertManages } from '../workspaces/provisioning';
import type { Principal } from '../events/envelope';
import type { CommandDefinition } from './kernel';

const input = z.object({ tokenId: z.string().regex(/^[0-9a-f]{16}$/, 'must be 16 lowercase hex digits') });

/**
 * Revokes a token at once (the next call presenting it is refused, its open subscriptions end). Revoking
 * twice records nothing. Nobody revokes the tokens of a member above their own role.
 */
export const revokeToken: CommandDefinition<z.infer<typeof input>, WorkspaceState> = {
  name: 'revokeToken',
  description: 'Revoke a bearer API token by its id.',
  input,
  access: { minRole: 'admin' },
  stream: () => streamIds.workspace(),
  fold: workspaceFold,
  decide(state, cmd, ctx) {
    const token = state.tokens[cmd.tokenId];
    if (!token) throw new DomainError('unknown_token', `tokenId: ${cmd.tokenId} was never issued in this workspace`);
    assertManages(ctx, token.principal as Principal, state.members[token.principal] ?? token.role);
    if (token.revoked) return [];
    return [{ type: 'ApiTokenRevoked', data: { tokenId: cmd.tokenId } }];
  },
  result: () => ({ revoked: true }),
};
