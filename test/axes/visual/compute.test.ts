import './support/esm';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { GitRepo } from '../../../src/git/repo';
import { computeVisual, readDiffImage, visualGate, approvalKeyOf } from '../../../src/axes/visual';
import { isGoldenPath } from '../../../src/axes/visual/harness/goldens';
import { closeSharedDiffPools } from '../../../src/axes/visual/pool';
import { GitFixture } from '../../support/git-fixture';
import { blank, clone, fromPng, setPixel, toPng, uiLike } from './support/images';

afterAll(() => closeSharedDiffPools());

describe('committed goldens harness + computeVisual', () => {
  let fx: GitFixture;
  let repo: GitRepo;
  let workspaceDir: string;
  let baseSha: string;
  const ui = uiLike(200, 120);

  beforeEach(async () => {
    fx = new GitFixture('rl-visual-');
    workspaceDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-visual-ws-'));
    fx.write('README.md', 'app\n');
    fx.write('goldens/identical.png', toPng(ui));
    fx.write('goldens/one-pixel.png', toPng(ui));
    fx.write('test/__screenshots__/text-shift.png', toPng(uiLike(200, 120, 128)));
    fx.write('e2e/home.spec.ts-snapshots/resized.png', toPng(blank(50, 40)));
    fx.write('src/button.golden.png', toPng(blank(30, 30, [0, 0, 255, 255])));
    fx.write('__image_snapshots__/broken.png', toPng(blank(10, 10)));
    baseSha = fx.commit('base');
    repo = await GitRepo.open(fx.dir);
  });
  afterEach(() => {
    repo.close();
    fx.cleanup();
    fs.rmSync(workspaceDir, { recursive: true, force: true });
  });

  const compute = async (headSha: string, extra: { parallelism?: number } = {}) =>
    computeVisual({ repo, baseSha, headSha, changedFiles: await repo.diffNameStatus(baseSha, headSha), workspaceDir, ...extra });

  function makeHead(): string {
    // Same pixels, different bytes: a re-encode must not count as a change.
    fx.write('goldens/identical.png', toPng(ui, { colorType: 2 }));
    fx.write('goldens/one-pixel.png', toPng(setPixel(clone(ui), 150, 3, [255, 0, 0, 255])));
    fx.write('test/__screenshots__/text-shift.png', toPng(uiLike(200, 120, 190)));
    fx.write('e2e/home.spec.ts-snapshots/resized.png', toPng(blank(50, 44)));
    fx.write('goldens/new-dialog.png', toPng(blank(20, 20, [9, 9, 9, 255])));
    fx.remove('src/button.golden.png');
    fx.write('__image_snapshots__/broken.png', Buffer.from('\x89PNG\r\n\x1a\nthis is not really a png'));
    fx.write('src/app.ts', 'export const x = 1;\n');
    return fx.commit('head');
  }

  it('recognises the golden locations', () => {
    for (const p of ['goldens/a.png', 'x/goldens/a.png', 'a/__screenshots__/b.png', '__image_snapshots__/c.png', 'e2e/t.spec.ts-snapshots/d.png', 'src/w.golden.png'])
      expect(isGoldenPath(p)).toBe(true);
    for (const p of ['src/logo.png', 'goldens/notes.txt', 'docs/goldens.png', 'assets/snapshots/a.png']) expect(isGoldenPath(p)).toBe(false);
  });

  it('gives each changed golden its state, stores diff images and holds the gate on changes, removals and errors', async () => {
    const headSha = makeHead();
    const v = await compute(headSha);
    expect(v.status).toBe('pass');
    const byId = Object.fromEntries(v.snapshots.map((s) => [s.snapshotId, s]));
    expect(Object.keys(byId).sort()).toEqual([
      '__image_snapshots__/broken.png',
      'e2e/home.spec.ts-snapshots/resized.png',
      'goldens/identical.png',
      'goldens/new-dialog.png',
      'goldens/one-pixel.png',
      'src/button.golden.png',
      'test/__screenshots__/text-shift.png',
    ]);
    expect(byId['goldens/identical.png']).toMatchObject({ state: 'unchanged', changedPixels: 0 });
    expect(byId['test/__screenshots__/text-shift.png']).toMatchObject({ state: 'unchanged', changedPixels: 0 });
    expect(byId['goldens/one-pixel.png']).toMatchObject({ state: 'changed', changedPixels: 1, width: 200, height: 120 });
    expect(byId['e2e/home.spec.ts-snapshots/resized.png']).toMatchObject({ state: 'changed', changedRatio: 1, width: 50, height: 44 });
    expect(byId['goldens/new-dialog.png']).toMatchObject({ state: 'added', width: 20, height: 20 });
    expect(byId['src/button.golden.png']).toMatchObject({ state: 'removed' });
    expect(byId['__image_snapshots__/broken.png'].error).toMatch(/^head image: /);

    // The diff image is stored under its content hash and is a real PNG marking the changed pixel.
    const diffHash = byId['goldens/one-pixel.png'].diffHash!;
    expect(diffHash).toMatch(/^[0-9a-f]{64}$/);
    const stored = await readDiffImage(workspaceDir, diffHash);
    expect(stored).not.toBeNull();
    const diff = fromPng(stored!);
    expect([...diff.data.subarray((3 * 200 + 150) * 4, (3 * 200 + 150) * 4 + 4)]).toEqual([255, 0, 0, 255]);
    expect(fs.readdirSync(path.join(workspaceDir, 'visual')).filter((f) => f.endsWith('.tmp'))).toEqual([]);

    const gate = visualGate(v, new Set());
    expect(gate.status).toBe('fail');
    expect(gate.pending.sort()).toEqual(['__image_snapshots__/broken.png', 'e2e/home.spec.ts-snapshots/resized.png', 'goldens/one-pixel.png', 'src/button.golden.png']);
  });

  it('approving every held snapshot opens the gate; a new head image closes it again', async () => {
    const headSha = makeHead();
    const first = await compute(headSha);
    const approvals = new Set(visualGate(first, new Set()).pending.map((id) => approvalKeyOf(first.snapshots.find((s) => s.snapshotId === id)!)!));
    expect(visualGate(first, approvals).status).toBe('warn');

    // A recompute of the same head keeps the approvals.
    expect(visualGate(await compute(headSha), approvals).status).toBe('warn');

    // The author pushes another change to one approved golden: that approval no longer applies.
    fx.write('goldens/one-pixel.png', toPng(setPixel(clone(ui), 151, 3, [255, 0, 0, 255])));
    const next = await compute(fx.commit('head 2'));
    const gate = visualGate(next, approvals);
    expect(gate.status).toBe('fail');
    expect(gate.pending).toEqual(['goldens/one-pixel.png']);
  });

  it('gives the same snapshots in worker threads as in this thread', async () => {
    const headSha = makeHead();
    const serial = await compute(headSha, { parallelism: 1 });
    const pooled = await compute(headSha, { parallelism: 2 });
    expect(pooled).toEqual(serial);
  });

  it('treats a golden moved unchanged as unchanged under its new path', async () => {
    fx.git('mv', 'goldens/identical.png', 'goldens/renamed.png');
    const v = await compute(fx.commit('rename'));
    expect(v.snapshots).toEqual([expect.objectContaining({ snapshotId: 'goldens/renamed.png', state: 'unchanged' })]);
  });

  it('is not applicable when the PR changes no golden and no configured UI', async () => {
    fx.write('src/app.ts', 'export const y = 2;\n');
    fx.write('README.md', 'changed\n');
    const v = await compute(fx.commit('code only'));
    expect(v).toEqual({ status: 'not_applicable', reason: expect.any(String), snapshots: [] });
    expect(visualGate(v, new Set()).status).toBe('not_applicable');
  });
});

describe('readDiffImage', () => {
  it('refuses anything but a sha256 hex digest before touching the file system', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-visual-ws-'));
    try {
      fs.mkdirSync(path.join(dir, 'visual'));
      fs.writeFileSync(path.join(dir, 'secret.png'), 'x');
      expect(await readDiffImage(dir, '../secret')).toBeNull();
      expect(await readDiffImage(dir, 'A'.repeat(64))).toBeNull();
      expect(await readDiffImage(dir, 'a'.repeat(64))).toBeNull();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
