import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { DomainError, validationError } from '../domain-error';
import type { Principal } from '../events/envelope';
import { principalSchema } from '../events/envelope';
import { hashToken } from '../commands/issue-token';
import { assertIdempotencyKey } from '../events/ids';
import type { CommandEnvelope, CommandOutcome } from '../commands/kernel';
import { canonicalJson } from '../events/canonical-json';
import type { Ledger } from '../ledger';
import { workspaceFold } from '../workspaces/workspace-state';
import { loadStream } from '../workspaces/load-stream';
import { WorkspaceRegistry, type WorkspaceHandle } from '../workspaces/registry';
import { loadServerKey } from '../workspaces/server-key';
import { effectiveRole } from '../workspaces/provisioning';
import { Role, roleSchema } from '../events/roles';
import { Slot } from '../slots';

/**
 * Bearer tokens: `rl_<workspaceId>_<tokenId>_<secret>`. The secret is 256 bits; only sha256(token) is
 * stored (ApiTokenIssued). Naming the workspace and the token id in the token makes the lookup one
 * cached fold of that workspace's stream plus one constant-time hash comparison — and lets a token for
 * another workspace be refused before that workspace's store is opened.
 */
const TOKEN_RE = /^rl_([a-z0-9][a-z0-9-]{0,62})_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/;

export interface ParsedToken {
  workspaceId: string;
  tokenId: string;
}

export function parseToken(token: string): ParsedToken | null {
  const m = TOKEN_RE.exec(token);
  return m ? { workspaceId: m[1], tokenId: m[2] } : null;
}

export interface Caller {
  workspace: WorkspaceHandle;
  principal: Principal;
  role: Role;
  tokenId: string;
  /** For a sign-in session or CLI sign-in token: the identity that signed in, and when it ends. */
  signIn?: { issuer: string; subject: string; expiresAt: string; method: 'code' | 'device' };
  /**
   * With `guarded`: the workspace stream revision the token was checked against, for the command's
   * CommandEnvelope.accessCheckedAt (the kernel stands behind the check at the append).
   */
  accessCheckedAt?: number;
}

export interface AuthenticateOptions {
  /**
   * The caller runs one command of this workspace through the kernel alone (Ledger.guardsAccessAtAppend):
   * where the store checks append guards, the token check may take the workspace state from the store's
   * freshness instead of reading it (PostgreSQL: no round trip), and answers `accessCheckedAt`.
   */
  guarded?: boolean;
}

/** Extracts the token from an `Authorization: Bearer …` header value. */
export function bearerFrom(header: string | string[] | undefined): string | undefined {
  const h = Array.isArray(header) ? header[0] : header;
  if (!h) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  return m ? m[1] : undefined;
}

/**
 * Resolves (workspace_id, bearer token) to a caller. Order matters: the id is validated and the token's
 * own workspace compared BEFORE the registry opens a store, and an unregistered id is refused by the
 * registry before it touches the disk.
 */
/**
 * `holds`: the request's releases; given, the workspace stays open until the caller runs them (an RPC
 * frame, an MCP tool call), else it may close once idle (WorkspaceRegistry.open).
 */
