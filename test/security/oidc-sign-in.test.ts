import { execFile, spawn } from 'node:child_process';
import * as http from 'node:http';
import WebSocket from 'ws';
import { CommandBus } from '@nestjs/cqrs';
import { ledgerCommand } from '../../src/cqrs/commands';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Ledger, LOCAL_OPERATOR } from '../../src/ledger';
import { loadConfig } from '../../src/config';
import { attachReadModels } from '../../src/readmodels/stored/registry';
import { startServer, type RunningServer } from '../../src/server/bootstrap';
import { newUuidV7 } from '../../src/events/ids';
import { workspaceFold } from '../../src/workspaces/workspace-state';
import { BASE, command, HEAD_A, nodePayload, postRpc } from '../rpc/support';
import { CookieJar, request, signInAtProvider, startOidcProvider, type OidcFixture } from '../support/oidc-fixture';

/**
 * Issue 43: humans sign in as themselves. A real OpenID provider (oidc-provider) runs in this process;
 * the server is configured with it (operator file: identityProvider) and the Review page's sign-in —
 * authorization code + PKCE — is driven over real HTTP like a browser: provider login and consent forms,
 * cookies, redirects. With a provider configured nobody else mints a credential that acts as a human.
 */
describe('sign-in through an OpenID Connect provider', () => {
  let idp: OidcFixture;
  let server: RunningServer;
  let url: string;
  let dataDir: string;
  let owner: string;
  let skewMs = 0;
  const TTL = 600;
  const codeOf = (r: { error?: { data?: { code: string } } } | null) => r?.error?.data?.code;

  beforeAll(async () => {
    idp = await startOidcProvider({
      'sub-alice': { preferred_username: 'alice', email: 'alice@example.com', email_verified: true },
      // Another person at the same provider who claims the same username.
      'sub-mallory': { preferred_username: 'alice' },
      'sub-ada': { preferred_username: 'ada-admin' },
      'sub-carol': { preferred_username: 'carol-c', email: 'carol@example.com', email_verified: true },
      'sub-nobody': { preferred_username: 'not-invited' },
      'sub-dan': { preferred_username: 'dan' },
    });
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-oidc-'));
    const configFile = path.join(dataDir, 'operator.json');
    fs.writeFileSync(configFile, JSON.stringify({ identityProvider: { kind: 'oidc', issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret }, sessionTtlSeconds: TTL }));
    const ledger = new Ledger(loadConfig({ dataDir, port: 0, configFile }), { onOpenWorkspace: attachReadModels, clock: () => new Date(Date.now() + skewMs) });
    server = await startServer({ port: 0 }, ledger);
    url = server.url;
    idp.attach([`${url}/auth/callback`]);
    owner = fs.readFileSync(path.join(dataDir, 'owner-token'), 'utf8').trim();
    for (const [principal, role] of [['user:alice', 'member'], ['user:ada-admin', 'admin'], ['user:carol@example.com', 'member'], ['user:dan', 'member'], ['user:never-signed-in', 'member'], ['agent:bot', 'member']]) {
      const r = await command(url, owner, 'default', 'addMember', { principal, role });
      expect([principal, codeOf(r)]).toEqual([principal, undefined]);
    }
  });
  afterAll(async () => {
    await server?.close();
    await idp?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  /** The Review page's sign-in as a browser does it; returns the jar and the callback's answer. */
  async function signIn(login: string, workspace = 'default', returnTo = '/workspaces/default/repos/web/prs/1') {
    const jar = new CookieJar();
    const start = await request(jar, `${url}/auth/login?workspace=${workspace}&return=${encodeURIComponent(returnTo)}`);
    expect(start.status).toBe(302);
    const authorize = new URL(start.headers.get('location')!);
    expect(authorize.origin).toBe(idp.issuer);
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    const back = await signInAtProvider(jar, authorize.href, login, `${url}/auth/callback`);
    const callback = await request(jar, back);
    const body = callback.status === 303 ? null : await callback.json();
    return { jar, callback, body, session: jar.get(url, 'rl_session') };
  }

  const rpcWithCookie = async (jar: CookieJar, body: object, csrf: boolean) => {
    const res = await request(jar, `${url}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json', ...(csrf ? { 'x-review-ledger-csrf': '1' } : {}) }, body: JSON.stringify(body) });
    return { status: res.status, body: await res.json() };
  };
  const waitFor = async (ok: () => boolean) => {
    for (let i = 0; i < 200 && !ok(); i++) await new Promise((r) => setTimeout(r, 25));
    expect(ok()).toBe(true);
  };
  const membersState = async () => (await server.ledger.executor.load(workspaceFold, await server.ledger.workspace('default'), 'workspace')).state;

  it('a person signs in on the Review page and acts as themselves, with a short-lived HttpOnly SameSite=Strict session', async () => {
    const { jar, callback, session } = await signIn('sub-alice');
    expect(callback.status).toBe(303);
    expect(callback.headers.get('location')).toBe('/workspaces/default/repos/web/prs/1');
    expect(session).toMatch(/^rl_default_[0-9a-f]{16}_/);
    const line = jar.received.find((c) => c.origin === url && c.line.startsWith('rl_session='))!.line;
    expect(line).toMatch(/; HttpOnly/);
    expect(line).toMatch(/; SameSite=Strict/);
    expect(line).toMatch(new RegExp(`; Max-Age=${TTL}(;|$)`));

    const who = await request(jar, `${url}/auth/session?workspace=default`);
    expect(await who.json()).toMatchObject({ principal: 'user:alice', role: 'member', signIn: { issuer: idp.issuer, subject: 'sub-alice', method: 'code' } });
    // The first sign-in bound user:alice to this provider identity.
    expect((await membersState()).identities['user:alice']).toEqual({ issuer: idp.issuer, subject: 'sub-alice' });

    // A state-changing RPC call with the cookie needs the CSRF header; with it the person acts as themselves.
    const call = { jsonrpc: '2.0', id: 1, method: 'addMember', params: { workspace_id: 'default', idempotencyKey: newUuidV7(), principal: 'user:x', role: 'viewer' } };
    const noHeader = await rpcWithCookie(jar, call, false);
    expect([noHeader.status, codeOf(noHeader.body)]).toEqual([403, 'csrf_header_required']);
    const withHeader = await rpcWithCookie(jar, call, true);
    // Acting as user:alice (a member): addMember needs admin, so the refusal names alice's role, not the cookie.
    expect(codeOf(withHeader.body)).toBe('forbidden');
    expect(withHeader.body.error.message).toMatch(/member/);
    expect((await membersState()).members['user:x']).toBeUndefined();
  });

  it('the first sign-in fixes the binding: another subject claiming the same username is refused and gets no session', async () => {
    const { callback, body, session } = await signIn('sub-mallory');
    expect(callback.status).toBe(403);
    expect(body.error.data.code).toBe('identity_bound');
    expect(session).toBeUndefined();
  });

  it('an admin may invite by email: the verified email claim maps to user:<email>', async () => {
    const { callback, jar } = await signIn('sub-carol');
    expect(callback.status).toBe(303);
    expect(await (await request(jar, `${url}/auth/session?workspace=default`)).json()).toMatchObject({ principal: 'user:carol@example.com' });
  });

  it('someone nobody invited signs in at the provider but gets no session', async () => {
    const before = Object.keys((await membersState()).tokens).length;
    const { callback, body, session } = await signIn('sub-nobody');
    expect([callback.status, body.error.data.code]).toEqual([404, 'not_a_member']);
    expect(body.error.message).toContain('user:not-invited');
    expect(session).toBeUndefined();
    expect(Object.keys((await membersState()).tokens).length).toBe(before);
  });

  it('after sign-in the browser goes back only to a path on this server', async () => {
    for (const away of ['//evil.example/x', '/\\evil.example/x', 'https://evil.example/']) {
      const { callback } = await signIn('sub-carol', 'default', away);
      expect([away, callback.status, callback.headers.get('location')]).toEqual([away, 303, '/']);
    }
  });

  it('a callback without the browser-binding cookie, or replayed, is refused (login CSRF)', async () => {
    const jar = new CookieJar();
    const start = await request(jar, `${url}/auth/login?workspace=default`);
    const back = await signInAtProvider(jar, start.headers.get('location')!, 'sub-dan', `${url}/auth/callback`);
    const foreign = await request(new CookieJar(), back);
    expect([foreign.status, (await foreign.json()).error.data.code]).toEqual([401, 'sign_in_failed']);
    // The state was consumed by that attempt: even the right browser cannot use it now.
    const replay = await request(jar, back);
    expect(replay.status).toBe(401);
    expect(jar.get(url, 'rl_session')).toBeUndefined();
  });

  it('the audit records how each act was authenticated, and filters by it', async () => {
    const target = { repoId: 'oidc-repo', prNumber: 7 };
    expect(codeOf(await command(url, owner, 'default', 'requestReview', { ...target, baseSha: BASE, headSha: HEAD_A }))).toBeUndefined();
    const bot = await command(url, owner, 'default', 'issueToken', { principal: 'agent:bot', role: 'member' });
    const filed = await command(url, bot.result.result.token, 'default', 'addReviewNode', { ...target, node: nodePayload('sign-in audit') });
    const nodeId = filed.result.result.nodeId;
    const alice = await signIn('sub-alice');
    const confirmed = await rpcWithCookie(alice.jar, { jsonrpc: '2.0', id: 2, method: 'confirmNode', params: { workspace_id: 'default', idempotencyKey: newUuidV7(), ...target, nodeId } }, true);
    expect(codeOf(confirmed.body)).toBeUndefined();
    expect(codeOf(await command(url, owner, 'default', 'resolveNode', { ...target, nodeId, reason: 'fixed' }))).toBeUndefined();

    const audit = async (filter: Record<string, unknown>) => (await postRpc(url, owner, { jsonrpc: '2.0', id: 3, method: 'review_studio.audit', params: { workspace_id: 'default', ...filter } })).body;
    const all = (await audit({ repoId: target.repoId })).result.value.rows;
    expect(all.map((r: { action: string; actor: string; authn: string; signIn: unknown }) => [r.action, r.actor, r.authn, r.signIn])).toEqual([
      ['resolve', 'user:local-operator', 'admin-provisioned', null],
      ['confirm', 'user:alice', 'sign-in', { issuer: idp.issuer, subject: 'sub-alice' }],
    ]);
    const signedIn = (await audit({ authn: 'sign-in' })).result.value.rows;
    expect(signedIn.map((r: { actor: string }) => r.actor)).toEqual(['user:alice']);
    expect((await audit({ subject: 'sub-alice' })).result.value.rows.map((r: { tokenId: string }) => r.tokenId)).toEqual([alice.session!.split('_')[2]]);
    expect((await audit({ subject: 'sub-mallory' })).result.value.rows).toEqual([]);
    expect((await audit({ authn: 'local' })).result.value.rows).toEqual([]);
    const bad = await audit({ authn: 'password' });
    expect(codeOf(bad)).toBe('invalid_payload');
    expect(bad.error.message).toContain('authn');
  });

  it('`review-ledger login` signs a person in from the terminal with the device authorization grant', async () => {
    const cli = spawn(process.execPath, [path.resolve(__dirname, '../../bin/review-ledger.js'), 'login', '--url', url, '--workspace', 'default', '--json'], { env: { ...process.env, REVIEW_LEDGER_FROM_SOURCE: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    cli.stdout.on('data', (d) => (stdout += d));
    const exited = new Promise<number | null>((resolve) => cli.on('exit', (code) => resolve(code)));
    // The person reads the URL and code the CLI shows, and signs in at the provider in a browser.
    const shown = await new Promise<string>((resolve, reject) => {
      cli.stderr.on('data', (d) => {
        stderr += d;
        const m = /open (\S+)\nand enter the code (\S+)/.exec(stderr);
        if (m) resolve(m[1]);
      });
      void exited.then(() => reject(new Error(`login exited early: ${stderr}`)));
    });
    expect(new URL(shown).origin).toBe(idp.issuer);
    await signInAtProvider(new CookieJar(), shown, 'sub-alice', null);
    expect(await exited).toBe(0);
    const out = JSON.parse(stdout);
    expect(out).toMatchObject({ principal: 'user:alice', workspaceId: 'default', token: expect.stringMatching(/^rl_default_/) });
    expect(stderr).toContain('Signed in as user:alice');
    const recorded = (await membersState()).tokens[out.tokenId];
    expect(recorded.signIn).toMatchObject({ issuer: idp.issuer, subject: 'sub-alice', method: 'device' });
    // The token acts as alice over RPC.
    const me = await request(new CookieJar(), `${url}/workspaces/default/review-page/me`, { headers: { authorization: `Bearer ${out.token}` } });
    expect(await me.json()).toMatchObject({ principal: 'user:alice', role: 'member' });
  }, 180_000);

  it('a WebSocket opened with the session cookie is authenticated by it, and closed within a second once the session ends', async () => {
    const { session } = await signIn('sub-alice');
    const ws = new WebSocket(`${url.replace('http', 'ws')}/rpc`, { headers: { cookie: `rl_session=${session}`, origin: url } });
    const frames: any[] = [];
    ws.on('message', (d) => frames.push(JSON.parse(String(d))));
    const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: String(reason) })));
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'watchAudit', params: { workspace_id: 'default' } }));
    await waitFor(() => frames.some((f) => f.id === 1));
    expect(frames.find((f) => f.id === 1).result.subscription).toEqual(expect.any(String));
    skewMs = (TTL + 1) * 1000;
    try {
      const end = await closed;
      expect(end.code).toBe(4001);
      expect(end.reason).toContain('session_expired');
      expect(frames.some((f) => f.method === 'watch.error' && f.params?.error?.data?.code === 'session_expired')).toBe(true);
    } finally {
      skewMs = 0;
    }
  });

  it('the operator\'s `token create` (the CLI binary) refuses a human token once a provider is configured, and still mints agent tokens', async () => {
    // Its own data dir (the server holds this one's lock), configured with the same provider.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-oidc-cli-'));
    try {
      const cfg = path.join(dir, 'operator.json');
      fs.writeFileSync(cfg, JSON.stringify({ identityProvider: { kind: 'oidc', issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret } }));
      const cli = (...args: string[]) =>
        new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
          execFile(process.execPath, [path.resolve(__dirname, '../../bin/review-ledger.js'), '--data-dir', dir, '--config', cfg, ...args], { env: { ...process.env, REVIEW_LEDGER_FROM_SOURCE: '1' } }, (err, stdout, stderr) =>
            resolve({ code: err ? 1 : 0, stdout, stderr }),
          ),
        );
      expect((await cli('workspace', 'create', 'w1')).code).toBe(0);
      for (const p of ['user:alice', 'agent:bot']) expect((await cli('member', 'add', '--workspace', 'w1', '--principal', p)).code).toBe(0);
      const human = await cli('token', 'create', '--workspace', 'w1', '--principal', 'user:alice');
      expect([human.code, human.stdout]).toEqual([1, '']);
      expect(human.stderr).toContain('human_token_requires_sign_in');
      const agent = await cli('token', 'create', '--workspace', 'w1', '--principal', 'agent:bot');
      expect([agent.code, agent.stdout]).toEqual([0, expect.stringMatching(/^rl_w1_/)]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);

  it('sessions end: logout revokes, member removal ends them, and they expire', async () => {
    const a = await signIn('sub-dan');
    expect(a.callback.status).toBe(303);
    const logoutNoHeader = await request(a.jar, `${url}/auth/logout?workspace=default`, { method: 'POST' });
    expect(logoutNoHeader.status).toBe(403);
    const token = a.session!;
    const out = await request(a.jar, `${url}/auth/logout?workspace=default`, { method: 'POST', headers: { 'x-review-ledger-csrf': '1' } });
    expect(out.status).toBe(204);
    expect(a.jar.get(url, 'rl_session')).toBeUndefined();
    expect(codeOf((await postRpc(url, token, { jsonrpc: '2.0', id: 1, method: 'review_studio.audit', params: { workspace_id: 'default' } })).body)).toBe('unauthorized');

    const b = await signIn('sub-dan');
    const live = await postRpc(url, b.session!, { jsonrpc: '2.0', id: 1, method: 'review_studio.audit', params: { workspace_id: 'default' } });
    expect(codeOf(live.body)).toBeUndefined();
    skewMs = (TTL + 1) * 1000;
    try {
      const expired = await request(b.jar, `${url}/auth/session?workspace=default`);
      expect([expired.status, (await expired.json()).error.data.code]).toEqual([401, 'session_expired']);
    } finally {
      skewMs = 0;
    }

    const c = await signIn('sub-dan');
    expect(codeOf(await command(url, owner, 'default', 'removeMember', { principal: 'user:dan' }))).toBeUndefined();
    const removed = await request(c.jar, `${url}/auth/session?workspace=default`);
    expect([removed.status, (await removed.json()).error.data.code]).toEqual([401, 'unauthorized']);
  });

  it('with a provider configured, no token-minting path gives anyone a credential for another human (admin and owner); agent tokens stay mintable', async () => {
    const ada = await signIn('sub-ada');
    expect(ada.callback.status).toBe(303);
    const admin = ada.session!;
    const minters = { admin, owner };
    const humans = ['user:alice', 'user:never-signed-in', 'user:ada-admin', 'user:local-operator'];
    for (const [who, token] of Object.entries(minters)) {
      for (const method of ['issueToken', 'review_studio.issueToken']) {
        for (const principal of humans) {
          const self = (who === 'admin' && principal === 'user:ada-admin') || (who === 'owner' && principal === 'user:local-operator');
          if (self) continue;
          const r = await command(url, token, 'default', method, { principal, role: 'viewer' });
          expect([who, method, principal, codeOf(r)]).toEqual([who, method, principal, 'human_token_requires_sign_in']);
          expect(r.result).toBeUndefined();
        }
      }
      const agent = await command(url, token, 'default', 'issueToken', { principal: 'agent:bot', role: 'member' });
      expect([who, codeOf(agent), agent.result?.result?.token]).toEqual([who, undefined, expect.stringMatching(/^rl_/)]);
    }
    // The local operator's CLI (`review-ledger token create` runs Ledger.issueToken as the owner) is refused too…
    await expect(server.ledger.issueToken('default', { ...LOCAL_OPERATOR, idempotencyKey: newUuidV7() }, { principal: 'user:alice', role: 'viewer' })).rejects.toMatchObject({ code: 'human_token_requires_sign_in' });
    // …the Nest CommandBus (what sagas and in-process callers use)…
    await expect(server.app.get(CommandBus).execute(ledgerCommand('issueToken', 'default', { principal: 'user:ada-admin', role: 'admin', tokenId: ada.session!.split('_')[2], via: 'rpc', idempotencyKey: newUuidV7() }, { principal: 'user:alice', role: 'viewer' }))).rejects.toMatchObject({ code: 'human_token_requires_sign_in' });
    // …and so is the one entry path every transport calls (Ledger.run), which mints through the same step…
    await expect(server.ledger.run('issueToken', 'default', { ...LOCAL_OPERATOR, idempotencyKey: newUuidV7() }, { principal: 'user:alice', role: 'viewer' })).rejects.toMatchObject({ code: 'human_token_requires_sign_in' });
    // …and a caller cannot choose the token's id or hash: those are the server's to derive.
    await expect(
      server.ledger.run('issueToken', 'default', { ...LOCAL_OPERATOR, idempotencyKey: newUuidV7() }, { principal: 'agent:bot', role: 'viewer', tokenId: '0123456789abcdef', tokenHash: 'a'.repeat(64) }),
    ).rejects.toMatchObject({ code: 'unknown_field' });
    // Nothing of that recorded a token for a human other than through sign-in.
    const tokens = Object.values((await membersState()).tokens);
    for (const t of tokens.filter((t) => t.principal.startsWith('user:') && t.principal !== 'user:local-operator')) expect([t.principal, t.signIn?.subject]).toEqual([t.principal, expect.stringMatching(/^sub-/)]);
  });
  /**
   * A client starting sign-ins in a loop: each costs the provider a round trip (a device sign-in also a
   * poll of it until expiry) and a slot of the bounded tables of sign-ins in flight, so the loop evicted
   * everyone else's. Starts are counted per client (an IPv4 address, an IPv6 /64); loopback addresses of
   * their own stand for clients (127.0.0.0/8 all reach the server on Linux).
   */
  it('one client may start 30 sign-ins and 10 device sign-ins a minute; the others are not held back', async () => {
    const start = (from: string, method: 'GET' | 'POST', pathAndQuery: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = http.request({ host: '127.0.0.1', port: Number(new URL(url).port), path: pathAndQuery, method, localAddress: from, agent: false }, (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (c) => (body += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on('error', reject);
        req.end();
      });
    const statuses = async (n: number, from: string, method: 'GET' | 'POST', p: string) => {
      const out: number[] = [];
      for (let i = 0; i < n; i++) out.push((await start(from, method, p)).status);
      return out;
    };
    expect(await statuses(30, '127.0.0.7', 'GET', '/auth/login?workspace=default')).toEqual(Array(30).fill(302));
    const refused = await start('127.0.0.7', 'GET', '/auth/login?workspace=default');
    const data = JSON.parse(refused.body).error.data;
    expect([refused.status, data.code]).toEqual([503, 'sign_in_rate_limited']);
    // The wait is the rest of the client's minute.
    expect(data.retryAfterMs).toBeGreaterThan(0);
    expect(data.retryAfterMs).toBeLessThanOrEqual(60_000);
    expect(JSON.parse(refused.body).error.message).toMatch(/^GET \/auth\/login: 127\.0\.0\.7 started 30 sign-ins in the last minute; start again in \d+ s$/);
    expect((await start('127.0.0.8', 'GET', '/auth/login?workspace=default')).status).toBe(302);

    expect(await statuses(10, '127.0.0.9', 'POST', '/auth/device?workspace=default')).toEqual(Array(10).fill(200));
    const device = await start('127.0.0.9', 'POST', '/auth/device?workspace=default');
    expect([device.status, JSON.parse(device.body).error.data.code]).toEqual([503, 'sign_in_rate_limited']);
    expect((await start('127.0.0.10', 'POST', '/auth/device?workspace=default')).status).toBe(200);
  });
});
