import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Parser } from 'web-tree-sitter';
import { closeSharedExtractPool } from '../src/codegraph/extract-pool';
import { FactsCache } from '../src/codegraph/facts-cache';
import { loadGrammar } from '../src/codegraph/languages/grammar-runtime';
import { indexCommit } from '../src/codegraph/indexer';
import { languageOf } from '../src/codegraph/languages/languages';
import { computeReview } from '../src/compute/review';
import { clearCheckerSourceCache } from '../src/codegraph/checker/type-edges';
import { GitRepo } from '../src/git/repo';
import { buildDartRepo } from './dart-fixture';
import { buildRxjsRepo, RXJS_BASE, RXJS_HEAD } from './rxjs-fixture';
import { cpuMs, loadAverage } from './support/abab';

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const quartiles = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return `${s[Math.floor((s.length - 1) / 4)].toFixed(2)}–${s[Math.ceil((3 * (s.length - 1)) / 4)].toFixed(2)}`;
};
/** min / median / max of a series, rounded to whole milliseconds (issue #39 item 4: every figure with its spread). */
const spread = (xs: number[]) => ({ min: Math.round(Math.min(...xs)), median: Math.round(median(xs)), max: Math.round(Math.max(...xs)) });
const tmpDir = () => fs.mkdtempSync(path.join(os.tmpdir(), 'rl-bench-ws-'));

interface Fixture {
  dir: string;
  base: string;
  head: string;
  label: string;
  cleanup(): void;
}

/** rxjs (TypeScript), then a Flutter repository (Dart) when a copy is at hand (bench/dart-fixture.ts); one JSON line, rxjs's figures at the top level. */
export async function main(args: string[]): Promise<void> {
  const runs = Number(args.find((a) => a.startsWith('--runs='))?.slice(7) ?? 5);
  const only = args.find((a) => a.startsWith('--repo='))?.slice(7);
  const results: Record<string, Record<string, unknown>> = {};
  const loadAtStart = loadAverage();
  if (!only || only === 'rxjs') {
    const rx = buildRxjsRepo();
    results.rxjs = await measure({ ...rx, label: `rxjs ${RXJS_BASE} → ${RXJS_HEAD} (src/ + package.json)` }, runs);
  }
  if (!only || only === 'dart') {
    const dart = buildDartRepo();
    if (dart) results.dart = await measure(dart, runs);
    else console.log('bench:cohorts — no Dart repository copy (set BENCH_DART_REPO): Dart not measured');
  }
  await closeSharedExtractPool();
  const { rxjs, ...others } = results;
  console.log(JSON.stringify({ bench: 'cohorts', ...(rxjs ?? {}), ...others, load: { start: loadAtStart, end: loadAverage() } }));
}

