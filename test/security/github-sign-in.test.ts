import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Ledger } from '../../src/ledger';
import { loadConfig } from '../../src/config';
import { attachReadModels } from '../../src/readmodels/stored/registry';
import { startServer, type RunningServer } from '../../src/server/bootstrap';
import { workspaceFold } from '../../src/workspaces/workspace-state';
import { command } from '../rpc/support';
import { CookieJar, request } from '../support/oidc-fixture';
import { startGitHubStandIn, type GitHubStandIn } from '../support/github-oauth-standin';

/**
 * Issue 43, the GitHub preset: `identityProvider: {kind: "github"}` signs people in with a GitHub OAuth
 * app — here a stand-in that refuses any request not made as GitHub documents it. The identity is the
 * numeric user id (a login can be renamed), bound on first sign-in.
 */
describe('sign-in with the GitHub OAuth preset', () => {
  let gh: GitHubStandIn;
  let server: RunningServer;
  let dataDir: string;
  let owner: string;

  beforeAll(async () => {
    gh = await startGitHubStandIn();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-gh-'));
    const configFile = path.join(dataDir, 'operator.json');
    fs.writeFileSync(configFile, JSON.stringify({ identityProvider: { kind: 'github', clientId: gh.clientId, clientSecret: gh.clientSecret, webUrl: gh.url, apiUrl: gh.url } }));
    server = await startServer({ port: 0 }, new Ledger(loadConfig({ dataDir, port: 0, configFile }), { onOpenWorkspace: attachReadModels }));
    owner = fs.readFileSync(path.join(dataDir, 'owner-token'), 'utf8').trim();
    expect((await command(server.url, owner, 'default', 'addMember', { principal: 'user:octocat', role: 'member' })).error).toBeUndefined();
  });
  afterAll(async () => {
    await server?.close();
    await gh?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  async function signIn() {
    const jar = new CookieJar();
    const start = await request(jar, `${server.url}/auth/login?workspace=default`);
    expect(start.status).toBe(302);
    const authorize = await request(jar, start.headers.get('location')!);
    expect(authorize.status).toBe(302);
    const callback = await request(jar, authorize.headers.get('location')!);
    return { jar, callback };
  }

  it('a GitHub user invited as user:<login> signs in; the numeric id is the bound subject', async () => {
    gh.user = { id: 583231, login: 'octocat' };
    const { jar, callback } = await signIn();
    expect(callback.status).toBe(303);
    expect(gh.violations).toEqual([]);
    const who = await (await request(jar, `${server.url}/auth/session?workspace=default`)).json();
    expect(who).toMatchObject({ principal: 'user:octocat', signIn: { issuer: gh.url, subject: '583231', method: 'code' } });
    const state = (await server.ledger.executor.load(workspaceFold, await server.ledger.workspace('default'), 'workspace')).state;
    expect(state.identities['user:octocat']).toEqual({ issuer: gh.url, subject: '583231' });
  });

  it('`review-ledger login` with the GitHub preset: the device flow, GitHub answering "pending" with HTTP 200 as it does', async () => {
    const cli = spawn(process.execPath, [path.resolve(__dirname, '../../bin/review-ledger.js'), 'login', '--url', server.url, '--workspace', 'default', '--json'], { env: { ...process.env, REVIEW_LEDGER_FROM_SOURCE: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    cli.stdout.on('data', (d) => (stdout += d));
    const exited = new Promise<number | null>((resolve) => cli.on('exit', (code) => resolve(code)));
    const code = await new Promise<string>((resolve, reject) => {
      cli.stderr.on('data', (d) => {
        stderr += d;
        const m = /and enter the code (\S+)/.exec(stderr);
        if (m) resolve(m[1]);
      });
      void exited.then(() => reject(new Error(`login exited early: ${stderr}`)));
    });
    expect(stderr).toContain(`${gh.url}/login/device`);
    // The person takes a moment: the server's polls get GitHub's "pending" first.
    for (let i = 0; i < 400 && gh.pendingAnswers === 0; i++) await new Promise((r) => setTimeout(r, 25));
    expect(gh.pendingAnswers).toBeGreaterThan(0);
    gh.approve(code, { id: 583231, login: 'octocat' });
    expect(await exited).toBe(0);
    const out = JSON.parse(stdout);
    expect(out).toMatchObject({ principal: 'user:octocat', token: expect.stringMatching(/^rl_default_/) });
    const state = (await server.ledger.executor.load(workspaceFold, await server.ledger.workspace('default'), 'workspace')).state;
    expect(state.tokens[out.tokenId].signIn).toMatchObject({ issuer: gh.url, subject: '583231', method: 'device' });
    expect(gh.violations).toEqual([]);
  }, 180_000);

  it('another GitHub account that took the login after a rename cannot act as the bound principal', async () => {
    gh.user = { id: 999, login: 'octocat' };
    const { callback, jar } = await signIn();
    expect(callback.status).toBe(403);
    expect((await callback.json()).error.data.code).toBe('identity_bound');
    expect(jar.get(server.url, 'rl_session')).toBeUndefined();
    expect(gh.violations).toEqual([]);
  });
});