export async function authenticate(ledger: Ledger, workspaceId: unknown, token: string | undefined, holds?: Array<() => void>, options: AuthenticateOptions = {}): Promise<Caller> {
  const wid = WorkspaceRegistry.validateId(workspaceId);
  if (!token) throw new DomainError('unauthorized', 'Authorization: a bearer token is required');
  const parsed = parseToken(token);
  if (!parsed) throw new DomainError('unauthorized', 'Authorization: not a review-ledger token');
  // A catalogue lookup, not a store open: unknown ids are refused before anything touches the disk.
  if (!isRegistered(ledger, wid)) throw new DomainError('unknown_workspace', `workspace_id: "${wid}" is not a registered workspace`);
  if (parsed.workspaceId !== wid) throw new DomainError('forbidden', `workspace_id: the token is not valid for workspace "${wid}"`);
  let workspace: WorkspaceHandle;
  if (holds) {
    const acquired = await ledger.workspaces.acquire(wid);
    holds.push(acquired.release);
    workspace = acquired.handle;
  } else workspace = await ledger.workspace(wid);
  const guarded = options.guarded === true && workspace.store.appendGuards === true;
  // Guarded: a state the store's freshness vouches for, as a decision's load (the append checks it). A
  // store without freshness (SQLite) reads either way, and a client's read shares one already under way
  // (loadStream): cheaper under load than a decision's own read (bench server-ab: +5 % CPU per command).
  const vouched = guarded && workspace.store.freshness !== undefined;
  let { state, revision } = await loadStream(workspaceFold, workspace, 'workspace', { forDecision: vouched });
  const verified = verifiedTokens(workspace, revision);
  const known = verified.get(token);
  if (known) return { workspace, ...assertNotExpired(ledger, known), ...(guarded ? { accessCheckedAt: revision } : {}) };
  // A token this state does not hold may have been issued a moment ago by another server, whose append
  // this one has not heard of yet: before refusing, read (the freshness vouches only for what it saw).
  if (vouched && !state.tokens[parsed.tokenId]) ({ state, revision } = await loadStream(workspaceFold, workspace, 'workspace'));
  const checked = guarded ? { accessCheckedAt: revision } : {};
  const entry = state.tokens[parsed.tokenId];
  const presented = Buffer.from(hashToken(token), 'hex');
  const stored = entry ? Buffer.from(entry.tokenHash, 'hex') : Buffer.alloc(32);
  // Compare even when the id is unknown, so timing does not tell which token ids exist.
  const match = timingSafeEqual(presented, stored.length === 32 ? stored : Buffer.alloc(32));
  if (!entry || !match || entry.revoked) throw new DomainError('unauthorized', 'Authorization: unknown or revoked token');
  // The role lives with the membership: removal ends every token of the principal, a demotion caps them.
  const role = effectiveRole(entry.principal as Principal, entry.role, state.members[entry.principal]);
  if (role === null) throw new DomainError('unauthorized', `Authorization: ${entry.principal} is no longer a member of this workspace`);
  const caller = assertNotExpired(ledger, { principal: entry.principal as Principal, role, tokenId: parsed.tokenId, ...(entry.signIn ? { signIn: entry.signIn } : {}) });
  if (verified.size >= MAX_VERIFIED_TOKENS) verified.clear();
  verified.set(token, caller);
  return { workspace, ...caller, ...checked };
}

/** A session or CLI sign-in token past its `expiresAt` no longer authenticates (it is not revoked: it ended). */
function assertNotExpired<C extends Omit<Caller, 'workspace'>>(ledger: Ledger, caller: C): C {
  if (caller.signIn && Date.parse(caller.signIn.expiresAt) <= ledger.clock().getTime()) {
    throw new DomainError('session_expired', `Authorization: the sign-in of ${caller.principal} (token ${caller.tokenId}) expired at ${caller.signIn.expiresAt}; sign in again`, { tokenId: caller.tokenId });
  }
  return caller;
}

/** Workspaces are never unregistered, so a positive catalogue answer can be remembered (a query less per call). */
const registeredIds = new WeakMap<Ledger, Set<string>>();

function isRegistered(ledger: Ledger, id: string): boolean {
  let ids = registeredIds.get(ledger);
  if (!ids) registeredIds.set(ledger, (ids = new Set()));
  if (ids.has(id)) return true;
  if (!ledger.workspaces.get(id)) return false;
  ids.add(id);
  return true;
}

const MAX_VERIFIED_TOKENS = 10_000;
const VERIFIED_TOKENS = new Slot<{ revision: number; tokens: Map<string, Omit<Caller, 'workspace'>> }>('verified tokens');

/**
 * Tokens already verified against the workspace stream at `revision`: hashing and role resolution are
 * skipped for them. Any new event on the workspace stream (an issue, a revocation, a role change) moves
 * the revision and empties the cache, so a revocation still takes effect on the very next call — the
 * revision comes from the kernel's cached fold, which reads the stream (or the store's knowledge of its
 * end) on every call, including events committed by other processes.
 */
function verifiedTokens(workspace: WorkspaceHandle, revision: number): Map<string, Omit<Caller, 'workspace'>> {
  let entry = workspace.cache.get(VERIFIED_TOKENS);
  if (!entry || entry.revision !== revision) workspace.cache.set(VERIFIED_TOKENS, (entry = { revision, tokens: new Map() }));
  return entry.tokens;
}

