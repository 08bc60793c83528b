import '../axes/visual/support/esm';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startServer, type RunningServer } from '../../src/server/bootstrap';
import { closeSharedDiffPools } from '../../src/axes/visual/pool';
import { GitFixture } from '../support/git-fixture';
import { blank, toPng } from '../axes/visual/support/images';
import { command } from '../rpc/support';

/**
 * SPEC §16 "render commands come only from operator configuration": never an RPC field, and a repo's own
 * .review-ledger.json only where the operator enabled it for that repo.
 */
afterAll(() => closeSharedDiffPools());

const WS = 'default';

async function serverWith(operatorConfig: object | undefined) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-render-op-'));
  let configFile: string | undefined;
  if (operatorConfig) {
    configFile = path.join(dataDir, '..', `${path.basename(dataDir)}.config.json`);
    fs.writeFileSync(configFile, JSON.stringify(operatorConfig));
  }
  const server: RunningServer = await startServer({ dataDir, port: 0, ...(configFile ? { configFile } : {}) } as never);
  const ownerToken = fs.readFileSync(path.join(dataDir, 'owner-token'), 'utf8').trim();
  // A repo inside the server's repo root (where RPC registrations live).
  const git = new GitFixture('widgets-', path.join(dataDir, 'repos', WS));
  git.git('remote', 'add', 'origin', 'https://github.com/acme/widgets.git');
  const marker = path.join(os.tmpdir(), `rl-render-op-ran-${process.pid}-${Date.now()}`);
  git.write('fixtures/a.png', toPng(blank(4, 4, [0, 0, 0, 255])));
  git.write('fixtures/b.png', toPng(blank(4, 4, [255, 255, 255, 255])));
  git.write('src/theme.txt', 'a\n');
  git.write('.review-ledger.json', JSON.stringify({ visual: { renderCommand: `touch ${marker}; mkdir -p out; cp fixtures/$(cat src/theme.txt).png out/card.png`, outputDir: 'out', paths: ['src/**'] } }));
  const base = git.commit('base');
  git.write('src/theme.txt', 'b\n');
  const head = git.commit('head');
  const rpc = (method: string, payload: Record<string, unknown>) => command(server.url, ownerToken, WS, method, payload);
  const visualOf = async () => {
    const ws = await server.ledger.workspace(WS);
    let visual: any;
    for await (const e of ws.store.readAll()) if (e.type === 'ReviewComputed') visual = (e.data as any).visual;
    return visual;
  };
  return {
    server,
    git,
    base,
    head,
    marker,
    rpc,
    visualOf,
    async close() {
      await server.close();
      git.cleanup();
      fs.rmSync(dataDir, { recursive: true, force: true });
      if (configFile) fs.rmSync(configFile, { force: true });
      fs.rmSync(marker, { force: true });
    },
  };
}

describe('render commands are operator configuration', () => {
  it('registerRepo over RPC refuses config.renderCommand with an error naming the field and where it belongs', async () => {
    const s = await serverWith(undefined);
    try {
      const r = await s.rpc('registerRepo', { repoId: 'widgets', path: s.git.dir, config: { renderCommand: 'cat /etc/shadow', renderOutputDir: 'out' } });
      expect(r.error?.data?.code).toBe('render_command_not_accepted');
      expect(r.error?.message).toMatch(/config\.renderCommand: render commands are operator configuration/);
      // Refused means nothing recorded: the repo is not registered.
      const again = await s.rpc('registerRepo', { repoId: 'widgets', path: s.git.dir });
      expect(again.error).toBeUndefined();
      expect(again.result.result.alreadyRegistered).toBeUndefined();
    } finally {
      await s.close();
    }
  });

  it("a repo's .review-ledger.json render command is not run unless the operator enabled it; the axis says why", async () => {
    const s = await serverWith(undefined);
    try {
      expect((await s.rpc('registerRepo', { repoId: 'widgets', path: s.git.dir })).error).toBeUndefined();
      expect((await s.rpc('requestReview', { repoId: 'widgets', prNumber: 1, baseSha: s.base, headSha: s.head })).error).toBeUndefined();
      const c = await s.rpc('computeReview', { repoId: 'widgets', prNumber: 1 });
      expect(c.error).toBeUndefined();
      expect(fs.existsSync(s.marker)).toBe(false);
      const visual = await s.visualOf();
      expect(visual.status).toBe('unavailable');
      expect(visual.reason).toMatch(/the operator has not enabled repo configuration for default\/widgets/);
    } finally {
      await s.close();
    }
  });

  it('the operator config names the command per repo; it runs (sandboxed) and renders', async () => {
    const s = await serverWith({ render: { repos: { 'default/widgets': { command: 'mkdir -p shots && cp fixtures/$(cat src/theme.txt).png shots/card.png', outputDir: 'shots', paths: ['src/**'] } } } });
    try {
      expect((await s.rpc('registerRepo', { repoId: 'widgets', path: s.git.dir })).error).toBeUndefined();
      expect((await s.rpc('requestReview', { repoId: 'widgets', prNumber: 1, baseSha: s.base, headSha: s.head })).error).toBeUndefined();
      expect((await s.rpc('computeReview', { repoId: 'widgets', prNumber: 1 })).error).toBeUndefined();
      const visual = await s.visualOf();
      expect(visual.status).toBe('pass');
      expect(visual.snapshots.map((x: any) => [x.snapshotId, x.state])).toEqual([['render:card.png', 'changed']]);
      expect(fs.existsSync(s.marker)).toBe(false);
    } finally {
      await s.close();
    }
  });

  it('"repoConfig": true lets that repo\'s own .review-ledger.json choose, inside the sandbox', async () => {
    const s = await serverWith({ render: { repos: { 'default/widgets': { repoConfig: true } } } });
    try {
      expect((await s.rpc('registerRepo', { repoId: 'widgets', path: s.git.dir })).error).toBeUndefined();
      expect((await s.rpc('requestReview', { repoId: 'widgets', prNumber: 1, baseSha: s.base, headSha: s.head })).error).toBeUndefined();
      expect((await s.rpc('computeReview', { repoId: 'widgets', prNumber: 1 })).error).toBeUndefined();
      const visual = await s.visualOf();
      expect(visual.status).toBe('pass');
      expect(visual.snapshots.map((x: any) => [x.snapshotId, x.state])).toEqual([['render:card.png', 'changed']]);
      // The command's `touch` of a host path ran in the sandbox, where that path does not exist.
      expect(fs.existsSync(s.marker)).toBe(false);
    } finally {
      await s.close();
    }
  });
});
