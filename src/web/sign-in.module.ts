import { Controller, Get, Inject, Module, type OnModuleDestroy, Post, Query, Req, Res } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { DomainError } from '../domain-error';
import { Ledger } from '../ledger';
import { httpStatusOf, toRpcError } from '../rpc/errors';
import { serverHostNames } from '../rpc/rpc.module';
import { hostAllowed } from '../security/host-check';
import { identityProviderFor, type PendingCodeFlow } from '../security/identity-provider';
import { endSession, openSession, type OpenedSession } from '../security/sessions';
import { randomBytes } from 'node:crypto';
import { clearedCookie, credentialOf, readCookie, sessionCookie, SESSION_COOKIE, SIGN_IN_COOKIE } from '../security/session-cookie';
import { authenticate } from '../security/tokens';
import { WorkspaceRegistry } from '../workspaces/registry';
import { newUuidV7 } from '../events/ids';
import { RateWindow } from '../security/rate-window';
import { requestClientKey } from '../security/client-key';

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
 * Sign-ins one client may start per minute (GET /auth/login, POST /auth/device): each costs the identity
 * provider a round trip, a device sign-in also a poll of the provider for up to its expiry, and both hold
 * a slot of the bounded tables here — a client starting them in a loop evicted everyone else's.
 */
const LOGINS_PER_MINUTE = 30;
const DEVICE_STARTS_PER_MINUTE = 10;

/** Device sign-ins (`review-ledger login`) in flight at once. */
const MAX_DEVICE_PENDING = 100;
/** How long one `POST /auth/device/poll` waits for the person before answering `pending`. */
const DEVICE_WAIT_MS = 20_000;

interface DeviceFlow {
  workspaceId: string;
  at: number;
  stop: AbortController;
  /** Settles once the provider answered (the session minted) or refused. */
  done: Promise<OpenedSession>;
  settled: boolean;
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
export class SignInController implements OnModuleDestroy {
  private readonly pending = new Map<string, Pending>();
  private readonly devices = new Map<string, DeviceFlow>();
  private readonly loginStarts = new RateWindow(LOGINS_PER_MINUTE, 60_000);
  private readonly deviceStarts = new RateWindow(DEVICE_STARTS_PER_MINUTE, 60_000);

  constructor(@Inject(Ledger) private readonly ledger: Ledger) {}

  @Get('/auth/login')
  async login(@Query('workspace') workspace: string, @Query('return') returnTo: string, @Req() req: IncomingMessage, @Res() res: ServerResponse): Promise<void> {
    try {
      const idp = this.provider();
      admitStart(this.loginStarts, req, this.ledger.operator.trustedProxies, 'GET /auth/login', LOGINS_PER_MINUTE);
      const workspaceId = WorkspaceRegistry.validateId(workspace);
      // A path on this server only: not `//host` nor `/\\host` (browsers read both as another origin).
      const back = typeof returnTo === 'string' && /^\/(?![/\\])[\x21-\x5b\x5d-\x7e]{0,1000}$/.test(returnTo) ? returnTo : '/';
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
      this.provider();
      // A read: SameSite=Strict already keeps other sites' requests from carrying the cookie.
      const caller = await authenticate(this.ledger, workspace, readCookie(req, SESSION_COOKIE));
      sendJson(res, 200, { workspaceId: caller.workspace.id, principal: caller.principal, role: caller.role, tokenId: caller.tokenId, authn: caller.signIn ? 'sign-in' : 'admin-provisioned', signIn: caller.signIn ?? null });
    } catch (err) {
      sendError(res, err);
    }
  }

  /**
   * `review-ledger login`: the device authorization grant (RFC 8628). The server holds the client
   * credentials and polls the provider; the CLI shows the person the code and URL, then polls here with
   * the handle until the person approved at the provider, and gets a sign-in token (method `device`).
   */
  @Post('/auth/device')
  async deviceStart(@Query('workspace') workspace: string, @Req() req: IncomingMessage, @Res() res: ServerResponse): Promise<void> {
    try {
      const idp = this.provider();
      admitStart(this.deviceStarts, req, this.ledger.operator.trustedProxies, 'POST /auth/device', DEVICE_STARTS_PER_MINUTE);
      const workspaceId = WorkspaceRegistry.validateId(workspace);
      await this.ledger.workspace(workspaceId);
      const started = await idp.startDeviceFlow();
      for (const [k, d] of this.devices) if (Date.now() - d.at > started.expires_in * 1000 + 60_000) this.forgetDevice(k);
      while (this.devices.size >= MAX_DEVICE_PENDING) this.forgetDevice(this.devices.keys().next().value!);
      const handle = randomBytes(24).toString('base64url');
      const stop = new AbortController();
      const flow: DeviceFlow = { workspaceId, at: Date.now(), stop, settled: false, done: null as unknown as Promise<OpenedSession> };
      flow.done = idp.completeDeviceFlow(started, stop.signal).then((who) => openSession(this.ledger, workspaceId, who, 'device', 'cli'));
      flow.done.then(() => (flow.settled = true), () => (flow.settled = true));
      this.devices.set(handle, flow);
      sendJson(res, 200, { handle, userCode: started.user_code, verificationUri: started.verification_uri, verificationUriComplete: started.verification_uri_complete ?? null, expiresIn: started.expires_in, interval: started.interval ?? 5 });
    } catch (err) {
      sendError(res, err);
    }
  }

  @Post('/auth/device/poll')
  async devicePoll(@Query('handle') handle: string, @Res() res: ServerResponse): Promise<void> {
    try {
      const flow = typeof handle === 'string' ? this.devices.get(handle) : undefined;
      if (!flow) throw new DomainError('sign_in_failed', 'handle: no device sign-in is waiting under this handle (expired, finished, or never started); run `review-ledger login` again');
      let timer: NodeJS.Timeout | undefined;
      const waited = await Promise.race([flow.done.then((s) => ({ s })), new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), DEVICE_WAIT_MS)))]).finally(() => clearTimeout(timer));
      if (!waited) return sendJson(res, 202, { status: 'pending' });
      this.devices.delete(handle);
      sendJson(res, 200, { status: 'signed_in', token: waited.s.token, tokenId: waited.s.tokenId, principal: waited.s.principal, workspaceId: flow.workspaceId, expiresAt: waited.s.expiresAt });
    } catch (err) {
      if (typeof handle === 'string' && this.devices.get(handle)?.settled) this.devices.delete(handle);
      sendError(res, err);
    }
  }

  onModuleDestroy(): void {
    for (const handle of [...this.devices.keys()]) this.forgetDevice(handle);
  }

  private forgetDevice(handle: string): void {
    this.devices.get(handle)?.stop.abort();
    this.devices.delete(handle);
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

/** Counts a sign-in start against its client, or refuses it with the wait. */
function admitStart(starts: RateWindow, req: IncomingMessage, trustedProxies: readonly string[], what: string, perMinute: number): void {
  const client = requestClientKey(req, trustedProxies);
  const waitMs = starts.take(client);
  if (waitMs > 0) throw new DomainError('sign_in_rate_limited', `${what}: ${client} started ${perMinute} sign-ins in the last minute; start again in ${Math.ceil(waitMs / 1000)} s`, { retryAfterMs: waitMs });
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
