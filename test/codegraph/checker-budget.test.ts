import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { closeCheckerThread } from '../../src/codegraph/checker/checker-thread';
import { CHECKER_LIMITS, clearCheckerSourceCache } from '../../src/codegraph/checker/type-edges';
import { computeReview, inputsDigestOf, REVIEW_ENGINE_VERSION, type ReviewComputedData } from '../../src/compute/review';
import { validateEventData } from '../../src/events/catalogue';
import { BOUNDS } from '../../src/events/catalogue/bounds';
import { DomainError } from '../../src/domain-error';
import { defaultOperatorConfig, loadOperatorConfig } from '../../src/operator-config';
import { gitRepoSuite } from '../support/git-repo-suite';

jest.setTimeout(120_000);

/**
 * A hostile file for TypeScript's checker: each `vN.make` makes the checker build the 10,000-member
 * template-literal union `KN` and a mapped type over it (about 11,000 types per identifier), 400 times —
 * several seconds per hundred identifiers, each one a new cost no cache shares.
 */
function hostileFile(n: number): string {
  let s = "type D = '0' | '1' | '2' | '3' | '4' | '5' | '6' | '7' | '8' | '9';\n";
  for (let i = 0; i < n; i++) s += `type K${i} = \`\${D}\${D}\${D}\${D}k${i}\`;\nexport declare const v${i}: { [P in K${i}]: P };\nexport const r${i} = v${i}.make;\n`;
  return s;
}

/**
 * Everything a replay compares: the recorded result but its metrics (informative only: timings, and what
 * the workspace's caches held), with the checker's own counts, which must not depend on either.
 */
function replayBytes(data: ReviewComputedData): string {
  const m = data.metrics;
  const checker = { edges: m.checkerEdges, resolved: m.resolvedEdges, skipped: m.checkerSkippedFiles, failedSafe: m.checkerFailedSafe };
  return JSON.stringify({ ...data, metrics: checker });
}

