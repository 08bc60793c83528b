import './support/esm';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { GitRepo } from '../../../src/git/repo';
import { computeVisual, visualGate } from '../../../src/axes/visual';
import { closeSharedDiffPools } from '../../../src/axes/visual/pool';
import { GitFixture } from '../../support/git-fixture';
import { blank, fromPng, toPng } from './support/images';

/** A real render command: a node script that draws a button from src/theme.json and writes PNGs. */
const RENDER_SCRIPT = `
const fs = require('fs'), zlib = require('zlib'), path = require('path');
const theme = JSON.parse(fs.readFileSync('src/theme.json', 'utf8'));
function png(w, h, px) {
  const raw = Buffer.alloc(h * (w * 4 + 1));
  for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) raw.set(px(x, y), y * (w * 4 + 1) + 1 + x * 4);
  const chunk = (t, d) => { const l = Buffer.alloc(4); l.writeUInt32BE(d.length); const td = Buffer.concat([Buffer.from(t), d]); const c = Buffer.alloc(4); c.writeUInt32BE(zlib.crc32(td)); return Buffer.concat([l, td, c]); };
  const ih = Buffer.alloc(13); ih.writeUInt32BE(w, 0); ih.writeUInt32BE(h, 4); ih[8] = 8; ih[9] = 6;
  return Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk('IHDR', ih), chunk('IDAT', zlib.deflateSync(raw)), chunk('IEND', Buffer.alloc(0))]);
}
const out = process.env.REVIEW_LEDGER_OUTPUT_DIR;
fs.mkdirSync(path.join(out, 'cards'), { recursive: true });
fs.writeFileSync(path.join(out, 'cards', 'primary.png'), png(40, 20, (x) => (x < theme.buttonWidth ? [...theme.color, 255] : [255, 255, 255, 255])));
fs.writeFileSync(path.join(out, 'static.png'), png(10, 10, () => [1, 2, 3, 255]));
`;

/** Gone, or a zombie waiting for a container init that does not reap: either way no longer running. */
function isRunning(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^\d+ \(.*\) [ZX]/.test(stat);
  } catch {
    return false;
  }
}

afterAll(() => closeSharedDiffPools());

