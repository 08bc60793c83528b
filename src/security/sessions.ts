import { z } from 'zod';
import { DomainError } from '../domain-error';
import { ofType } from '../events/catalogue/event-types';
import { isHuman, principalSchema, streamIds, type Principal } from '../events/envelope';
import { newUuidV7 } from '../events/ids';
import type { CommandDefinition, Via } from '../commands/kernel';
import type { Ledger } from '../ledger';
import { workspaceFold, type WorkspaceState } from '../workspaces/workspace-state';
import { deriveToken } from '../commands/issue-token';
import { loadServerKey } from '../workspaces/server-key';
import type { Frozen } from '../events/kernel-types';

/**
 * Sessions and CLI sign-in tokens: a bearer token (`rl_…`, the same kind every transport authenticates)
 * minted by the person's own sign-in at the operator's identity provider, never by anyone else. It is an
 * `ApiTokenIssued` with `signIn` {issuer, subject, expiresAt, method}: revoked like any token (logout,
 * `revokeToken`), ended by member removal like any token (authenticate and the access guard read the
 * membership), and refused once `expiresAt` passes (`session_expired`).
 *
 * The commands here are not in COMMANDS, so no RPC/MCP method reaches them: only the sign-in routes
 * (src/web/sign-in.module.ts) and `review-ledger login` run them, after the provider vouched for the
 * identity.
 */

export interface SignInIdentity {
  /** The provider's issuer (OpenID Connect `iss`; for GitHub its web origin). */
  issuer: string;
  /** The provider's stable subject (OpenID Connect `sub`; for GitHub the numeric user id). */
  subject: string;
  /** Principals this identity may be, in order: `user:<login>`, `user:<email>`, `user:<sub>`. */
  candidates: Principal[];
}

const signInSchema = z.object({ issuer: z.string().min(1).max(2000), subject: z.string().min(1).max(500), expiresAt: z.string().max(40), method: z.enum(['code', 'device']) });

const startInput = z.object({
  tokenId: z.string().regex(/^[0-9a-f]{16}$/),
  tokenHash: z.string().regex(/^[0-9a-f]{64}$/),
  principal: principalSchema,
  label: z.string().max(200).optional(),
  signIn: signInSchema,
});

function assertMayStart(state: Frozen<WorkspaceState>, cmd: z.infer<typeof startInput>, actor: Principal): void {
  if (actor !== cmd.principal) throw new DomainError('human_token_requires_sign_in', `principal: a session for ${cmd.principal} is started only by ${cmd.principal}'s own sign-in`);
  if (!isHuman(cmd.principal)) throw new DomainError('forbidden', `principal: ${cmd.principal} is not a human; agents hold tokens an admin mints`);
  if (state.members[cmd.principal] === undefined) throw new DomainError('not_a_member', `principal: ${cmd.principal} is not a member of this workspace; an admin invites it (addMember) first`);
  const bound = state.identities[cmd.principal];
  if (bound && (bound.issuer !== cmd.signIn.issuer || bound.subject !== cmd.signIn.subject)) {
    throw new DomainError('identity_bound', `principal: ${cmd.principal} signed in first as subject ${bound.subject} of ${bound.issuer}; that binding is fixed, this sign-in is ${cmd.signIn.subject} of ${cmd.signIn.issuer}`, { principal: cmd.principal });
  }
}

/** Records the session token of a person who just signed in, with their membership's role. */
export const startSession: CommandDefinition<z.infer<typeof startInput>, WorkspaceState> = {
  name: 'startSession',
  description: "Record a sign-in session (or CLI sign-in token) for the signed-in person; only the sign-in routes run it.",
  input: startInput,
  access: { minRole: 'viewer' },
  stream: () => streamIds.workspace(),
  fold: workspaceFold,
  authorize: (state, cmd, ctx) => assertMayStart(state, cmd, ctx.principal),
  decide(state, cmd, ctx) {
    assertMayStart(state, cmd, ctx.principal);
    if (state.tokens[cmd.tokenId]) throw new DomainError('token_exists', `tokenId: ${cmd.tokenId} already exists`);
    return [{ type: 'ApiTokenIssued', data: { tokenId: cmd.tokenId, tokenHash: cmd.tokenHash, principal: cmd.principal, role: state.members[cmd.principal], label: cmd.label, signIn: cmd.signIn } }];
  },
  result: (events) => {
    const d = events.find(ofType('ApiTokenIssued'))!.data;
    return { tokenId: d.tokenId, principal: d.principal, role: d.role, expiresAt: d.signIn?.expiresAt };
  },
};