/** The checker's deterministic caps and its wall-clock safety limit (type-edges.ts, checker-thread.ts). */
describe('checker budget: a hostile PR cannot hold the host, and the review says why', () => {
  const suite = gitRepoSuite('rl-checker-budget-', (f) => {
    f.write('tsconfig.json', '{ "compilerOptions": { "strict": true, "module": "esnext", "moduleResolution": "bundler" } }\n');
    f.write('src/job.ts', 'export class Job {\n  run(): number {\n    return 1;\n  }\n}\nexport function make(): Job {\n  return new Job();\n}\n');
    f.write('src/use.ts', "import { make } from './job';\nexport function go(): number {\n  return make().run();\n}\n");
    const c1 = f.commit('one');
    // The PR: job.ts and use.ts change (the checker binds use.ts's `.run()` to Job.run), a hostile file is
    // added after them, and one more ordinary file after it.
    f.write('src/job.ts', 'export class Job {\n  run(): number {\n    return 2;\n  }\n}\nexport function make(): Job {\n  return new Job();\n}\n');
    f.write('src/use.ts', "import { make } from './job';\nexport function go(): number {\n  return make().run() + 1;\n}\n");
    f.write('src/zz-hostile.ts', hostileFile(400));
    f.write('src/zzz-after.ts', "import { make } from './job';\nexport function after(): number {\n  return make().run();\n}\n");
    const c2 = f.commit('hostile');
    for (let i = 0; i < 25; i++) f.write(`src/many/f${String(i).padStart(2, '0')}.ts`, `import { make } from '../job';\nexport function f${i}(): number {\n  return make().run() + ${i};\n}\n`);
    const c3 = f.commit('many');
    return [c1, c2, c3];
  });
  const workspaces: string[] = [];
  const workspace = () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-cb-ws-'));
    workspaces.push(dir);
    return dir;
  };
  afterAll(async () => {
    await closeCheckerThread();
    for (const d of workspaces) fs.rmSync(d, { recursive: true, force: true });
  });
  const checkerEdgeInto = (r: Awaited<ReturnType<typeof computeReview>>, from: string) => r.head!.edges.some((e) => e.fromFile === from && e.to === 'src/job.ts#Job.run' && e.provenance === 'checker');

  it('with the default caps, the type-work cap stops the walk at the hostile file: the files before it keep their checker edges, it and every file after it are listed with the reason', async () => {
    const [c1, c2] = suite.commits;
    const started = performance.now();
    const r = await computeReview({ repo: suite.repo, baseSha: c1, headSha: c2, workspaceDir: workspace() });
    const ms = performance.now() - started;
    validateEventData('ReviewComputed', r.data);
    expect(r.data.typeEdges).toEqual({
      status: 'partial',
      skippedFiles: [
        { path: 'src/zz-hostile.ts', side: 'head', reason: `type edges skipped: the checker reached its cap of ${CHECKER_LIMITS.maxTypeWork} type operations` },
        { path: 'src/zzz-after.ts', side: 'head', reason: `type edges skipped: the checker reached its cap of ${CHECKER_LIMITS.maxTypeWork} type operations` },
      ],
    });
    expect(r.data.metrics.checkerFailedSafe).toBe(0);
    expect(r.data.metrics.checkerSkippedFiles).toBe(2);
    // The cap is a count: the checker stopped at the first question past it, the hostile file's 400 never all asked.
    expect(r.data.metrics.checkerTypeWork).toBeGreaterThanOrEqual(CHECKER_LIMITS.maxTypeWork);
    expect(r.data.metrics.checkerTypeWork).toBeLessThan(CHECKER_LIMITS.maxTypeWork + 50_000);
    expect(checkerEdgeInto(r, 'src/use.ts')).toBe(true);
    // zzz-after.ts was not walked: its reference keeps the syntactic edges alone.
    expect(checkerEdgeInto(r, 'src/zzz-after.ts')).toBe(false);
    // The host's bound: the deterministic cap, well inside the wall-clock safety limit.
    expect(ms).toBeLessThan(CHECKER_LIMITS.safetyMs / 2);
  });

  it('is deterministic with the caps hit: the same input gives the same bytes on a new workspace, on a new checker thread, with parsed files reused and cold', async () => {
    const [c1, c2] = suite.commits;
    const ws = workspace();
    clearCheckerSourceCache();
    const first = await computeReview({ repo: suite.repo, baseSha: c1, headSha: c2, workspaceDir: ws });
    await closeCheckerThread();
    const ws2 = workspace();
    const freshThread = await computeReview({ repo: suite.repo, baseSha: c1, headSha: c2, workspaceDir: ws2 });
    // Parses are reused within a workspace only (the scope test below): ws2's run left them on the new thread.
    const warm = await computeReview({ repo: suite.repo, baseSha: c1, headSha: c2, workspaceDir: ws2 });
    clearCheckerSourceCache();
    const cold = await computeReview({ repo: suite.repo, baseSha: c1, headSha: c2, workspaceDir: ws });
    expect(first.data.typeEdges?.status).toBe('partial');
    expect(first.data.metrics.checkerReusedSourceFiles).toBe(0);
    expect(warm.data.metrics.checkerReusedSourceFiles).toBeGreaterThan(0);
    for (const other of [freshThread, warm, cold]) {
      expect(replayBytes(other.data)).toBe(replayBytes(first.data));
      // A truncated walk is not stored, so each of these ran the checker again and stopped at the same identifier.
      expect([other.data.metrics.checkerQueries, other.data.metrics.checkerTypeWork]).toEqual([first.data.metrics.checkerQueries, first.data.metrics.checkerTypeWork]);
    }
  });

  it('past the wall-clock safety limit the checker thread is terminated and the whole review is syntax-only, said so; the verdict is stored, so a recomputation gives the same bytes', async () => {
    const [c1, c2] = suite.commits;
    const ws = workspace();
    const limits = { maxTypeWork: Infinity, maxQueries: Infinity, safetyMs: 1500 };
    const started = performance.now();
    const r = await computeReview({ repo: suite.repo, baseSha: c1, headSha: c2, workspaceDir: ws, checkerLimits: limits });
    const ms = performance.now() - started;
    validateEventData('ReviewComputed', r.data);
    expect(r.data.typeEdges).toEqual({ status: 'skipped', reason: 'type edges skipped for the whole review: the checker ran past its wall-clock safety limit of 1500 ms: syntax-only edges', skippedFiles: [] });
    expect(r.data.metrics.checkerFailedSafe).toBe(1);
    expect(r.data.metrics.checkerEdges).toBe(0);
    // Stopped at the limit (the uncapped walk of 400 hostile identifiers takes far longer), not at the end of the work.
    expect(r.data.metrics.checkerMs).toBeGreaterThanOrEqual(1500);
    expect(r.data.metrics.checkerMs).toBeLessThan(1500 + 3000);
    expect(ms).toBeLessThan(20_000);
    // Syntax-only for the whole review: the cohorts of a computation without the checker, to the byte.
    const syntax = await computeReview({ repo: suite.repo, baseSha: c1, headSha: c2, workspaceDir: workspace(), typeEdges: false });
    expect(JSON.stringify(r.data.cohorts)).toBe(JSON.stringify(syntax.data.cohorts));
    expect(r.head!.edges.some((e) => e.provenance === 'checker')).toBe(false);
    const again = await computeReview({ repo: suite.repo, baseSha: c1, headSha: c2, workspaceDir: ws, checkerLimits: limits });
    expect(replayBytes(again.data)).toBe(replayBytes(r.data));
    expect(again.data.metrics.checkerMs).toBeLessThan(1500);
  });

  it('past the heap limit the checker thread is stopped and the whole review is syntax-only, said so; the verdict is stored; the next computation gets a thread with its own limit', async () => {
    const [c1, c2] = suite.commits;
    const ws = workspace();
    // 16 MiB cannot hold TypeScript's compiler itself: the thread runs out of heap whatever the files are.
    const limits = { heapMb: 16 };
    const r = await computeReview({ repo: suite.repo, baseSha: c1, headSha: c2, workspaceDir: ws, checkerLimits: limits });
    validateEventData('ReviewComputed', r.data);
    expect(r.data.typeEdges).toEqual({ status: 'skipped', reason: 'type edges skipped for the whole review: the checker ran out of its heap limit: syntax-only edges', skippedFiles: [] });
    expect(r.data.metrics.checkerFailedSafe).toBe(1);
    expect(r.data.metrics.checkerEdges).toBe(0);
    const syntax = await computeReview({ repo: suite.repo, baseSha: c1, headSha: c2, workspaceDir: workspace(), typeEdges: false });
    expect(JSON.stringify(r.data.cohorts)).toBe(JSON.stringify(syntax.data.cohorts));
    // The verdict is stored under this limit: the same computation there gives the same bytes.
    const again = await computeReview({ repo: suite.repo, baseSha: c1, headSha: c2, workspaceDir: ws, checkerLimits: limits });
    expect(replayBytes(again.data)).toBe(replayBytes(r.data));
    // The default limit is another input: the checker runs again, on a new thread with the default heap.
    const normal = await computeReview({ repo: suite.repo, baseSha: c1, headSha: c2, workspaceDir: ws });
    expect(normal.data.typeEdges?.status).not.toBe('skipped');
    expect(normal.data.metrics.checkerFailedSafe ?? 0).toBe(0);
  });

  it('a computation stopped while the checker works stops the checker thread at once', async () => {
    const [c1, c2] = suite.commits;
    const ws = workspace();
    // Indexed first, so that the stop lands in the checker's walk (uncapped, it runs for tens of seconds).
    await computeReview({ repo: suite.repo, baseSha: c1, headSha: c2, workspaceDir: ws, typeEdges: false });
    const ac = new AbortController();
    const computing = computeReview({ repo: suite.repo, baseSha: c1, headSha: c2, workspaceDir: ws, checkerLimits: { maxTypeWork: Infinity, maxQueries: Infinity }, signal: ac.signal });
    let abortedAt = 0;
    setTimeout(() => {
      abortedAt = performance.now();
      ac.abort(new Error('token revoked'));
    }, 2000);
    await expect(computing).rejects.toThrow('token revoked');
    // Counted from the abort itself (not from a timer that a loaded machine fires late): the stop is prompt —
    // well under a second here when quiet, against tens of seconds for the uncapped walk.
    expect(performance.now() - abortedAt).toBeLessThan(3000);
    // The next computation gets a new thread and its own result.
    const after = await computeReview({ repo: suite.repo, baseSha: c1, headSha: c2, workspaceDir: ws });
    expect(after.data.typeEdges?.status).toBe('partial');
  });

  it('above the file-count cap the checker is not run at all, and the review says so', async () => {
    const [c1, c2] = suite.commits;
    const r = await computeReview({ repo: suite.repo, baseSha: c1, headSha: c2, workspaceDir: workspace(), checkerLimits: { maxFiles: 3 } });
    expect(r.data.typeEdges).toEqual({ status: 'skipped', reason: "head: type edges skipped: 4 changed TS/JS files, more than the checker's cap of 3", skippedFiles: [] });
    expect(r.data.metrics.checkerProgramFiles).toBe(0);
    const syntax = await computeReview({ repo: suite.repo, baseSha: c1, headSha: c2, workspaceDir: workspace(), typeEdges: false });
    expect(JSON.stringify(r.data.cohorts)).toBe(JSON.stringify(syntax.data.cohorts));
    expect(syntax.data.typeEdges).toEqual({ status: 'off', reason: 'type edges off for this computation: syntax-only edges', skippedFiles: [] });
  });

  it('bounds the list of skipped files at the source (at most BOUNDS.typeEdgeSkips, the rest counted)', async () => {
    const [, c2, c3] = suite.commits;
    const r = await computeReview({ repo: suite.repo, baseSha: c2, headSha: c3, workspaceDir: workspace(), checkerLimits: { maxQueries: 1 } });
    validateEventData('ReviewComputed', r.data);
    expect(r.data.typeEdges!.status).toBe('partial');
    expect(r.data.typeEdges!.skippedFiles).toHaveLength(BOUNDS.typeEdgeSkips);
    // f00.ts asks one identifier (`make`; `run` is no name the changed files define): walked whole; the cap stops at f01.ts.
    expect(r.data.typeEdges!.omittedFiles).toBe(24 - BOUNDS.typeEdgeSkips);
    expect(r.data.typeEdges!.skippedFiles[0]).toEqual({ path: 'src/many/f01.ts', side: 'head', reason: 'type edges skipped: the checker reached its cap of 1 identifiers' });
  });
});

