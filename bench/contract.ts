/**
 * bench:contract — the API-contract engine on GitHub's real API descriptions (@octokit/openapi).
 *
 * For each pair of documents, three measurements, each in its own child process so peak RSS is the
 * measured tool's alone:
 *   parse  read + JSON.parse both documents: the limit (any diff has to at least do this)
 *   ours   loadSpec both (read, parse, collect refs) + diffSpecs (resolve + compare + classify)
 *   optic  read + JSON.parse both + @useoptic/openapi-utilities diff() (raw structural diff, no classification)
 * Medians over --runs interleaved rounds (see measure()). Targets (issue #5): ours total ≤ optic
 * total on ghes-3.17 → ghes-3.18, peak RSS < 512 MiB.
 *
 *   npm run bench:contract [-- --runs 5] [-- --pairs ghes-3.17:ghes-3.18,ghes-3.18:ghes-3.19]
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { diffSpecs } from '../src/axes/api-contract/diff';
import { loadSpec } from '../src/axes/api-contract/document';

const GENERATED = path.join(__dirname, '..', 'node_modules', '@octokit', 'openapi', 'generated');
const DEFAULT_PAIRS = ['ghes-3.17:ghes-3.18', 'ghes-3.18:ghes-3.19', 'ghes-3.19:api.github.com'];

type Mode = 'parse' | 'ours' | 'optic';
interface WorkerResult {
  mode: Mode;
  /** medians, ms */
  parseMs: number;
  diffMs: number;
  totalMs: number;
  maxRssMiB: number;
  counts?: Record<string, number>;
  opticDiffs?: number;
  breakingSample?: Array<{ ruleId: string; message: string; basePointer?: string; headPointer?: string }>;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

async function worker(mode: Mode, baseName: string, headName: string, runs: number): Promise<WorkerResult> {
  const file = (n: string) => path.join(GENERATED, `${n}.json`);
  const parseMs: number[] = [];
  const diffMs: number[] = [];
  let counts: Record<string, number> | undefined;
  let opticDiffs: number | undefined;
  let breakingSample: WorkerResult['breakingSample'];
  const optic = mode === 'optic' ? await import('@useoptic/openapi-utilities') : undefined;
  const gc = (globalThis as { gc?: () => void }).gc;
  for (let i = 0; i <= runs; i++) {
    if (i === 1) gc?.();
    const t0 = performance.now();
    if (mode === 'ours') {
      const base = await loadSpec(`${baseName}.json`, async (p) => fs.readFileSync(path.join(GENERATED, p), 'utf8'));
      const head = await loadSpec(`${headName}.json`, async (p) => fs.readFileSync(path.join(GENERATED, p), 'utf8'));
      const t1 = performance.now();
      const result = diffSpecs(base, head, `${headName}.json`, { asOf: '2026-11-29' });
      const t2 = performance.now();
      if (i > 0) {
        parseMs.push(t1 - t0);
        diffMs.push(t2 - t1);
      }
      counts = { breaking: 0, 'non-breaking': 0, info: 0 };
      for (const c of result.changes) counts[c.severity]++;
      // one breaking change per rule first, then the rest: a varied sample to spot-check
      const breaking = result.changes.filter((c) => c.severity === 'breaking');
      const firstPerRule = breaking.filter((c, idx) => breaking.findIndex((d) => d.ruleId === c.ruleId) === idx);
      breakingSample = [...firstPerRule, ...breaking.filter((c) => !firstPerRule.includes(c))]
        .slice(0, 12)
        .map(({ ruleId, message, basePointer, headPointer }) => ({ ruleId, message, basePointer, headPointer }));
    } else {
      const base = JSON.parse(fs.readFileSync(file(baseName), 'utf8'));
      const head = JSON.parse(fs.readFileSync(file(headName), 'utf8'));
      const t1 = performance.now();
      if (optic) opticDiffs = optic.diff(base, head).length;
      const t2 = performance.now();
      if (i > 0) {
        parseMs.push(t1 - t0);
        diffMs.push(t2 - t1);
      }
    }
  }
  const total = parseMs.map((p, i) => p + diffMs[i]);
  return {
    mode,
    parseMs: median(parseMs),
    diffMs: median(diffMs),
    totalMs: median(total),
    maxRssMiB: process.resourceUsage().maxRSS / 1024,
    counts,
    opticDiffs,
    breakingSample,
  };
}

function runChild(mode: Mode, base: string, head: string, runs: number): WorkerResult {
  const r = spawnSync(process.execPath, ['--expose-gc', path.join(__dirname, 'run.js'), 'contract', '--worker', mode, base, head, String(runs)], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.status !== 0) throw new Error(`worker ${mode} ${base}→${head} failed (${r.status}): ${r.stderr}`);
  const last = r.stdout.trim().split('\n').pop()!;
  return JSON.parse(last) as WorkerResult;
}

/**
 * Rounds interleave the three tools (parse, ours, optic, parse, ours, …) so that the noise of a shared
 * machine hits all of them alike; each round is a fresh process per tool (one warm-up, then one
 * measured run), and the figures are medians over rounds.
 */
