import * as path from 'node:path';
import { GitFixture } from '../support/git-fixture';
// Repos registered over RPC live under the server's repo root, <dataDir>/repos/<workspace>.
import { call, command, serverFixture, tokenFor, WsClient } from './support';

/** A repository big enough that indexing spans several of the hub's 50 ms coalescing windows. */
function manyFileRepo(files: number, parent: string): GitFixture {
  const f = new GitFixture('rl-progress-', parent);
  f.git('remote', 'add', 'origin', 'git@github.com:acme/progress.git');
  for (let i = 0; i < files; i++) {
    const body = Array.from({ length: 25 }, (_, j) => `export function f${i}_${j}(x: number): number {\n  return x * ${j} + ${i};\n}\n`).join('\n');
    f.write(`src/m${i}/file${i}.ts`, `import { f${(i + 1) % files}_0 } from '../m${(i + 1) % files}/file${(i + 1) % files}';\n${body}\nexport const use${i} = f${(i + 1) % files}_0(1);\n`);
  }
  f.commit('many files');
  return f;
}

describe('watchProgress: index/compute progress over real sockets, scoped to the workspace', () => {
  it('a viewer watching over WebSocket sees increasing progress then done while a real repo is indexed; another workspace sees nothing', async () => {
    const fx = await serverFixture();
    const repo = manyFileRepo(600, path.join(fx.dataDir, 'repos', fx.workspaceId));
    try {
      const url = fx.server.url;
      const created = await command(url, fx.ownerToken, fx.workspaceId, 'createWorkspace', { workspaceId: 'elsewhere' });
      expect(created.error).toBeUndefined();
      const elsewhereToken = created.result.result.token as string;
      expect((await command(url, fx.ownerToken, fx.workspaceId, 'registerRepo', { repoId: 'big', path: repo.dir })).error).toBeUndefined();
      const viewer = await tokenFor(url, fx.ownerToken, fx.workspaceId, 'user:watcher', 'viewer');
      const member = await tokenFor(url, fx.ownerToken, fx.workspaceId, 'agent:indexer', 'member');

      const watcher = await WsClient.open(url, viewer);
      const outsider = await WsClient.open(url, elsewhereToken);
      const sub = await watcher.call('watchProgress', { workspace_id: fx.workspaceId });
      expect(sub.error).toBeUndefined();
      expect(sub.result.jobs).toEqual([]);
      const other = await outsider.call('watchProgress', { workspace_id: 'elsewhere' });
      expect(other.error).toBeUndefined();
      // A token of one workspace cannot watch another's progress.
      expect((await outsider.call('watchProgress', { workspace_id: fx.workspaceId })).error!.data!.code).toBe('forbidden');
      // Over plain HTTP there is no connection to subscribe on.
      expect((await call(url, viewer, 'watchProgress', { workspace_id: fx.workspaceId })).error!.data!.code).toBe('transport_unsupported');

      const indexed = await command(url, member, fx.workspaceId, 'indexCode', { repoId: 'big' });
      expect(indexed.error).toBeUndefined();
      expect(indexed.result.result.fileCount).toBe(600);
      const values = () => watcher.updates(sub.result.subscription).map((p) => p.value);
      await watcher.until(() => values().some((v) => v.status === 'done'));

      const seen = values();
      expect(new Set(seen.map((v) => v.job)).size).toBe(1);
      expect(seen.every((v) => v.kind === 'indexCode' && v.repoId === 'big')).toBe(true);
      const running = seen.filter((v) => v.status === 'running');
      // Increasing progress: several distinct steps before the end, none going backwards.
      expect(running.filter((v) => v.done > 0 && v.done < 600).length).toBeGreaterThanOrEqual(2);
      for (let i = 1; i < seen.length; i++) {
        expect(seen[i].fraction).toBeGreaterThanOrEqual(seen[i - 1].fraction);
        expect(seen[i].seq).toBeGreaterThan(seen[i - 1].seq);
      }
      expect(seen.at(-1)).toMatchObject({ status: 'done', fraction: 1, done: 600, total: 600, commit: indexed.result.result.commit });
      expect(outsider.updates(other.result.subscription)).toEqual([]);

      // A failing job ends with `failed` (and the reason); a late subscriber's snapshot holds both outcomes.
      const failed = await command(url, member, fx.workspaceId, 'indexCode', { repoId: 'big', commit: 'no-such-branch' });
      expect(failed.error).toBeDefined();
      await watcher.until(() => values().some((v) => v.status === 'failed'));
      expect(values().at(-1)).toMatchObject({ status: 'failed', kind: 'indexCode', error: expect.any(String) });
      const late = await WsClient.open(url, viewer);
      const lateSub = await late.call('watchProgress', { workspace_id: fx.workspaceId });
      expect(lateSub.result.jobs.map((j: any) => j.status)).toEqual(['done', 'failed']);
      const lateOutsider = await outsider.call('watchProgress', { workspace_id: 'elsewhere' });
      expect(lateOutsider.result.jobs).toEqual([]);
      expect(outsider.updates(other.result.subscription)).toEqual([]);

      // unwatch releases the subscription: later jobs send nothing to it.
      expect((await watcher.call('unwatch', { subscription: sub.result.subscription })).result).toBe(true);
      const before = watcher.notifications.length;
      await command(url, member, fx.workspaceId, 'indexCode', { repoId: 'big' });
      await late.until(() => late.updates(lateSub.result.subscription).some((p) => p.value.status === 'done' && p.value.seq > lateSub.result.jobs[1].seq));
      expect(watcher.notifications.length).toBe(before);
      await Promise.all([watcher.close(), outsider.close(), late.close()]);
    } finally {
      repo.cleanup();
      await fx.close();
    }
  }, 120_000);

  it('SSE: GET /workspaces/:id/watch/progress streams the snapshot, then coalesced updates ending with done (computeReview)', async () => {
    const fx = await serverFixture();
    const repo = manyFileRepo(150, path.join(fx.dataDir, 'repos', fx.workspaceId));
    try {
      const url = fx.server.url;
      const base = repo.git('rev-parse', 'HEAD');
      repo.write('src/m1/file1.ts', 'export const changed = 1;\n');
      const head = repo.commit('change one file');
      expect((await command(url, fx.ownerToken, fx.workspaceId, 'registerRepo', { repoId: 'big', path: repo.dir })).error).toBeUndefined();
      expect((await command(url, fx.ownerToken, fx.workspaceId, 'requestReview', { repoId: 'big', prNumber: 3, baseSha: base, headSha: head })).error).toBeUndefined();
      const viewer = await tokenFor(url, fx.ownerToken, fx.workspaceId, 'user:sse', 'viewer');

      const controller = new AbortController();
      const res = await fetch(`${url}/workspaces/${fx.workspaceId}/watch/progress?access_token=${viewer}`, { signal: controller.signal });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/event-stream');
      const reader = res.body!.getReader();
      let text = '';
      const pump = (async () => {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return;
          text += Buffer.from(value).toString('utf8');
        }
      })().catch(() => undefined);
      const computed = await command(url, fx.ownerToken, fx.workspaceId, 'computeReview', { repoId: 'big', prNumber: 3 });
      expect(computed.error).toBeUndefined();
      const deadline = Date.now() + 10_000;
      while (!text.includes('"status":"done"') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      controller.abort();
      await pump;
      const events = text.split('\n\n').filter((e) => e.startsWith('event: '));
      expect(events[0]).toMatch(/^event: snapshot\ndata: \{"subscription":"p\d+","jobs":\[\]\}$/);
      const updates = events.slice(1).map((e) => JSON.parse(e.split('\ndata: ')[1]));
      expect(updates.length).toBeGreaterThanOrEqual(1);
      expect(updates.every((u) => u.kind === 'computeReview' && u.prNumber === 3)).toBe(true);
      for (let i = 1; i < updates.length; i++) expect(updates[i].fraction).toBeGreaterThanOrEqual(updates[i - 1].fraction);
      expect(updates.at(-1)).toMatchObject({ status: 'done', fraction: 1 });

      // Guests may not watch (viewer+), even over SSE.
      const guest = await tokenFor(url, fx.ownerToken, fx.workspaceId, 'user:guest', 'guest');
      const refused = await fetch(`${url}/workspaces/${fx.workspaceId}/watch/progress?access_token=${guest}`);
      expect(refused.status).toBe(403);
      expect((await refused.json()).error.data.code).toBe('forbidden');
    } finally {
      repo.cleanup();
      await fx.close();
    }
  }, 120_000);
});