async function measure(fixture: Fixture, runs: number): Promise<Record<string, unknown>> {
  const repo = await GitRepo.open(fixture.dir);
  const scratch: string[] = [];
  try {
    // The limit: raw web-tree-sitter parses of every file of the head, contents already in memory.
    const files = (await repo.lsTree(fixture.head)).filter((e) => e.type === 'blob' && languageOf(e.path));
    const contents: Array<{ language: string; text: string }> = [];
    for (const f of files) contents.push({ language: languageOf(f.path)!, text: (await repo.readBlob(f.sha))!.toString('utf8') });
    const bytes = contents.reduce((n, c) => n + Buffer.byteLength(c.text), 0);
    const parsers = new Map<string, Parser>();
    for (const c of contents) if (!parsers.has(c.language)) parsers.set(c.language, (await loadGrammar(c.language)).parser);
    // Raw parse, cold index on worker threads and cold index on this thread run interleaved, one of each
    // per round, so that a noisy neighbour slows all three alike; ratios are medians of per-round ratios.
    const rawMs: number[] = [];
    const coldMs: number[] = [];
    const serialMs: number[] = [];
    const coldRatios: number[] = [];
    // CPU of the whole process (getrusage: every thread, the index's exited workers included) per side.
    const rawCpu: number[] = [];
    const coldCpu: number[] = [];
    const serialCpu: number[] = [];
    const serialRatios: number[] = [];
    let cold = { files: 0, symbols: 0, parsed: 0 };
    const coldIndex = async (parallel: boolean) => {
      const dir = tmpDir();
      scratch.push(dir);
      const cache = FactsCache.open(dir);
      const t0 = performance.now();
      const idx = await indexCommit(repo, fixture.head, { cache, parallel });
      const ms = performance.now() - t0;
      cache.close();
      cold = { files: idx.fileCount, symbols: idx.symbolCount, parsed: idx.parsedBlobs };
      return ms;
    };
    // Warm-up outside the rounds, for both sides alike: the worker pool's start-up (a once-per-process cost)
    // and as many parses of the files on each worker as on this thread (one raw pass and one single-thread
    // index here; four worker indexes, half the files to each of two workers), so that no round times
    // wasm code before V8 has tiered it up (a fresh parser's first passes over rxjs take 2–4× the steady
    // time; the raw parser on this thread was first used in round 1 before, slowing raw there only).
    for (let w = 0; w < 2 * Math.max(2, os.availableParallelism()); w++) await coldIndex(true);
    for (const c of contents) parsers.get(c.language)!.parse(c.text)!.delete();
    await coldIndex(false);
    // At least 9 rounds: each is under a second, and the ratio moves with the machine's load.
    const rounds = Math.max(runs, 9);
    for (let r = 0; r < rounds; r++) {
      let c0 = cpuMs();
      const t0 = performance.now();
      for (const c of contents) parsers.get(c.language)!.parse(c.text)!.delete();
      const raw = performance.now() - t0;
      rawCpu.push(cpuMs() - c0);
      c0 = cpuMs();
      const par = await coldIndex(true);
      coldCpu.push(cpuMs() - c0);
      c0 = cpuMs();
      const ser = await coldIndex(false);
      serialCpu.push(cpuMs() - c0);
      rawMs.push(raw);
      coldMs.push(par);
      serialMs.push(ser);
      coldRatios.push(raw / par);
      serialRatios.push(raw / ser);
    }

    // Warm re-index: the cache holds the base; indexing the head parses only the blobs that changed.
    const warmMs: number[] = [];
    let warm = { parsed: 0, cached: 0 };
    const workspaceDir = tmpDir();
    scratch.push(workspaceDir);
    for (let r = 0; r < runs; r++) {
      const dir = tmpDir();
      scratch.push(dir);
      const cache = FactsCache.open(dir);
      await indexCommit(repo, fixture.base, { cache });
      const t0 = performance.now();
      const idx = await indexCommit(repo, fixture.head, { cache });
      warmMs.push(performance.now() - t0);
      cache.close();
      warm = { parsed: idx.parsedBlobs, cached: idx.cachedBlobs };
    }
    const changedSourceFiles = (await repo.diffNameStatus(fixture.base, fixture.head)).filter((c) => c.status !== 'deleted' && languageOf(c.path)).length;

    // Compute for the PR base → head; the first run warms the workspace cache (as indexing the repo would)
    // and loads the TypeScript compiler module (once per process: `firstTypedMs`).
    const firstStarted = performance.now();
    await computeReview({ repo, baseSha: fixture.base, headSha: fixture.head, workspaceDir });
    const firstTypedMs = performance.now() - firstStarted;
    // Per round, interleaved: the syntax-only path; the default path (TypeScript's checker over the changed
    // TS/JS files) cold — no parsed files kept from an earlier Program, no stored per-commit results; the
    // same with the parsed files of earlier Programs reused (what a server that computed this repository
    // before does); and a recomputation of the same commits (each walked file's edges stored per commit).
    const syntaxMs: number[] = [];
    const computeMs: number[] = [];
    const reuseMs: number[] = [];
    const storedMs: number[] = [];
    const checkerMs: number[] = [];
    const phases = { read: [] as number[], program: [] as number[], walk: [] as number[] };
    let summary = { cohorts: 0, semantic: 0, changedFiles: 0, fragments: 0, resolvedEdges: 0 };
    let syntaxSummary = { cohorts: 0, resolvedEdges: 0 };
    let typed = { checkerEdges: 0, programFiles: 0, reused: 0, queries: 0, typeWork: 0, status: '' };
    const clearStore = () => {
      const c = FactsCache.open(workspaceDir);
      c.clearCheckerEdges();
      c.close();
    };
    const computeCpu: number[] = [];
    for (let r = 0; r < runs; r++) {
      let t0 = performance.now();
      const plain = await computeReview({ repo, baseSha: fixture.base, headSha: fixture.head, workspaceDir, typeEdges: false });
      syntaxMs.push(performance.now() - t0);
      syntaxSummary = { cohorts: plain.data.cohorts.length, resolvedEdges: plain.data.metrics.resolvedEdges };
      clearCheckerSourceCache();
      clearStore();
      const c0 = cpuMs();
      t0 = performance.now();
      const { data } = await computeReview({ repo, baseSha: fixture.base, headSha: fixture.head, workspaceDir });
      computeMs.push(performance.now() - t0);
      computeCpu.push(cpuMs() - c0);
      checkerMs.push(data.metrics.checkerMs ?? 0);
      phases.read.push(data.metrics.checkerReadMs ?? 0);
      phases.program.push(data.metrics.checkerProgramMs ?? 0);
      phases.walk.push(data.metrics.checkerWalkMs ?? 0);
      summary = { cohorts: data.cohorts.length, semantic: data.cohorts.filter((c) => c.grouping === 'semantic').length, changedFiles: data.changedFiles.length, fragments: data.metrics.fragments, resolvedEdges: data.metrics.resolvedEdges };
      typed = { checkerEdges: data.metrics.checkerEdges ?? 0, programFiles: data.metrics.checkerProgramFiles ?? 0, reused: typed.reused, queries: data.metrics.checkerQueries ?? 0, typeWork: data.metrics.checkerTypeWork ?? 0, status: data.typeEdges?.status ?? 'none' };
      clearStore();
      t0 = performance.now();
      const reused = await computeReview({ repo, baseSha: fixture.base, headSha: fixture.head, workspaceDir });
      reuseMs.push(performance.now() - t0);
      typed.reused = reused.data.metrics.checkerReusedSourceFiles ?? 0;
      t0 = performance.now();
      await computeReview({ repo, baseSha: fixture.base, headSha: fixture.head, workspaceDir });
      storedMs.push(performance.now() - t0);
    }

    const rawMBs = bytes / 1e6 / (median(rawMs) / 1000);
    const coldMBs = bytes / 1e6 / (median(coldMs) / 1000);
    const ratio = median(coldRatios);
    const serialRatio = median(serialRatios);
    const serialMBs = bytes / 1e6 / (median(serialMs) / 1000);
    const cores = os.availableParallelism();
    const rows: Array<[string, string]> = [
      ['repository', `${fixture.label}, ${files.length} files, ${(bytes / 1e6).toFixed(2)} MB`],
      ['raw web-tree-sitter parse (limit)', `${median(rawMs).toFixed(0)} ms · ${rawMBs.toFixed(2)} MB/s · ${(files.length / (median(rawMs) / 1000)).toFixed(0)} files/s`],
      ['cold index (ours)', `${median(coldMs).toFixed(0)} ms · ${coldMBs.toFixed(2)} MB/s · ${cold.files} files, ${cold.symbols} symbols, ${cold.parsed} parsed (worker threads, ${cores} cores)`],
      ['cold index / raw', `${ratio.toFixed(2)} (target ≥ 0.5; median of ${rawMs.length} per-round ratios, quartiles ${quartiles(coldRatios)})`],
      ['CPU, whole process (min / median / max ms)', `raw ${Object.values(spread(rawCpu)).join(' / ')} · cold index ${Object.values(spread(coldCpu)).join(' / ')} · one thread ${Object.values(spread(serialCpu)).join(' / ')} · compute ${Object.values(spread(computeCpu)).join(' / ')}`],
      ['cold index, one thread', `${median(serialMs).toFixed(0)} ms · ${serialMBs.toFixed(2)} MB/s · ratio to raw ${serialRatio.toFixed(2)}`],
      ['warm re-index of head', `${median(warmMs).toFixed(0)} ms · parsed ${warm.parsed} changed blobs (of ${changedSourceFiles} changed source files), ${warm.cached} from cache`],
      ['compute PR (default: + checker)', `${median(computeMs).toFixed(0)} ms (target ≤ 2000) · ${summary.changedFiles} changed files → ${summary.cohorts} cohorts (${summary.semantic} semantic), ${summary.fragments} fragments, ${summary.resolvedEdges} resolved edges in head (+${typed.checkerEdges} from the checker, ${typed.programFiles} program files, ${typed.queries} queries, type work ${typed.typeWork}, type edges ${typed.status}; checker ${median(checkerMs).toFixed(0)} ms: read ${median(phases.read).toFixed(0)}, program ${median(phases.program).toFixed(0)}, walk ${median(phases.walk).toFixed(0)}) · ${(median(computeMs) / median(syntaxMs)).toFixed(1)}× syntax-only`],
      ['compute PR, syntax-only', `${median(syntaxMs).toFixed(0)} ms · ${syntaxSummary.cohorts} cohorts, ${syntaxSummary.resolvedEdges} resolved edges in head`],
      ['compute PR, parsed files reused', `${median(reuseMs).toFixed(0)} ms · ${typed.reused} of ${typed.programFiles} program files reused from earlier Programs · ${(median(reuseMs) / median(syntaxMs)).toFixed(1)}× syntax-only`],
      ['recompute PR (stored per commit)', `${median(storedMs).toFixed(0)} ms · ${(median(storedMs) / median(syntaxMs)).toFixed(1)}× syntax-only`],
      ['first compute in the process', `${firstTypedMs.toFixed(0)} ms (cold workspace, loads the TypeScript compiler module)`],
    ];
    const w = Math.max(...rows.map((r) => r[0].length));
    console.log(`bench:cohorts — medians of ${runs} runs (index: ${rawMs.length} interleaved rounds)`);
    for (const [k, v] of rows) console.log(`${k.padEnd(w)}  ${v}`);
    return {
        runs,
        files: files.length,
        bytes,
        rawParseMs: Math.round(median(rawMs)),
        rawMBps: +rawMBs.toFixed(3),
        coldIndexMs: Math.round(median(coldMs)),
        coldIndexMBps: +coldMBs.toFixed(3),
        coldToRawRatio: +ratio.toFixed(3),
        indexRounds: rawMs.length,
        cores,
        singleThreadIndexMs: Math.round(median(serialMs)),
        singleThreadToRawRatio: +serialRatio.toFixed(3),
        warmReindexMs: Math.round(median(warmMs)),
        warmParsedBlobs: warm.parsed,
        warmCachedBlobs: warm.cached,
        changedSourceFiles,
        computeMs: Math.round(median(computeMs)),
        syntaxOnlyComputeMs: Math.round(median(syntaxMs)),
        reusedParseComputeMs: Math.round(median(reuseMs)),
        recomputeMs: Math.round(median(storedMs)),
        firstComputeMs: Math.round(firstTypedMs),
        checkerMs: Math.round(median(checkerMs)),
        checkerEdges: typed.checkerEdges,
        checkerProgramFiles: typed.programFiles,
        cohorts: summary.cohorts,
        semanticCohorts: summary.semantic,
        wallMs: { rawParse: spread(rawMs), coldIndex: spread(coldMs), singleThreadIndex: spread(serialMs), compute: spread(computeMs) },
        cpuMs: { rawParse: spread(rawCpu), coldIndex: spread(coldCpu), singleThreadIndex: spread(serialCpu), compute: spread(computeCpu) },
        coldToRawCpuRatio: +median(rawCpu.map((r, i) => r / coldCpu[i])).toFixed(3),
      };
  } finally {
    repo.close();
    fixture.cleanup();
    for (const d of scratch) fs.rmSync(d, { recursive: true, force: true });
  }
}