describe('checker caps in the operator config', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-cb-config-'));
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
  const load = (json: unknown) => {
    const file = path.join(tmp, 'config.json');
    fs.writeFileSync(file, JSON.stringify(json));
    return loadOperatorConfig(tmp, { configFile: file }, {});
  };

  it('reads typeEdges (its caps, or false), refuses unknown keys and out-of-range values, and the caps join the inputs digest', () => {
    expect(defaultOperatorConfig(tmp).typeEdges).toEqual({});
    expect(load({ typeEdges: { maxFiles: 40, safetyMs: 10_000 } }).typeEdges).toEqual({ maxFiles: 40, safetyMs: 10_000 });
    expect(load({ typeEdges: false }).typeEdges).toBe(false);
    expect(() => load({ typeEdges: { maxFile: 40 } })).toThrow(DomainError);
    expect(() => load({ typeEdges: { safetyMs: 1 } })).toThrow(/typeEdges/);
    expect(load({ typeEdges: { heapMb: 512 } }).typeEdges).toEqual({ heapMb: 512 });
    expect(() => load({ typeEdges: { heapMb: 8 } })).toThrow(/heapMb/);
    const sha = 'a'.repeat(40);
    const plain = inputsDigestOf(REVIEW_ENGINE_VERSION, sha, sha, undefined);
    expect(inputsDigestOf(REVIEW_ENGINE_VERSION, sha, sha, undefined, undefined, { checkerLimits: {} })).toBe(plain);
    expect(inputsDigestOf(REVIEW_ENGINE_VERSION, sha, sha, undefined, undefined, { checkerLimits: { maxFiles: 40 } })).not.toBe(plain);
    expect(inputsDigestOf(REVIEW_ENGINE_VERSION, sha, sha, undefined, undefined, { typeEdges: false })).not.toBe(plain);
  });

  it('docs/configuration.md shows the defaults the code has', () => {
    const readme = fs.readFileSync(path.join(__dirname, '../../docs/configuration.md'), 'utf8');
    const shown = /"typeEdges": (\{[^}]*\})/.exec(readme);
    expect(JSON.parse(shown![1])).toEqual(CHECKER_LIMITS);
  });
});