describe('render-command harness', () => {
  let fx: GitFixture;
  let repo: GitRepo;
  let workspaceDir: string;
  let scratch: string;
  let baseSha: string;

  beforeEach(async () => {
    fx = new GitFixture('rl-visual-render-');
    workspaceDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-visual-ws-'));
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-visual-scratch-'));
    fx.write('render.js', RENDER_SCRIPT);
    fx.write('src/theme.json', JSON.stringify({ color: [0, 90, 200], buttonWidth: 30 }));
    fx.write('docs/guide.md', 'guide\n');
    fx.write('.review-ledger.json', JSON.stringify({ visual: { renderCommand: 'node render.js', outputDir: 'out/snapshots', timeoutMs: 20000, paths: ['src/**'] } }));
    baseSha = fx.commit('base');
    repo = await GitRepo.open(fx.dir);
  });
  afterEach(() => {
    repo.close();
    fx.cleanup();
    fs.rmSync(workspaceDir, { recursive: true, force: true });
    fs.rmSync(scratch, { recursive: true, force: true });
  });

  // The repo's own .review-ledger.json counts only where the operator enabled it (test/security covers
  // the refusal); these tests are about what an enabled render does.
  const compute = async (headSha: string, renderCommand?: { command: string; outputDir: string; timeoutMs?: number }) =>
    computeVisual({ repo, baseSha, headSha, changedFiles: await repo.diffNameStatus(baseSha, headSha), workspaceDir, renderCommand, repoRenderConfig: true });
  const worktrees = () => fx.git('worktree', 'list', '--porcelain').split('\n').filter((l) => l.startsWith('worktree ')).length;

  it('runs the command from .review-ledger.json in base and head worktrees and diffs what it wrote', async () => {
    fx.write('src/theme.json', JSON.stringify({ color: [0, 90, 200], buttonWidth: 34 }));
    const v = await compute(fx.commit('wider button'));
    expect(v.status).toBe('pass');
    expect(v.snapshots.map((s) => [s.snapshotId, s.harness, s.state])).toEqual([
      ['render:cards/primary.png', 'render', 'changed'],
      ['render:static.png', 'render', 'unchanged'],
    ]);
    expect(v.snapshots[0]).toMatchObject({ changedPixels: 4 * 20, width: 40, height: 20 });
    expect(visualGate(v, new Set()).status).toBe('fail');
    expect(worktrees()).toBe(1);
  });

  it('renders two PRs of the same repo concurrently without their worktrees colliding', async () => {
    fx.write('src/theme.json', JSON.stringify({ color: [0, 90, 200], buttonWidth: 32 }));
    const headA = fx.commit('a');
    fx.write('src/theme.json', JSON.stringify({ color: [0, 90, 200], buttonWidth: 36 }));
    const headB = fx.commit('b');
    const [a, b] = await Promise.all([compute(headA), compute(headB)]);
    expect([a.status, b.status]).toEqual(['pass', 'pass']);
    expect(a.snapshots[0]).toMatchObject({ state: 'changed', changedPixels: 2 * 20 });
    expect(b.snapshots[0]).toMatchObject({ state: 'changed', changedPixels: 6 * 20 });
    expect(worktrees()).toBe(1);
  });

  it('is not applicable when the PR touches none of the configured UI paths', async () => {
    fx.write('docs/guide.md', 'more guide\n');
    expect((await compute(fx.commit('docs'))).status).toBe('not_applicable');
  });

  it('reads the configuration from the base, so a PR cannot choose the command the host runs', async () => {
    fx.write('.review-ledger.json', JSON.stringify({ visual: { renderCommand: `touch ${path.join(scratch, 'pwned')}`, outputDir: 'out', paths: ['**'] } }));
    fx.write('src/theme.json', JSON.stringify({ color: [0, 90, 200], buttonWidth: 30, unused: true }));
    const v = await compute(fx.commit('change the command'));
    expect(v.status).toBe('pass');
    expect(fs.existsSync(path.join(scratch, 'pwned'))).toBe(false);
  });

  it('a render command that hangs is killed at the timeout with its process group, the worktree is removed, and the axis is not pass', async () => {
    // The command runs in the sandbox (its own pid namespace, no view of this test's folders), so the
    // sleeper is found from outside by a marker argument unique to this run.
    const marker = `61.${process.pid}${Date.now() % 1000}`;
    const sleepers = () =>
      fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p) && isRunning(Number(p)) && (() => {
        try {
          return fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0').includes(marker);
        } catch {
          return false;
        }
      })());
    // The shell starts a background sleeper too: killing only the shell would leave it running.
    const command = `sleep ${marker} & wait`;
    fx.write('src/theme.json', JSON.stringify({ color: [1, 2, 3], buttonWidth: 30 }));
    const started = Date.now();
    const pending = compute(fx.commit('head'), { command, outputDir: 'out', timeoutMs: 1500 });
    for (let i = 0; i < 100 && sleepers().length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(sleepers().length).toBe(1);
    const v = await pending;
    expect(Date.now() - started).toBeLessThan(15000);
    expect(v.status).toBe('unavailable');
    expect(v.reason).toMatch(/render: render command timed out after 1500 ms on base/);
    expect(visualGate(v, new Set()).status).toBe('unavailable');
    for (let i = 0; i < 50 && sleepers().length > 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(sleepers()).toEqual([]);
    expect(worktrees()).toBe(1);
  });

  it('a crashing render command with changed goldens makes the axis partial, never pass', async () => {
    fx.write('goldens/a.png', toPng(blank(4, 4)));
    const withGolden = fx.commit('golden');
    fx.write('goldens/a.png', toPng(blank(4, 4, [0, 0, 0, 255])));
    fx.write('src/theme.json', JSON.stringify({ color: [9, 9, 9], buttonWidth: 30 }));
    const head = fx.commit('head');
    const v = await computeVisual({
      repo,
      baseSha: withGolden,
      headSha: head,
      changedFiles: await repo.diffNameStatus(withGolden, head),
      workspaceDir,
      renderCommand: { command: 'echo "renderer exploded" >&2; exit 3', outputDir: 'out' },
      repoRenderConfig: true,
    });
    expect(v.status).toBe('partial');
    expect(v.reason).toMatch(/render command failed on base \([0-9a-f]{12}\) with exit code 3: renderer exploded/);
    expect(v.snapshots.map((s) => [s.snapshotId, s.state])).toEqual([['goldens/a.png', 'changed']]);
    // Even with the golden approved, a partial axis stays partial.
    expect(visualGate(v, new Set([v.snapshots[0].headHash!])).status).toBe('partial');
    expect(worktrees()).toBe(1);
  });

  it('an invalid .review-ledger.json makes the harness unavailable with a reason naming the field', async () => {
    fx.write('.review-ledger.json', JSON.stringify({ visual: { renderCommand: 'node render.js', outputDir: 'out', timeoutMs: -5 } }));
    const base2 = fx.commit('bad config');
    fx.write('src/theme.json', JSON.stringify({ color: [1, 1, 1], buttonWidth: 30 }));
    const head = fx.commit('head');
    const v = await computeVisual({ repo, baseSha: base2, headSha: head, changedFiles: await repo.diffNameStatus(base2, head), workspaceDir, repoRenderConfig: true });
    expect(v.status).toBe('unavailable');
    expect(v.reason).toMatch(/visual\.timeoutMs/);
  });

  it('stores the diff image of a rendered change', async () => {
    fx.write('src/theme.json', JSON.stringify({ color: [200, 0, 0], buttonWidth: 30 }));
    const v = await compute(fx.commit('red button'));
    const changed = v.snapshots.find((s) => s.state === 'changed')!;
    const diff = fromPng(fs.readFileSync(path.join(workspaceDir, 'visual', `${changed.diffHash}.png`)));
    expect([diff.width, diff.height]).toEqual([40, 20]);
  });
});
