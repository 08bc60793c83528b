import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startServer } from '../../src/server/bootstrap';
import { GitFixture } from '../support/git-fixture';
import { blank, toPng } from '../axes/visual/support/images';
import { call, command } from '../rpc/support';
import { closeSharedDiffPools } from '../../src/axes/visual/pool';

afterAll(() => closeSharedDiffPools());

const ROOT = path.resolve(__dirname, '../..');

/** Every file and folder under `dir` (not following symlinks), with its mode. */
function walk(dir: string, skip: (p: string) => boolean): Array<{ p: string; mode: number; dir: boolean }> {
  const out: Array<{ p: string; mode: number; dir: boolean }> = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (skip(p) || e.isSymbolicLink()) continue;
    const st = fs.lstatSync(p);
    out.push({ p, mode: st.mode & 0o777, dir: e.isDirectory() });
    if (e.isDirectory()) out.push(...walk(p, skip));
  }
  return out;
}

describe('data at rest', () => {
  it('the data dir, every store file and every stored artefact are readable by the server user only (0700 / 0600)', async () => {
    const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-at-rest-'));
    const dataDir = path.join(parent, 'data');
    const server = await startServer({ dataDir, port: 0 });
    try {
      const owner = fs.readFileSync(path.join(dataDir, 'owner-token'), 'utf8').trim();
      const git = new GitFixture('shop-', path.join(dataDir, 'repos', 'default'));
      git.git('remote', 'add', 'origin', 'https://github.com/acme/shop.git');
      git.write('goldens/a.png', toPng(blank(8, 8)));
      git.write('src/a.ts', 'export const a = 1;\n');
      const base = git.commit('base');
      git.write('goldens/a.png', toPng(blank(8, 8, [0, 0, 0, 255])));
      git.write('src/a.ts', 'export const a = 2;\n');
      const head = git.commit('head');
      const rpc = (m: string, p: Record<string, unknown>) => command(server.url, owner, 'default', m, p);
      expect((await rpc('createWorkspace', { workspaceId: 'second' })).error).toBeUndefined();
      expect((await rpc('registerRepo', { repoId: 'shop', path: git.dir })).error).toBeUndefined();
      expect((await rpc('requestReview', { repoId: 'shop', prNumber: 1, baseSha: base, headSha: head })).error).toBeUndefined();
      expect((await rpc('computeReview', { repoId: 'shop', prNumber: 1 })).error).toBeUndefined();
      // An audit query opens the read models: one SQLite file per model, written by their own threads.
      expect((await call(server.url, owner, 'review_studio.audit', { workspace_id: 'default' })).error).toBeUndefined();
      const modelWals = ['audit', 'history'].map((m) => path.join(dataDir, 'workspaces', 'default', `readmodels.${m}.db-wal`));
      for (const until = Date.now() + 10_000; !modelWals.every((f) => fs.existsSync(f)) && Date.now() < until; ) await new Promise((r) => setTimeout(r, 50));
      const entries = walk(dataDir, (p) => p.startsWith(path.join(dataDir, 'repos') + path.sep));
      // The run wrote the stores, the facts cache and a diff image.
      expect(entries.some((e) => e.p.endsWith('workspace.db'))).toBe(true);
      expect(entries.some((e) => e.p.endsWith('codegraph.db'))).toBe(true);
      expect(entries.some((e) => e.p.endsWith('readmodels.audit.db'))).toBe(true);
      expect(entries.some((e) => e.p.endsWith('readmodels.history.db-wal'))).toBe(true);
      expect(entries.some((e) => e.p.includes(`${path.sep}visual${path.sep}`) && e.p.endsWith('.png'))).toBe(true);
      const open = entries.filter((e) => (e.mode & 0o077) !== 0).map((e) => `${path.relative(dataDir, e.p)} ${e.mode.toString(8)}`);
      expect(open).toEqual([]);
      expect(fs.statSync(dataDir).mode & 0o077).toBe(0);
    } finally {
      await server.close();
      fs.rmSync(parent, { recursive: true, force: true });
    }
  });

  it('a full disk answers store_unavailable (not internal) and /health says degraded; freeing space recovers (real tmpfs, in bubblewrap)', () => {
    const mount = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-full-disk-'));
    try {
      // A 24 MiB tmpfs over `mount`, visible to the child only: its disk really fills up.
      const out = execFileSync(
        'bwrap',
        ['--dev-bind', '/', '/', '--size', String(24 * 1024 * 1024), '--tmpfs', mount, '--die-with-parent', process.execPath, '-r', path.join(ROOT, 'tools/ts-register.js'), path.join(__dirname, 'full-disk-child.ts'), path.join(mount, 'data')],
        { cwd: ROOT, encoding: 'utf8', timeout: 120_000 },
      );
      const r = JSON.parse(out.trim().split('\n').pop()!);
      expect(r.before).toEqual({ command: 'ok', health: 'ok' });
      expect(r.whenFull.health).toBe('degraded');
      expect(r.whenFull.commands).toContain('store_unavailable');
      expect(r.whenFull.commands).not.toContain('internal');
      expect(r.after).toEqual({ command: 'ok', health: 'ok' });
    } finally {
      fs.rmSync(mount, { recursive: true, force: true });
    }
  });
});
