import { Controller, Get, Inject, Module, Post, Query, Req, Res } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { DomainError } from '../domain-error';
import { Ledger } from '../ledger';
import { httpStatusOf, toRpcError } from '../rpc/errors';
import { serverHostNames } from '../rpc/rpc.module';
import { hostAllowed } from '../security/host-check';
import { identityProviderFor, type PendingCodeFlow } from '../security/identity-provider';
import { endSession, openSession } from '../security/sessions';
import { clearedCookie, credentialOf, readCookie, sessionCookie, SESSION_COOKIE, SIGN_IN_COOKIE } from '../security/session-cookie';
import { authenticate } from '../security/tokens';
import { WorkspaceRegistry } from '../workspaces/registry';
import { newUuidV7 } from '../events/ids';

/** A sign-in not finished within this long is forgotten (the person starts again). */
const PENDING_MS = 10 * 60 * 1000;
/** Sign-ins in flight at once; past it the oldest is dropped (a flood of /auth/login cannot grow memory). */
const MAX_PENDING = 1000;

interface Pending extends PendingCodeFlow {
  workspaceId: string;
  returnTo: string;
  at: number;
}

/**
 * The Review page's sign-in (docs/security.md "Sign-in"): authorization code + PKCE at the operator's
 * identity provider, then a session cookie (src/security/session-cookie.ts) holding a session token the
 * person's own sign-in minted (src/security/sessions.ts).
 *
 * - `GET /auth/login?workspace=<id>&return=<path>` → the provider (state kept here, bound to the browser
 *   by a `SameSite=Lax` cookie, so a sign-in started elsewhere cannot be completed in this browser),
 * - `GET /auth/callback` → code exchanged, identity mapped to a member, session cookie set, back to `return`,
 * - `POST /auth/logout` (session cookie + CSRF header) → the session is revoked and the cookie cleared,
 * - `GET /auth/session?workspace=<id>` → who the cookie's session is (for the page).
 */
@Controller()
export class SignInController {
  private readonly pending = new Map<string, Pending>();

  constructor(@Inject(Ledger) private readonly ledger: Ledger) {}

  @Get('/auth/login')
  async login(@Query('workspace') workspace: string, @Query('return') returnTo: string, @Req() req: IncomingMessage, @Res() res: ServerResponse): Promise<void> {
    try {
      const idp = this.provider();
      const workspaceId = WorkspaceRegistry.validateId(workspace);
      const back = typeof returnTo === 'string' && /^\/(?!\/)[\x21-\x7e]{0,1000}$/.test(returnTo) ? returnTo : '/';
      const { url, pending } = await idp.authorizationUrl(`${this.baseUrl(req)}/auth/callback`);
      this.remember({ ...pending, workspaceId, returnTo: back, at: Date.now() });
      res.writeHead(302, { location: url.href, 'set-cookie': `${SIGN_IN_COOKIE}=${pending.state}; Path=/auth; Max-Age=${PENDING_MS / 1000}; HttpOnly; SameSite=Lax${this.secure() ? '; Secure' : ''}`, 'cache-control': 'no-store' });
      res.end();
    } catch (err) {
      sendError(res, err);
    }
  }

