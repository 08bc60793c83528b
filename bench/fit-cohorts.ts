import * as fs from 'node:fs';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { classifyRole } from '../src/codegraph/file-roles';
import { languageOf } from '../src/codegraph/languages/languages';
import { AFFINITY_FEATURES, EVIDENCE_FEATURES, pathFeatures, PathSide } from '../src/cohorts/affinity';
import { crossValidate, DumpCase, fitModel, mean, median, RepoRow } from './support/affinity-fit';
import { argValue, round } from './support/report';

/** Where the corpus's dumps live: one `<owner>+<name>.jsonl.gz` per repository (bench/eval-cohorts.ts `--dump`). */
export const DEFAULT_DUMPS = path.join(__dirname, 'cohort-corpus');
export const WEIGHTS_FILE = path.join(__dirname, '..', 'src', 'cohorts', 'weights.json');

/**
 * A dumped case in the engine's feature order: the evidence features by name (a feature the dump lacks needs a new
 * dump), the path features computed again from the files' paths (affinity.ts `pathFeatures`, the engine's own code),
 * so that a path feature can be added without computing the corpus again.
 */
export function upgrade(c: DumpCase & { features: string[] }, source: string): DumpCase {
  const at = new Map(c.features.map((name, i) => [name, i]));
  const missing = EVIDENCE_FEATURES.filter((name) => !at.has(name));
  if (missing.length) throw new Error(`${source}: dumped without the evidence features ${missing.join(', ')}: dump again`);
  const sideOf = new Map<number, PathSide>();
  c.files.forEach((p, i) => {
    if (c.node[i] >= 0 && !sideOf.has(c.node[i])) sideOf.set(c.node[i], { path: p, role: classifyRole(p), language: languageOf(p) });
  });
  const pairs = c.pairs.map(([a, b, x]): [number, number, number[]] => [a, b, [...EVIDENCE_FEATURES.map((name) => x[at.get(name)!]), ...pathFeatures(sideOf.get(a)!, sideOf.get(b)!)]]);
  return { repo: c.repo, files: c.files, truth: c.truth, node: c.node, pairs };
}

/** Every case of the dumps in a folder (`.jsonl` or `.jsonl.gz`), in file-name order. */
export function loadDumps(dir: string): DumpCase[] {
  const cases: DumpCase[] = [];
  // A case dumped twice (a second pass with another seed samples some again) counts once.
  const seen = new Set<string>();
  for (const f of fs.readdirSync(dir).filter((x) => /\.jsonl(\.gz)?$/.test(x)).sort()) {
    const raw = fs.readFileSync(path.join(dir, f));
    const text = f.endsWith('.gz') ? zlib.gunzipSync(raw).toString('utf8') : raw.toString('utf8');
    for (const line of text.split('\n')) {
      if (!line.trim()) continue;
      const c = JSON.parse(line) as DumpCase & { features: string[]; base: string; head: string };
      const key = `${c.repo}\0${c.base}\0${c.head}`;
      if (seen.has(key)) continue;
      seen.add(key);
      cases.push(upgrade(c, f));
    }
  }
  return cases;
}

const f3 = (x: number) => x.toFixed(3);

