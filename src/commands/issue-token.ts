import { z } from 'zod';
import { DomainError } from '../domain-error';
import { principalSchema, streamIds } from '../events/envelope';
import { workspaceFold, WorkspaceState } from '../projections/workspace-state';
import { roleAtLeast, roleSchema } from '../security/roles';
import type { CommandDefinition } from './kernel';

const input = z.object({
  /** Derived by the server (src/security/tokens.ts); clients call the `issueToken` RPC without these. */
  tokenId: z.string().regex(/^[0-9a-f]{16}$/, 'must be 16 lowercase hex digits'),
  tokenHash: z.string().regex(/^[0-9a-f]{64}$/, 'must be a sha256 hex digest'),
  principal: principalSchema,
  role: roleSchema,
  label: z.string().max(200).optional(),
});

/** Records a bearer token's hash for a principal and role. Nobody can issue a role above their own. */
export const issueToken: CommandDefinition<z.infer<typeof input>, WorkspaceState> = {
  name: 'issueToken',
  description: 'Issue a bearer API token for a principal with a workspace role; the secret is returned once, only its hash is stored.',
  input,
  access: { minRole: 'admin' },
  stream: () => streamIds.workspace(),
  fold: workspaceFold,
  decide(state, cmd, ctx) {
    if (!roleAtLeast(ctx.role, cmd.role)) throw new DomainError('forbidden', `role: a ${ctx.role} cannot issue a ${cmd.role} token`, 'forbidden');
    if (state.tokens[cmd.tokenId]) throw new DomainError('token_exists', `tokenId: ${cmd.tokenId} already exists`, 'conflict');
    return [{ type: 'ApiTokenIssued', data: { tokenId: cmd.tokenId, tokenHash: cmd.tokenHash, principal: cmd.principal, role: cmd.role, label: cmd.label } }];
  },
  result: (events) => {
    const d = events[0].data as { tokenId: string; principal: string; role: string; label?: string };
    return { tokenId: d.tokenId, principal: d.principal, role: d.role, label: d.label };
  },
};