describe('parsed files kept on the checker thread are reused only within one workspace', () => {
  const suite = gitRepoSuite('rl-checker-scope-', (f) => {
    f.write('tsconfig.json', '{ "compilerOptions": { "strict": true } }\n');
    f.write('src/job.ts', 'export function make(): number {\n  return 1;\n}\n');
    f.write('src/use.ts', "import { make } from './job';\nexport const go = (): number => make();\n");
    const c1 = f.commit('one');
    f.write('src/use.ts', "import { make } from './job';\nexport const go = (): number => make() + 1;\n");
    const c2 = f.commit('two');
    return [c1, c2];
  });
  const dirs: string[] = [];
  const workspace = () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-cs-ws-'));
    dirs.push(dir);
    return dir;
  };
  afterAll(async () => {
    await closeCheckerThread();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it("another tenant's computation of the same files neither reuses nor reveals them (metrics and timings would tell); the same workspace reuses its own", async () => {
    const [c1, c2] = suite.commits;
    clearCheckerSourceCache();
    const mine = workspace();
    const first = await computeReview({ repo: suite.repo, baseSha: c1, headSha: c2, workspaceDir: mine });
    // Another workspace, the same blobs, while the thread still holds the first one's parses.
    const other = await computeReview({ repo: suite.repo, baseSha: c2, headSha: c1, workspaceDir: workspace() });
    const again = await computeReview({ repo: suite.repo, baseSha: c2, headSha: c1, workspaceDir: mine });
    expect(first.data.metrics.checkerProgramFiles).toBeGreaterThan(0);
    expect(other.data.metrics.checkerReusedSourceFiles).toBe(first.data.metrics.checkerReusedSourceFiles);
    expect(again.data.metrics.checkerReusedSourceFiles).toBeGreaterThan(other.data.metrics.checkerReusedSourceFiles);
  });
});
