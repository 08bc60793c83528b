import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Browser } from 'playwright-core';
import { Ledger } from '../../src/ledger';
import { loadConfig } from '../../src/config';
import { attachReadModels } from '../../src/readmodels/stored/registry';
import { startServer, type RunningServer } from '../../src/server/bootstrap';
import { workspaceFold } from '../../src/workspaces/workspace-state';
import { BASE, command, HEAD_A } from '../rpc/support';
import { startOidcProvider, type OidcFixture } from '../support/oidc-fixture';
import { buildWebBundle, launchChromium } from './support';

/**
 * Issue 43 in Chromium: the Review page offers "Sign in with your organisation" when the server has an
 * identity provider; the person signs in at a real OpenID provider (oidc-provider, in this process:
 * its login and consent pages), comes back to the page signed in through an HttpOnly SameSite=Strict
 * session cookie, and the page's live connection and calls are authenticated by it.
 */
describe('Review page sign-in through an OpenID Connect provider (Chromium)', () => {
  let idp: OidcFixture;
  let server: RunningServer;
  let browser: Browser;
  let dataDir: string;
  let owner: string;
  const target = { repoId: 'web', prNumber: 1 };

  beforeAll(async () => {
    buildWebBundle();
    idp = await startOidcProvider({ 'sub-alice': { preferred_username: 'alice' } });
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-e2e-oidc-'));
    const configFile = path.join(dataDir, 'operator.json');
    fs.writeFileSync(configFile, JSON.stringify({ identityProvider: { kind: 'oidc', issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret } }));
    server = await startServer({ port: 0 }, new Ledger(loadConfig({ dataDir, port: 0, configFile }), { onOpenWorkspace: attachReadModels }));
    idp.attach([`${server.url}/auth/callback`]);
    owner = fs.readFileSync(path.join(dataDir, 'owner-token'), 'utf8').trim();
    expect((await command(server.url, owner, 'default', 'addMember', { principal: 'user:alice', role: 'member' })).error).toBeUndefined();
    expect((await command(server.url, owner, 'default', 'requestReview', { ...target, baseSha: BASE, headSha: HEAD_A })).error).toBeUndefined();
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await idp?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('a person signs in with the provider and the page acts with their session', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const pagePath = `/workspaces/default/repos/${target.repoId}/prs/${target.prNumber}`;
    await page.goto(`${server.url}${pagePath}`);
    await page.click('#idp-sign-in');
    // The provider's own pages: login (any password in its development mode), then consent.
    await page.waitForSelector('input[name="login"]');
    expect(new URL(page.url()).origin).toBe(idp.issuer);
    await page.fill('input[name="login"]', 'sub-alice');
    await page.fill('input[name="password"]', 'whatever');
    await page.click('button[type="submit"]');
    await page.waitForSelector('button[type="submit"]');
    await page.click('button[type="submit"]');
    await page.waitForURL(`${server.url}${pagePath}`);

    // Back on the Review page, signed in: no login form, and the live connection authenticated by the cookie.
    await page.waitForFunction(() => (window as unknown as { __reviewPage?: { live: { connected: boolean } } }).__reviewPage?.live.connected === true);
    expect(await page.$('#login')).toBeNull();
    // The page says how it is authenticated, as the audit records the acts made from it.
    expect(await page.getAttribute('#authn', 'data-authn')).toBe('sign-in');
    expect(await page.textContent('#authn')).toBe('signed in');
    const cookie = (await context.cookies(server.url)).find((c) => c.name === 'rl_session')!;
    expect([cookie.httpOnly, cookie.sameSite]).toEqual([true, 'Strict']);
    expect(await page.evaluate(() => document.cookie)).not.toContain('rl_session');
    const who = await page.evaluate(async () => (await fetch('/auth/session?workspace=default')).json());
    expect(who).toMatchObject({ principal: 'user:alice', signIn: { issuer: idp.issuer, subject: 'sub-alice', method: 'code' } });
    // A call without the CSRF header is refused even from the page; the page's own calls carry it.
    const bare = await page.evaluate(async () => (await fetch('/rpc', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'review_studio.auditChain', params: { workspace_id: 'default' } }) })).status);
    expect(bare).toBe(403);
    const state = (await server.ledger.executor.load(workspaceFold, await server.ledger.workspace('default'), 'workspace')).state;
    expect(state.identities['user:alice']).toEqual({ issuer: idp.issuer, subject: 'sub-alice' });
    await context.close();
  });

  it('a page opened with a token someone minted is marked admin-provisioned', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${server.url}/workspaces/default/repos/${target.repoId}/prs/${target.prNumber}#token=${owner}`);
    await page.waitForSelector('#authn');
    expect(await page.getAttribute('#authn', 'data-authn')).toBe('admin-provisioned');
    await context.close();
  });
});
