import * as path from 'node:path';
import { parseToken } from '../../src/security/tokens';
import { command, serverFixture, tokenFor, WsClient } from '../rpc/support';
import { GitFixture } from '../support/git-fixture';

/** Enough files that indexing runs for a while (a fresh workspace: nothing is cached yet). */
function manyFileRepo(files: number, parent: string): GitFixture {
  const f = new GitFixture('rl-revoke-job-', parent);
  f.git('remote', 'add', 'origin', 'git@github.com:acme/revoke-job.git');
  for (let i = 0; i < files; i++) {
    const body = Array.from({ length: 25 }, (_, j) => `export function f${i}_${j}(x: number): number {\n  return x * ${j} + ${i};\n}\n`).join('\n');
    f.write(`src/m${i}/file${i}.ts`, `import { f${(i + 1) % files}_0 } from '../m${(i + 1) % files}/file${(i + 1) % files}';\n${body}\n`);
  }
  f.commit('many files');
  return f;
}

/**
 * SPEC §16 "removal or revocation takes effect at once": a job (index, compute) started by a token keeps
 * running after the token is revoked unless something stops it — and then records its result as an act
 * of a token that no longer exists. The job stops at its next step and nothing it computed is recorded.
 */
describe('revoking a token stops the jobs it started', () => {
  it('indexCode started by a token that is revoked mid-run fails token_revoked, records nothing, and its progress says failed', async () => {
    const fx = await serverFixture();
    const files = 900;
    const repo = manyFileRepo(files, path.join(fx.dataDir, 'repos', fx.workspaceId));
    try {
      const url = fx.server.url;
      expect((await command(url, fx.ownerToken, fx.workspaceId, 'registerRepo', { repoId: 'big', path: repo.dir })).error).toBeUndefined();
      const agent = await tokenFor(url, fx.ownerToken, fx.workspaceId, 'agent:indexer', 'member');
      const watcher = await WsClient.open(url, fx.ownerToken);
      const sub = await watcher.call('watchProgress', { workspace_id: fx.workspaceId });
      const values = () => watcher.updates(sub.result.subscription).map((p) => p.value);

      const job = command(url, agent, fx.workspaceId, 'indexCode', { repoId: 'big' });
      // Revoke as soon as the job has visibly started parsing.
      await watcher.until(() => values().some((v) => v.status === 'running' && v.done > 0), 60_000);
      expect((await command(url, fx.ownerToken, fx.workspaceId, 'revokeToken', { tokenId: parseToken(agent)!.tokenId })).error).toBeUndefined();
      const r = await job;
      expect(r.error?.data?.code).toBe('token_revoked');
      expect(r.error?.message).toMatch(/^indexCode: Authorization: token [0-9a-f]{16} was revoked; the indexCode it started was stopped and nothing it computed is recorded/);
      await watcher.until(() => values().some((v) => v.status === 'failed'));
      const failed = values().find((v) => v.status === 'failed');
      expect(failed.error).toMatch(/revoked/);
      // Stopped, not finished: the last progress before the failure had files left.
      const lastRunning = values().filter((v) => v.status === 'running').at(-1);
      expect(lastRunning.done).toBeLessThan(files);

      // Nothing was recorded: indexing the same commit again (owner) is a fresh index, not "already indexed".
      const again = await command(url, fx.ownerToken, fx.workspaceId, 'indexCode', { repoId: 'big' });
      expect(again.error).toBeUndefined();
      expect(again.result.result.fileCount).toBe(files);
      expect(again.result.result.alreadyIndexed).toBeUndefined();
      await watcher.close();
    } finally {
      repo.cleanup();
      await fx.close();
    }
  }, 180_000);
});