function measure(mode: Mode, base: string, head: string, results: Map<Mode, WorkerResult[]>): void {
  const list = results.get(mode) ?? [];
  list.push(runChild(mode, base, head, 1));
  results.set(mode, list);
}

function combine(list: WorkerResult[]): WorkerResult {
  return {
    ...list[list.length - 1],
    parseMs: median(list.map((r) => r.parseMs)),
    diffMs: median(list.map((r) => r.diffMs)),
    totalMs: median(list.map((r) => r.totalMs)),
    maxRssMiB: Math.max(...list.map((r) => r.maxRssMiB)),
  };
}

const f1 = (n: number) => n.toFixed(1);

export async function main(args: string[]): Promise<void> {
  if (args[0] === '--worker') {
    const result = await worker(args[1] as Mode, args[2], args[3], Number(args[4]));
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return;
  }
  const runsArg = args.indexOf('--runs');
  const runs = runsArg >= 0 ? Number(args[runsArg + 1]) : 5;
  const pairsArg = args.indexOf('--pairs');
  const pairs = (pairsArg >= 0 ? args[pairsArg + 1].split(',') : DEFAULT_PAIRS).map((p) => p.split(':') as [string, string]);
  const available = new Set(fs.readdirSync(GENERATED));
  const summary: Record<string, unknown> = {};
  for (const [base, head] of pairs) {
    if (!available.has(`${base}.json`) || !available.has(`${head}.json`)) {
      console.log(`skip ${base} → ${head}: not in @octokit/openapi/generated`);
      continue;
    }
    const sizeMiB = (fs.statSync(path.join(GENERATED, `${base}.json`)).size + fs.statSync(path.join(GENERATED, `${head}.json`)).size) / 1024 / 1024;
    const results = new Map<Mode, WorkerResult[]>();
    for (let round = 0; round < runs; round++) for (const mode of ['parse', 'ours', 'optic'] as const) measure(mode, base, head, results);
    const parse = combine(results.get('parse')!);
    const ours = combine(results.get('ours')!);
    const optic = combine(results.get('optic')!);
    console.log(`\n${base} → ${head}  (${f1(sizeMiB)} MiB of JSON; medians of ${runs} interleaved rounds, each a fresh process per tool: warm-up, GC, measured run; peak RSS = max over rounds)`);
    console.log('tool                      parse ms   diff ms   total ms   peak RSS MiB   result');
    console.log(`JSON.parse both (limit)   ${f1(parse.parseMs).padStart(8)}   ${'-'.padStart(7)}   ${f1(parse.totalMs).padStart(8)}   ${f1(parse.maxRssMiB).padStart(12)}`);
    console.log(
      `ours (classified)         ${f1(ours.parseMs).padStart(8)}   ${f1(ours.diffMs).padStart(7)}   ${f1(ours.totalMs).padStart(8)}   ${f1(ours.maxRssMiB).padStart(12)}   ${ours.counts!.breaking} breaking, ${ours.counts!['non-breaking']} non-breaking, ${ours.counts!.info} info`,
    );
    console.log(`optic diff() (raw)        ${f1(optic.parseMs).padStart(8)}   ${f1(optic.diffMs).padStart(7)}   ${f1(optic.totalMs).padStart(8)}   ${f1(optic.maxRssMiB).padStart(12)}   ${optic.opticDiffs} raw diffs`);
    const oursOverLimit = ours.totalMs / parse.totalMs;
    const oursOverOptic = ours.totalMs / optic.totalMs;
    console.log(`ratios: ours/limit ${oursOverLimit.toFixed(2)}×   ours/optic ${oursOverOptic.toFixed(2)}×   ours diff/optic diff ${(ours.diffMs / optic.diffMs).toFixed(2)}×`);
    if (ours.breakingSample && ours.breakingSample.length > 0) {
      console.log('breaking changes (one per rule first):');
      for (const c of ours.breakingSample) console.log(`  [${c.ruleId}] ${c.message}\n      base ${c.basePointer ?? '-'}  head ${c.headPointer ?? '-'}`);
    }
    summary[`${base}→${head}`] = {
      limitMs: Number(f1(parse.totalMs)),
      oursParseMs: Number(f1(ours.parseMs)),
      oursDiffMs: Number(f1(ours.diffMs)),
      oursTotalMs: Number(f1(ours.totalMs)),
      opticDiffMs: Number(f1(optic.diffMs)),
      opticTotalMs: Number(f1(optic.totalMs)),
      oursOverLimit: Number(oursOverLimit.toFixed(2)),
      oursOverOptic: Number(oursOverOptic.toFixed(2)),
      oursPeakRssMiB: Number(f1(ours.maxRssMiB)),
      opticPeakRssMiB: Number(f1(optic.maxRssMiB)),
      limitPeakRssMiB: Number(f1(parse.maxRssMiB)),
      changes: ours.counts,
      opticRawDiffs: optic.opticDiffs,
    };
  }
  console.log(JSON.stringify({ bench: 'contract', runs, pairs: summary }));
}