const endInput = z.object({ tokenId: z.string().regex(/^[0-9a-f]{16}$/) });

/** Logout: the session's own holder revokes it (no admin role needed, and only its own session). */
export const endSession: CommandDefinition<z.infer<typeof endInput>, WorkspaceState> = {
  name: 'endSession',
  description: 'Revoke the caller’s own sign-in session (logout).',
  input: endInput,
  access: { minRole: 'viewer' },
  stream: () => streamIds.workspace(),
  fold: workspaceFold,
  decide(state, cmd, ctx) {
    const t = state.tokens[cmd.tokenId];
    if (!t || !t.signIn || t.principal !== ctx.principal) throw new DomainError('unknown_token', `tokenId: ${cmd.tokenId} is not a session of ${ctx.principal}`);
    return t.revoked ? [] : [{ type: 'ApiTokenRevoked', data: { tokenId: cmd.tokenId } }];
  },
  result: (_events, prepared) => ({ tokenId: (prepared as { tokenId: string } | undefined)?.tokenId ?? null, ended: true }),
};

/**
 * The principal a signed-in identity acts as in a workspace: the member it is already bound to, else the
 * first candidate that is a member and not bound to another identity. Refused with the candidates named
 * when none is a member (an admin invites `user:<login>` or `user:<email>` first).
 */
export function principalFor(state: WorkspaceState, workspaceId: string, who: SignInIdentity): Principal {
  for (const [p, id] of Object.entries(state.identities)) {
    if (id.issuer === who.issuer && id.subject === who.subject && state.members[p] !== undefined) return p as Principal;
  }
  let boundElsewhere: Principal | null = null;
  for (const c of who.candidates) {
    if (state.members[c] === undefined) continue;
    const bound = state.identities[c];
    if (!bound) return c;
    boundElsewhere ??= c;
  }
  if (boundElsewhere) {
    const b = state.identities[boundElsewhere];
    throw new DomainError('identity_bound', `principal: ${boundElsewhere} is bound to subject ${b.subject} of ${b.issuer} (its first sign-in); ${who.subject} cannot act as it`, { principal: boundElsewhere });
  }
  throw new DomainError('not_a_member', `sign-in: none of ${who.candidates.join(', ')} is a member of workspace "${workspaceId}"; an admin invites one of them (addMember) first`, { candidates: who.candidates });
}

export interface OpenedSession {
  token: string;
  tokenId: string;
  principal: Principal;
  expiresAt: string;
}

/** Mints the session token of `who` in `workspaceId` (after the provider vouched for `who`). */
export async function openSession(ledger: Ledger, workspaceId: string, who: SignInIdentity, method: 'code' | 'device', via: Via): Promise<OpenedSession> {
  const ws = await ledger.workspace(workspaceId);
  const { state } = await ledger.executor.load(workspaceFold, ws, 'workspace');
  const principal = principalFor(state, workspaceId, who);
  const key = newUuidV7();
  const derived = deriveToken(loadServerKey(ledger.config.dataDir, ledger.operator.serverKeyFile), ws.id, key);
  const expiresAt = new Date(ledger.clock().getTime() + ledger.operator.sessionTtlSeconds * 1000).toISOString();
  await ledger.executor.execute(startSession, ws, { principal, role: state.members[principal], idempotencyKey: key, via }, {
    tokenId: derived.tokenId,
    tokenHash: derived.tokenHash,
    principal,
    label: method === 'code' ? 'Review page sign-in' : 'review-ledger login',
    signIn: { issuer: who.issuer, subject: who.subject, expiresAt, method },
  });
  return { token: derived.token, tokenId: derived.tokenId, principal, expiresAt };
}
