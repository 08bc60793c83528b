import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { GitFixture } from '../support/git-fixture';
import { command, serverFixture } from '../rpc/support';

/**
 * SPEC §16 "repos registered over RPC live under an operator-configured root": a tenant cannot point the
 * server at any directory of the host, cannot learn which host paths exist from the errors, and never
 * sees a credential embedded in an origin URL echoed back.
 */
describe('registerRepo over RPC is confined to the repo root', () => {
  let fx: Awaited<ReturnType<typeof serverFixture>>;
  const outside: GitFixture[] = [];
  beforeAll(async () => {
    fx = await serverFixture();
  });
  afterAll(async () => {
    await fx.close();
    for (const g of outside) g.cleanup();
  });
  const register = (payload: Record<string, unknown>) => command(fx.server.url, fx.ownerToken, fx.workspaceId, 'registerRepo', payload);
  const rootOf = () => path.join(fx.dataDir, 'repos', fx.workspaceId);

  it('a git work tree outside the root is refused, with one error whether or not the path exists', async () => {
    const g = new GitFixture('rl-outside-');
    outside.push(g);
    g.git('remote', 'add', 'origin', 'https://github.com/acme/outside.git');
    g.write('a.txt', 'a\n');
    g.commit('a');
    const answers = [];
    for (const p of [g.dir, '/etc', fx.dataDir, path.join(os.tmpdir(), 'no-such-dir-rl'), '/root/.ssh', '../../..']) {
      const r = await register({ repoId: 'outside', path: p });
      answers.push({ code: r.error?.data?.code, message: r.error?.message?.replace(JSON.stringify(p).slice(1, -1), '<p>') });
    }
    expect(new Set(answers.map((a) => JSON.stringify(a))).size).toBe(1);
    expect(answers[0].code).toBe('repo_path_refused');
  });

  it('a symlink inside the root that leads outside is refused the same way', async () => {
    fs.mkdirSync(rootOf(), { recursive: true });
    const g = new GitFixture('rl-outside-');
    outside.push(g);
    g.git('remote', 'add', 'origin', 'https://github.com/acme/linked.git');
    fs.symlinkSync(g.dir, path.join(rootOf(), 'linked'));
    const r = await register({ repoId: 'linked', path: 'linked' });
    expect(r.error?.data?.code).toBe('repo_path_refused');
  });

  it('a work tree under the root registers, named relative to the root or absolutely', async () => {
    const g = new GitFixture('inside-', rootOf());
    outside.push(g);
    g.git('remote', 'add', 'origin', 'https://github.com/acme/inside.git');
    g.write('a.txt', 'a\n');
    g.commit('a');
    const r = await register({ repoId: 'inside', path: path.basename(g.dir) });
    expect(r.error).toBeUndefined();
    expect(r.result.result.forge).toMatchObject({ kind: 'github', owner: 'acme', name: 'inside' });
    expect((await register({ repoId: 'inside', path: g.dir })).result.result).toEqual({ alreadyRegistered: true });
  });

  it('credentials embedded in an origin URL are never echoed (errors, responses, events)', async () => {
    const token = 'ghp_s3cr3tTOKENvalue0123456789';
    const bad = new GitFixture('creds-bad-', rootOf());
    outside.push(bad);
    bad.git('remote', 'add', 'origin', `https://deploy:${token}@code.example.org/acme/widgets.git`);
    const refused = await register({ repoId: 'creds-bad', path: path.basename(bad.dir) });
    expect(refused.error?.data?.code).toBe('repo_unknown_forge');
    expect(JSON.stringify(refused)).not.toContain(token);
    expect(refused.error?.message).toContain('https://***@code.example.org/acme/widgets.git');

    const good = new GitFixture('creds-good-', rootOf());
    outside.push(good);
    good.git('remote', 'add', 'origin', `https://x-access-token:${token}@github.com/acme/widgets.git`);
    const ok = await register({ repoId: 'creds-good', path: path.basename(good.dir) });
    expect(ok.error).toBeUndefined();
    expect(JSON.stringify(ok)).not.toContain(token);
    const ws = await fx.server.ledger.workspace(fx.workspaceId);
    for await (const e of ws.store.readAll()) expect(JSON.stringify(e.data)).not.toContain(token);
  });

  it('a forge URL is cloned by the server only from an allowed forge over https; anything else is refused before git runs', async () => {
    for (const url of ['file:///etc', `file://${fx.dataDir}`, 'ext::sh -c touch% /tmp/pwned', 'https://code.example.org/acme/widgets.git', 'git@github.com:acme/widgets.git', 'http://github.com/acme/widgets.git']) {
      const r = await register({ repoId: 'cloned', url });
      expect([url, r.error?.data?.code]).toEqual([url, 'repo_url_refused']);
    }
    expect(fs.existsSync(path.join(rootOf(), 'cloned'))).toBe(false);
  });
});
