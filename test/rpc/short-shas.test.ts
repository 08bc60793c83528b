import * as path from 'node:path';
import { GitFixture } from '../support/git-fixture';
import { call, command, serverFixture } from './support';

jest.setTimeout(120_000);

/** SPEC §10 over JSON-RPC: abbreviated SHAs resolve to the full commit (one round); unknown commits are refused. */
describe('requestReview over JSON-RPC resolves every SHA', () => {
  let fx: Awaited<ReturnType<typeof serverFixture>>;
  let git: GitFixture;
  beforeAll(async () => {
    fx = await serverFixture();
    // Repos registered over RPC live under the server's repo root.
    git = new GitFixture('rl-rpc-sha-', path.join(fx.dataDir, 'repos', fx.workspaceId));
    git.git('remote', 'add', 'origin', 'git@github.com:acme/shop.git');
  });
  afterAll(async () => {
    await fx.close();
    git.cleanup();
  });

  test('given a registered repo, when a review is requested with 7-digit SHAs and again with the full ones, then there is one round at the full head; deadbeef is refused', async () => {
    git.write('a.ts', 'export const a = 1;\n');
    const base = git.commit('base');
    git.write('a.ts', 'export const a = 2;\n');
    const head = git.commit('head');
    const url = fx.server.url;
    const reg = await command(url, fx.ownerToken, fx.workspaceId, 'registerRepo', { repoId: 'shop', path: git.dir });
    expect(reg.error).toBeUndefined();
    const first = await command(url, fx.ownerToken, fx.workspaceId, 'requestReview', { repoId: 'shop', prNumber: 4, baseSha: base.slice(0, 7), headSha: head.slice(0, 7) });
    expect(first.result.result).toMatchObject({ started: true, round: 1 });
    const again = await command(url, fx.ownerToken, fx.workspaceId, 'requestReview', { repoId: 'shop', prNumber: 4, baseSha: base, headSha: head });
    expect(again.result.result).toEqual({ started: false, newRound: false });
    const status = await call(url, fx.ownerToken, 'review_studio.reviewStatus', { workspace_id: fx.workspaceId, repoId: 'shop', prNumber: 4 });
    expect(status.result.value ?? status.result).toMatchObject({ round: 1, reviewedHead: head });
    const refused = await command(url, fx.ownerToken, fx.workspaceId, 'requestReview', { repoId: 'shop', prNumber: 5, baseSha: base, headSha: 'deadbeef' });
    expect(refused.error?.data?.code).toBe('unknown_commit');
    expect(refused.error?.message).toMatch(/^headSha: "deadbeef" does not name a commit/);
  });
});