/** The leave-repository-out table: per repository fitted (CV) vs rules vs by-file vs by-directory, then the aggregate. */
export function printCv(rows: RepoRow[], log: (s: string) => void = console.log): Record<string, unknown> {
  log(`${'repository'.padEnd(34)} cases  fitted med/mean  rules med/mean  by-file med/mean  by-dir med/mean  vs dir W/T/L  vs file W/T/L`);
  for (const r of rows) {
    log(`${r.repo.padEnd(34)} ${String(r.cases).padStart(5)}  ${f3(r.fitted.median)} ${f3(r.fitted.mean)}    ${f3(r.rules.median)} ${f3(r.rules.mean)}   ${f3(r.byFile.median)} ${f3(r.byFile.mean)}     ${f3(r.byDir.median)} ${f3(r.byDir.mean)}    ${r.vsDir.wins}/${r.vsDir.ties}/${r.vsDir.losses}`.padEnd(150).trimEnd() + `  ${r.vsFile.wins}/${r.vsFile.ties}/${r.vsFile.losses}`);
  }
  const n = rows.length;
  const atLeast = rows.filter((r) => r.fitted.median >= 0.8).length;
  const aboveBoth = rows.filter((r) => r.fitted.median >= 0.8 && r.fitted.median > r.byFile.median && r.fitted.median > r.byDir.median).length;
  // Not below either: where by-file's median is already 1 nothing can be above it.
  const notBelow = rows.filter((r) => r.fitted.median >= 0.8 && r.fitted.median >= r.byFile.median && r.fitted.median >= r.byDir.median).length;
  const rulesNotBelow = rows.filter((r) => r.rules.median >= 0.8 && r.rules.median >= r.byFile.median && r.rules.median >= r.byDir.median).length;
  const fileAtOne = rows.filter((r) => r.byFile.median === 1).length;
  const belowFile = rows.filter((r) => r.fitted.median < r.byFile.median).map((r) => r.repo);
  const rulesAtLeast = rows.filter((r) => r.rules.median >= 0.8).length;
  const rulesAboveBoth = rows.filter((r) => r.rules.median >= 0.8 && r.rules.median > r.byFile.median && r.rules.median > r.byDir.median).length;
  const sum = (k: 'wins' | 'ties' | 'losses', v: 'vsDir' | 'vsFile') => rows.reduce((s, r) => s + r[v][k], 0);
  const agg = {
    bench: 'eval-cohorts',
    mode: 'leave-repository-out',
    repositories: n,
    cases: rows.reduce((s, r) => s + r.cases, 0),
    fitted: { meanOfMedians: round(mean(rows.map((r) => r.fitted.median))), meanOfMeans: round(mean(rows.map((r) => r.fitted.mean))), medianAtLeast080: atLeast, medianAtLeast080AboveBoth: aboveBoth, medianAtLeast080NotBelowEither: notBelow, belowByFile: belowFile },
    rules: { meanOfMedians: round(mean(rows.map((r) => r.rules.median))), meanOfMeans: round(mean(rows.map((r) => r.rules.mean))), medianAtLeast080: rulesAtLeast, medianAtLeast080AboveBoth: rulesAboveBoth, medianAtLeast080NotBelowEither: rulesNotBelow, belowByFile: rows.filter((r) => r.rules.median < r.byFile.median).length },
    byFile: { meanOfMedians: round(mean(rows.map((r) => r.byFile.median))), meanOfMeans: round(mean(rows.map((r) => r.byFile.mean))) },
    byDirectory: { meanOfMedians: round(mean(rows.map((r) => r.byDir.median))), meanOfMeans: round(mean(rows.map((r) => r.byDir.mean))) },
    fittedVsDirectory: { wins: sum('wins', 'vsDir'), ties: sum('ties', 'vsDir'), losses: sum('losses', 'vsDir') },
    fittedVsFile: { wins: sum('wins', 'vsFile'), ties: sum('ties', 'vsFile'), losses: sum('losses', 'vsFile') },
  };
  log(
    `leave-repository-out over ${n} repositories, ${agg.cases} cases: fitted mean of medians ${f3(mean(rows.map((r) => r.fitted.median)))} (rules ${f3(mean(rows.map((r) => r.rules.median)))}, by-file ${f3(mean(rows.map((r) => r.byFile.median)))}, by-dir ${f3(mean(rows.map((r) => r.byDir.median)))}); ` +
      `median ≥ 0.80 and above both baselines on ${aboveBoth} of ${n} (${((100 * aboveBoth) / Math.max(n, 1)).toFixed(0)} %; rules ${rulesAboveBoth}; by-file's median is 1 on ${fileAtOne}), ≥ 0.80 and not below either on ${notBelow} (${((100 * notBelow) / Math.max(n, 1)).toFixed(0)} %; rules ${rulesNotBelow}); median below by-file on ${belowFile.length}${belowFile.length ? ` (${belowFile.join(', ')})` : ''}; median of medians ${f3(median(rows.map((r) => r.fitted.median)))}`,
  );
  log(JSON.stringify(agg));
  return agg;
}

