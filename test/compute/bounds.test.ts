// pixelmatch (visual axis, reached through the compute pipeline) is ESM-only: load the real source as CommonJS under jest.
import '../axes/visual/support/esm';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadConfig } from '../../src/config';
import { BOUNDS, clipId, clipText } from '../../src/events/catalogue/bounds';
import { validateEventData } from '../../src/events/catalogue';
import { newUuidV7 } from '../../src/events/ids';
import type { RecordedEvent } from '../../src/events/envelope';
import { MAX_EVENT_BYTES } from '../../src/events/store/port';
import { computeReview, ReviewComputedData } from '../../src/compute/review';
import { REVIEW_COMPUTED_BYTE_BUDGET } from '../../src/compute/fit-output';
import { GitRepo } from '../../src/git/repo';
import { Ledger, LOCAL_OPERATOR } from '../../src/ledger';
import { GitFixture } from '../support/git-fixture';

jest.setTimeout(180_000);

const fixtures: GitFixture[] = [];
const dirs: string[] = [];
afterAll(() => {
  for (const f of fixtures) f.cleanup();
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

function fixture(): GitFixture {
  const f = new GitFixture('rl-bounds-');
  fixtures.push(f);
  return f;
}

async function compute(f: GitFixture, base: string, head: string): Promise<ReviewComputedData> {
  const workspaceDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-ws-'));
  dirs.push(workspaceDir);
  const repo = await GitRepo.open(f.dir);
  try {
    return (await computeReview({ repo, baseSha: base, headSha: head, workspaceDir })).data;
  } finally {
    repo.close();
  }
}

/** Stages a file by plumbing: paths longer than the file system allows can still be in a git tree. */
function stageByPlumbing(f: GitFixture, file: string, content: string): void {
  const blob = execFileSync('git', ['hash-object', '-w', '--stdin'], { cwd: f.dir, input: content, encoding: 'utf8' }).trim();
  f.git('update-index', '--add', '--cacheinfo', `100644,${blob},${file}`);
}

/** What the command kernel requires of the event before appending it. */
function expectRecordable(data: ReviewComputedData): void {
  expect(() => validateEventData('ReviewComputed', data)).not.toThrow();
  expect(Buffer.byteLength(JSON.stringify(data))).toBeLessThanOrEqual(REVIEW_COMPUTED_BYTE_BUDGET);
  // Every field was bounded where it was produced: the last-line clipper had nothing left to do.
  expect(data.metrics.clippedFields).toBeUndefined();
}

const longName = (i: number, len: number) => `handler${i}_${'x'.repeat(len)}`;

describe('clipping helpers', () => {
  it('clipText keeps short text, and clips long text to the bound with a marker counting the cut', () => {
    expect(clipText('short', 10)).toBe('short');
    const clipped = clipText('a'.repeat(5000), 1000);
    expect(clipped).toHaveLength(1000);
    expect(clipped).toMatch(/… \[\+\d+ chars\]$/);
    expect(Number(/\+(\d+)/.exec(clipped)![1]) + clipped.indexOf('…')).toBe(5000);
  });

  it('clipId keeps ids distinct and stable: two long ids with one prefix clip differently, the same id the same way', () => {
    const a = `${'p/'.repeat(1500)}a.ts#f`;
    const b = `${'p/'.repeat(1500)}b.ts#f`;
    expect(clipId(a, 2000)).toHaveLength(2000);
    expect(clipId(a, 2000)).not.toBe(clipId(b, 2000));
    expect(clipId(a, 2000)).toBe(clipId(a, 2000));
    expect(clipId('x.ts#f', 2000)).toBe('x.ts#f');
  });
});

describe('compute never fails on its own output (pathological inputs)', () => {
  it('a hub called by hundreds of long-named changed functions, ids past their bounds, long manifest entries: the computation is recordable', async () => {
    const f = fixture();
    const callers = (v: number) =>
      "import { hub } from './hub';\n\n" + Array.from({ length: 240 }, (_, i) => `export function ${longName(i, 150)}(): number {\n  return hub(${v});\n}\n`).join('\n');
    f.write('src/hub.ts', 'export function hub(x: number): number {\n  return x + 1;\n}\n');
    f.write('src/callers.ts', callers(1));
    // A path of ~1,900 characters: symbol ids in it pass the 2,000-character bound.
    const deepDir = Array.from({ length: 10 }, (_, i) => `d${i}${'q'.repeat(185)}`).join('/');
    const nested = (v: number) => `export class Outer${'O'.repeat(150)} {\n  method${'m'.repeat(150)}(): number {\n    return ${v};\n  }\n}\n`;
    f.write(`${deepDir}/deep.ts`, nested(1));
    f.write('package.json', JSON.stringify({ name: 'p', version: '1.0.0', dependencies: { left: '1.0.0' } }, null, 2));
    const base = f.commit('base');

    f.write('src/hub.ts', 'export function hub(x: number): number {\n  return x + 2;\n}\n');
    f.write('src/callers.ts', callers(2));
    f.write(`${deepDir}/deep.ts`, nested(2));
    const longDep = `@scope/${'n'.repeat(700)}`;
    f.write('package.json', JSON.stringify({ name: 'p', version: '1.0.0', dependencies: { left: `^${'9'.repeat(800)}.0.0`, [longDep]: '1.0.0', '': '2.0.0' }, devDependencies: { other: 'x'.repeat(600) } }, null, 2));
    f.git('add', '-A');
    // Past the 4,000-character path bound (no file system holds it: written into the index directly).
    const tooLong = `${Array.from({ length: 21 }, (_, i) => `s${i}${'z'.repeat(195)}`).join('/')}/too-long.ts`;
    expect(tooLong.length).toBeGreaterThan(BOUNDS.path);
    stageByPlumbing(f, tooLong, 'export const x = 1;\n');
    // Just under the path bound: its residual fragment id and anchor would pass theirs.
    const nearBound = `${Array.from({ length: 20 }, (_, i) => `t${i}${'w'.repeat(195)}`).join('/')}/near.ts`.slice(-3990);
    stageByPlumbing(f, nearBound.replace(/^\/+/, ''), 'const y = 1;\nconsole.log(y);\n');
    f.git('commit', '-q', '-m', 'head');
    const head = f.git('rev-parse', 'HEAD');

    const data = await compute(f, base, head);
    expectRecordable(data);

    const hubCohort = data.cohorts.find((c) => c.files.includes('src/hub.ts'))!;
    expect(hubCohort.files).toEqual(['src/callers.ts', 'src/hub.ts']);
    const hubStep = hubCohort.readingOrder.steps.find((s) => s.symbolId === 'src/hub.ts#hub')!;
    // Eight names at most, the rest counted; eight 160-character names still pass the bound, so it is clipped too.
    expect(hubStep.why).toMatch(/^modified function, called by handler0_x+, handler100_x+, .*… \[\+\d+ chars\]$/);
    expect(hubStep.why.length).toBeLessThanOrEqual(BOUNDS.readingWhy);

    const deep = data.cohorts.find((c) => c.files.includes(`${deepDir}/deep.ts`))!;
    for (const id of deep.anchors) expect(id.length).toBeLessThanOrEqual(BOUNDS.symbolId);
    expect(deep.anchors.some((id) => /…~[0-9a-f]{16}$/.test(id))).toBe(true);
    expect(deep.title.length).toBeLessThanOrEqual(BOUNDS.cohortTitle);

    const clipped = data.changedFiles.find((c) => c.path.includes('…~'))!;
    expect(clipped.path.length).toBeLessThanOrEqual(BOUNDS.path);
    expect(clipped.role).toBe('other');

    const npm = data.dependencyDiffs.find((d) => d.path === 'package.json')!;
    expect(npm.changes.map((c) => c.name)).not.toContain('');
    expect(npm.changes.every((c) => c.name.length <= BOUNDS.dependencyName && (c.to ?? '').length <= BOUNDS.dependencyVersion)).toBe(true);
  });

  it('a change too large for one event is recorded with its lists capped, and the metrics say what was left out', async () => {
    const f = fixture();
    const file = (i: number, v: number) => Array.from({ length: 90 }, (_, j) => `export function fn${i}_${j}_${'k'.repeat(60)}(): number {\n  return ${v};\n}\n`).join('\n');
    for (let i = 0; i < 120; i++) f.write(`src/m${i}/file${i}.ts`, file(i, 1));
    const base = f.commit('base');
    for (let i = 0; i < 120; i++) f.write(`src/m${i}/file${i}.ts`, file(i, 2));
    const head = f.commit('head');
    const data = await compute(f, base, head);
    expectRecordable(data);
    expect(data.metrics.trimStage).toBeGreaterThanOrEqual(1);
    expect(data.metrics.omittedFragments + data.metrics.omittedReadingSteps).toBeGreaterThan(0);
    // Every changed file is still in exactly one cohort.
    expect(data.cohorts.flatMap((c) => c.files).sort()).toEqual(data.changedFiles.map((c) => c.path).sort());
  });

  it('a PR of 3,000 changed files, one cohort each, is recorded: the riskiest cohorts whole, the rest folded by directory (was payload_too_large)', async () => {
    const f = fixture();
    f.write('src/core.ts', 'export function core(x: number): number {\n  return x;\n}\n');
    const file = (i: number, v: number) => `import { core } from '../core';\nexport function fn${i}(a: number): number {\n  return core(a) + ${v * i};\n}\n`;
    for (let i = 0; i < 3000; i++) f.write(`src/d${i % 40}/f${i}.ts`, file(i, 1));
    const base = f.commit('base');
    for (let i = 0; i < 3000; i++) f.write(`src/d${i % 40}/f${i}.ts`, file(i, 2));
    const head = f.commit('head');
    const data = await compute(f, base, head);
    expectRecordable(data);
    expect(data.metrics.trimStage).toBe(7); // the six list stages did not suffice; folded by directory
    const folded = data.cohorts.filter((c) => c.key.startsWith('f-'));
    const whole = data.cohorts.filter((c) => !c.key.startsWith('f-'));
    expect(whole.length).toBeGreaterThan(100);
    expect(folded.length).toBeGreaterThan(0);
    expect(folded.length).toBeLessThanOrEqual(40);
    expect(data.metrics.foldedCohorts).toBe(data.metrics.cohorts - whole.length);
    for (const c of folded) expect(c).toMatchObject({ grouping: 'path', fragments: [], anchors: [], groupingReason: expect.stringContaining(`folded: this PR's ${data.changedFiles.length} changed files do not fit`) });
    // Ranks run 1..n, the whole cohorts first; every changed file is in exactly one cohort.
    expect(data.cohorts.map((c) => c.rank)).toEqual(data.cohorts.map((_, i) => i + 1));
    expect(data.cohorts.flatMap((c) => c.files).sort()).toEqual(data.changedFiles.map((c) => c.path).sort());
    // The same PR folds to the same keys.
    expect((await compute(f, base, head)).cohorts.map((c) => c.key)).toEqual(data.cohorts.map((c) => c.key));
  });

  it('a large dependency diff every cohort imports, copied into the clues of a hundred cohorts, is recorded once in full, the clues capped', async () => {
    const f = fixture();
    const deps = (v: string) => Object.fromEntries(Array.from({ length: 400 }, (_, i) => [`dependency-number-${i}`, `^${v}.0.0`]));
    // Each module loads all 400 packages: each cohort uses every change, so each one's clue lists them all.
    const imports = Array.from({ length: 400 }, (_, i) => `import 'dependency-number-${i}';\n`).join('');
    f.write('package.json', JSON.stringify({ name: 'p', version: '1.0.0', dependencies: deps('1') }, null, 2));
    for (let i = 0; i < 100; i++) f.write(`src/m${i}.ts`, `${imports}export const v${i} = 1;\n`);
    const base = f.commit('base');
    f.write('package.json', JSON.stringify({ name: 'p', version: '1.0.0', dependencies: deps('2') }, null, 2));
    for (let i = 0; i < 100; i++) f.write(`src/m${i}.ts`, `${imports}export const v${i} = 2;\n`);
    const head = f.commit('head');
    const data = await compute(f, base, head);
    expectRecordable(data);
    expect(data.dependencyDiffs.find((d) => d.path === 'package.json')!.changes).toHaveLength(400);
    expect(data.cohorts.filter((c) => c.clues.length > 0)).toHaveLength(100);
    expect(data.cohorts.every((c) => c.clues.every((clue) => (clue.dependencyChanges?.length ?? 0) <= 20))).toBe(true);
    expect(data.cohorts[0].clues[0].note).toMatch(/400 change\(s\)/);
  });

  it('a large dependency diff no changed file imports is one clue, on the riskiest cohort, in full', async () => {
    const f = fixture();
    const deps = (v: string) => Object.fromEntries(Array.from({ length: 400 }, (_, i) => [`dependency-number-${i}`, `^${v}.0.0`]));
    f.write('package.json', JSON.stringify({ name: 'p', version: '1.0.0', dependencies: deps('1') }, null, 2));
    for (let i = 0; i < 100; i++) f.write(`src/m${i}.ts`, `export const v${i} = 1;\n`);
    const base = f.commit('base');
    f.write('package.json', JSON.stringify({ name: 'p', version: '1.0.0', dependencies: deps('2') }, null, 2));
    for (let i = 0; i < 100; i++) f.write(`src/m${i}.ts`, `export const v${i} = 2;\n`);
    const head = f.commit('head');
    const data = await compute(f, base, head);
    expectRecordable(data);
    const holders = data.cohorts.filter((c) => c.clues.length > 0);
    expect(holders.map((c) => c.rank)).toEqual([1]);
    expect(holders[0].clues).toHaveLength(1);
    expect(holders[0].clues[0].dependencyChanges).toHaveLength(400);
    expect(holders[0].clues[0].note).toMatch(/^npm dependencies changed in package\.json, 400 change\(s\) no changed file imports: dependency-number-0 upgraded/);
  });

  it('through the real command kernel: a pathological PR is recorded as one ReviewComputed event', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-data-'));
    dirs.push(dataDir);
    const ledger = new Ledger(loadConfig({ dataDir }, {}));
    try {
      const ws = 'ws-bounds';
      const who = { ...LOCAL_OPERATOR };
      const run = (cmd: string, payload: unknown) => ledger.run(cmd, ws, { ...who, idempotencyKey: newUuidV7() }, payload);
      await ledger.createWorkspace({ ...LOCAL_OPERATOR, idempotencyKey: newUuidV7() }, { workspaceId: ws });
      const f = fixture();
      f.git('remote', 'add', 'origin', 'git@github.com:acme/bounds.git');
      const callers = (v: number) => "import { hub } from './hub';\n\n" + Array.from({ length: 200 }, (_, i) => `export function ${longName(i, 120)}(): number {\n  return hub(${v});\n}\n`).join('\n');
      f.write('src/hub.ts', 'export function hub(x: number): number {\n  return x;\n}\n');
      f.write('src/callers.ts', callers(1));
      const base = f.commit('base');
      f.write('src/hub.ts', 'export function hub(x: number): number {\n  return -x;\n}\n');
      f.write('src/callers.ts', callers(2));
      const head = f.commit('head');
      await run('registerRepo', { repoId: 'bounds', path: f.dir });
      await run('requestReview', { repoId: 'bounds', prNumber: 1, baseSha: base, headSha: head });
      const out = await run('computeReview', { repoId: 'bounds', prNumber: 1 });
      expect(out.response.eventIds).toHaveLength(1);
      const handle = await ledger.workspace(ws);
      const recorded: RecordedEvent[] = [];
      for await (const e of handle.store.readStream('pr-bounds-1')) if (e.type === 'ReviewComputed') recorded.push(e);
      expect(recorded).toHaveLength(1);
      expect(Buffer.byteLength(JSON.stringify(recorded[0].data))).toBeLessThanOrEqual(MAX_EVENT_BYTES);
    } finally {
      await ledger.close();
    }
  });
});
