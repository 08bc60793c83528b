import { createHash, createHmac } from 'node:crypto';
import { z } from 'zod';
import { ofType } from '../events/catalogue/event-types';
import { DomainError } from '../domain-error';
import { isHuman, principalSchema, streamIds } from '../events/envelope';
import type { OperatorConfig } from '../operator-config';
import { workspaceFold, WorkspaceState } from '../workspaces/workspace-state';
import { assertMayIssueToken } from '../workspaces/provisioning';
import { roleSchema } from '../events/roles';
import type { CommandDefinition } from './kernel';

export const hashToken = (token: string): string => createHash('sha256').update(token).digest('hex');

/** Deterministic in (server key, workspace, idempotency key): a replayed issue returns the same token. */
export function deriveToken(serverKey: Buffer, workspaceId: string, idempotencyKey: string): { token: string; tokenId: string; tokenHash: string } {
  const tokenId = createHmac('sha256', serverKey).update(`token-id/${workspaceId}/${idempotencyKey}`).digest('hex').slice(0, 16);
  const secret = createHmac('sha256', serverKey).update(`token-secret/${workspaceId}/${idempotencyKey}`).digest('base64url');
  const token = `rl_${workspaceId}_${tokenId}_${secret}`;
  return { token, tokenId, tokenHash: hashToken(token) };
}

/** What a client sends to issue a token: the id and hash are the server's to derive. */
export const issueTokenRequestSchema = z.object({
  principal: principalSchema,
  role: roleSchema,
  label: z.string().max(200).optional(),
});

const input = z.object({
  /** Derived by the server (Ledger's issueToken entry step); clients call `issueToken` without these. */
  tokenId: z.string().regex(/^[0-9a-f]{16}$/, 'must be 16 lowercase hex digits'),
  tokenHash: z.string().regex(/^[0-9a-f]{64}$/, 'must be a sha256 hex digest'),
  principal: principalSchema,
  role: roleSchema,
  label: z.string().max(200).optional(),
});

/**
 * With an identity provider configured, a human's credential comes only from that person's own sign-in
 * (src/security/sessions.ts): nobody — admin, owner, the local operator's CLI — mints a token that acts
 * as another human. Agent tokens stay the admins' to mint; a principal minting for itself (an owner's
 * `createWorkspace` token, the first-start owner token) is its own act. Checked by issueToken's entry
 * step in `Ledger.run`, the one way every transport reaches this command.
 */
export function assertMayMintFor(operator: Pick<OperatorConfig, 'identityProvider'> | undefined, issuer: string, principal: unknown): void {
  const idp = operator?.identityProvider;
  if (!idp || typeof principal !== 'string' || !isHuman(principal) || principal === issuer) return;
  throw new DomainError(
    'human_token_requires_sign_in',
    `principal: ${principal} is a human and this server signs humans in through ${idp.issuer}; only their own sign-in gives them a session or token (admins still mint tokens for agent:… principals)`,
    { principal },
  );
}

/**
 * Records a bearer token's hash for an existing member (src/workspaces/provisioning.ts says who may mint
 * for whom). Authorization is checked before an idempotent replay answers, so a replayed key never
 * hands a token to someone who could not mint it now.
 */
export const issueToken: CommandDefinition<z.infer<typeof input>, WorkspaceState> = {
  name: 'issueToken',
  description: 'Issue a bearer API token for a principal with a workspace role; the secret is returned once, only its hash is stored.',
  input,
  access: { minRole: 'admin' },
  stream: () => streamIds.workspace(),
  fold: workspaceFold,
  authorize(state, cmd, ctx) {
    assertMayIssueToken(ctx, state.members, cmd.principal, cmd.role);
  },
  decide(state, cmd, ctx) {
    assertMayIssueToken(ctx, state.members, cmd.principal, cmd.role);
    if (state.tokens[cmd.tokenId]) throw new DomainError('token_exists', `tokenId: ${cmd.tokenId} already exists`);
    return [{ type: 'ApiTokenIssued', data: { tokenId: cmd.tokenId, tokenHash: cmd.tokenHash, principal: cmd.principal, role: cmd.role, label: cmd.label } }];
  },
  result: (events) => {
    const d = events.find(ofType('ApiTokenIssued'))!.data;
    return { tokenId: d.tokenId, principal: d.principal, role: d.role, label: d.label };
  },
};