/** The per-repository table as markdown (docs/cohorts.md). */
export function markdownCv(rows: RepoRow[]): string {
  const b = (x: number, ok: boolean) => (ok ? x.toFixed(3) : `**${x.toFixed(3)}**`);
  const lines = ['| repository | cases | fitted (CV) median / mean | rules median / mean | by-file | by-directory | fitted vs dir W/T/L | fitted vs file W/T/L |', '|---|---|---|---|---|---|---|---|'];
  for (const r of rows) {
    lines.push(`| ${r.repo.replace('+', '/')} | ${r.cases} | ${b(r.fitted.median, r.fitted.median >= 0.8)} / ${r.fitted.mean.toFixed(3)} | ${b(r.rules.median, r.rules.median >= 0.8)} / ${r.rules.mean.toFixed(3)} | ${r.byFile.median.toFixed(3)} / ${r.byFile.mean.toFixed(3)} | ${r.byDir.median.toFixed(3)} / ${r.byDir.mean.toFixed(3)} | ${r.vsDir.wins}/${r.vsDir.ties}/${r.vsDir.losses} | ${r.vsFile.wins}/${r.vsFile.ties}/${r.vsFile.losses} |`);
  }
  return lines.join('\n');
}

type Summary = { meanOfMedians: number; medianAtLeast080AboveBoth: number };
function adopts(cv: Record<string, unknown>): boolean {
  const f = cv.fitted as Summary;
  const r = cv.rules as Summary;
  return f.meanOfMedians > r.meanOfMedians && f.medianAtLeast080AboveBoth >= r.medianAtLeast080AboveBoth;
}

/**
 * `npm run eval:cohorts -- --cv [--dumps <dir>]` (or `node bench/run.js fit-cohorts --cv`): leave-repository-out
 * cross-validation of the affinity model on the corpus's dumps. `--write` fits on every repository and writes
 * src/cohorts/weights.json.
 */
export async function main(args: string[]): Promise<void> {
  const dir = argValue(args, '--dumps') ?? DEFAULT_DUMPS;
  const cases = loadDumps(dir);
  // AFFINITY_DROP=a,b: those features read as 0 (an ablation of the fit; the engine's list stays).
  const drop = new Set((process.env.AFFINITY_DROP ?? '').split(',').filter(Boolean).flatMap((f) => AFFINITY_FEATURES.flatMap((x, i) => (x === f || (f.endsWith('*') && x.startsWith(f.slice(0, -1))) ? [i] : []))));
  if (drop.size) for (const c of cases) for (const q of c.pairs) for (const f of drop) q[2][f] = 0;
  if (!cases.length) throw new Error(`no dump cases in ${dir}`);
  let cv: Record<string, unknown> | undefined;
  if (args.includes('--cv')) {
    const rows = crossValidate(cases, AFFINITY_FEATURES);
    cv = printCv(rows);
    // --markdown: the same table for docs/cohorts.md.
    if (args.includes('--markdown')) console.log(markdownCv(rows));
  }
  if (args.includes('--write')) {
    const model = fitModel(cases, AFFINITY_FEATURES);
    const repos = [...new Set(cases.map((c) => c.repo))].sort();
    const out = {
      version: argValue(args, '--version') ?? 'affinity-1',
      date: argValue(args, '--date') ?? new Date().toISOString().slice(0, 10),
      trainedOn: repos,
      cases: cases.length,
      features: model.features,
      bias: round(model.bias, 6),
      weights: model.weights.map((w) => round(w, 6)),
      threshold: model.threshold,
      linkage: model.linkage,
      // Adopted by the engine when, leaving each repository out, it beats the rules on the mean of medians and on the
      // number of repositories at ≥ 0.80 and above both baselines (needs --cv in the same run).
      adopted: cv ? adopts(cv) : false,
      ...(cv ? { crossValidated: { fitted: cv.fitted, rules: cv.rules, byFile: cv.byFile, byDirectory: cv.byDirectory } } : {}),
    };
    fs.writeFileSync(argValue(args, '--out') ?? WEIGHTS_FILE, JSON.stringify(out, null, 2) + '\n');
    console.log(`wrote ${argValue(args, '--out') ?? WEIGHTS_FILE}: ${cases.length} cases of ${repos.length} repositories; threshold ${model.threshold}, ${model.linkage} linkage`);
    for (const [i, f] of AFFINITY_FEATURES.entries()) console.log(`  ${f.padEnd(28)} ${model.weights[i].toFixed(3)}`);
    console.log(`  ${'(bias)'.padEnd(28)} ${model.bias.toFixed(3)}`);
  }
}