  @Get('/auth/callback')
  async callback(@Req() req: IncomingMessage, @Res() res: ServerResponse): Promise<void> {
    try {
      const idp = this.provider();
      const url = new URL(req.url ?? '/', this.baseUrl(req));
      const state = url.searchParams.get('state') ?? '';
      const pending = this.pending.get(state);
      this.pending.delete(state);
      if (!pending || Date.now() - pending.at > PENDING_MS) throw new DomainError('sign_in_failed', 'state: no sign-in of this browser is waiting for this answer (expired, already used, or started elsewhere); sign in again');
      if (readCookie(req, SIGN_IN_COOKIE) !== state) throw new DomainError('sign_in_failed', 'state: this sign-in was started in another browser; sign in again from here');
      const error = url.searchParams.get('error');
      if (error) throw new DomainError('sign_in_failed', `sign-in: the provider answered ${error.slice(0, 100)}: ${(url.searchParams.get('error_description') ?? '').slice(0, 300)}`);
      // The URL the provider redirected to, exactly as registered (openid-client checks state and iss on it).
      const callbackUrl = new URL(pending.redirectUri);
      callbackUrl.search = url.search;
      const who = await idp.completeCodeFlow(callbackUrl, pending);
      const session = await openSession(this.ledger, pending.workspaceId, who, 'code', 'web');
      res.writeHead(303, {
        location: pending.returnTo,
        'set-cookie': [sessionCookie(session.token, this.ledger.operator.sessionTtlSeconds, this.secure()), clearedCookie(SIGN_IN_COOKIE, '/auth')],
        'cache-control': 'no-store',
      });
      res.end();
    } catch (err) {
      sendError(res, err);
    }
  }

  @Post('/auth/logout')
  async logout(@Query('workspace') workspace: string, @Req() req: IncomingMessage, @Res() res: ServerResponse): Promise<void> {
    try {
      const token = credentialOf(req, undefined);
      if (!token) throw new DomainError('unauthorized', `${SESSION_COOKIE}: no session to end`);
      const caller = await authenticate(this.ledger, workspace, token);
      await this.ledger.executor.execute(endSession, caller.workspace, { principal: caller.principal, role: caller.role, tokenId: caller.tokenId, via: 'web', idempotencyKey: newUuidV7() }, { tokenId: caller.tokenId });
      res.writeHead(204, { 'set-cookie': clearedCookie(SESSION_COOKIE, '/'), 'cache-control': 'no-store' });
      res.end();
    } catch (err) {
      sendError(res, err);
    }
  }

  @Get('/auth/session')
  async session(@Query('workspace') workspace: string, @Req() req: IncomingMessage, @Res() res: ServerResponse): Promise<void> {
    try {
      // A read: SameSite=Strict already keeps other sites' requests from carrying the cookie.
      const caller = await authenticate(this.ledger, workspace, readCookie(req, SESSION_COOKIE));
      sendJson(res, 200, { workspaceId: caller.workspace.id, principal: caller.principal, role: caller.role, tokenId: caller.tokenId, signIn: caller.signIn ?? null });
    } catch (err) {
      sendError(res, err);
    }
  }

  private provider() {
    const idp = identityProviderFor(this.ledger);
    if (!idp) throw new DomainError('sign_in_unavailable', 'identityProvider: this server has no identity provider configured (docs/security.md "Sign-in"); use a token');
    return idp;
  }

  private remember(p: Pending): void {
    const now = Date.now();
    for (const [k, v] of this.pending) if (now - v.at > PENDING_MS) this.pending.delete(k);
    while (this.pending.size >= MAX_PENDING) this.pending.delete(this.pending.keys().next().value!);
    this.pending.set(p.state, p);
  }

  private secure(): boolean {
    return (this.ledger.operator.publicUrl ?? '').startsWith('https:');
  }

  /** `publicUrl`, else the address the browser used (only a Host this server answers to). */
  private baseUrl(req: IncomingMessage): string {
    if (this.ledger.operator.publicUrl) return this.ledger.operator.publicUrl;
    const host = req.headers.host;
    if (!host || !hostAllowed(host, serverHostNames(this.ledger))) throw new DomainError('forbidden', `Host: "${String(host ?? '').slice(0, 100)}" is not a name this server answers to; set publicUrl`);
    return `http://${host}`;
  }
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' });
  res.end(text);
}

function sendError(res: ServerResponse, err: unknown): void {
  if (!(err instanceof DomainError)) console.error('sign-in:', err);
  if (res.headersSent) return void res.end();
  sendJson(res, httpStatusOf(err), { error: toRpcError(err) });
}

@Module({ controllers: [SignInController] })
export class SignInModule {}
