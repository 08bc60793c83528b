// node bench/run.js fit-cohorts-variants [-- --variant gbdt|veto --dumps <dir> --folds N]
// Two other ways to combine the dumped pair evidence (bench/cohort-corpus), each validated leaving every repository
// out, against the rule engine's own partition on the same cases (issue #40; docs/cohorts.md "Other combinations"):
//   gbdt  gradient-boosted trees (logistic loss, depth 3, 100 trees, shrinkage 0.1) in place of the logistic model,
//         so interactions between signals (a signal that is right only beside another) can count; the join threshold
//         and linkage chosen on the training repositories by the same objective as bench/fit-cohorts.ts
//   veto  the logistic model (bench/support/affinity-fit.ts) used to split and extend the rules' cohorts: a pair joins
//         when the rules join it and p ≥ lo, or when p ≥ hi; lo, hi and the linkage chosen on the training repositories
// Ends with one JSON line: per variant and for the rules, repositories with median ≥ 0.80, those also above both
// baselines (by-file, by-directory), those not below either, those below by-file, and the mean of medians.
import { AFFINITY_FEATURES, pairProbability, partitionByAffinity } from '../src/cohorts/affinity';
import { MAX_COHORT_FILES } from '../src/cohorts/form';
import { DEFAULT_DUMPS, loadDumps } from './fit-cohorts';
import { byDirGroups, byFileGroups, DumpCase, fitLogistic, mean, median, objective, rulesGroups, THRESHOLDS, trainingPairs, truthOf } from './support/affinity-fit';
import { randIndex } from './support/cohort-score';
import { argValue } from './support/report';

type Row = { x: number[]; y: number; w: number };
type Tree = { f: number; k: number; left: Tree | number; right: Tree | number } | number;

const TREES = 100;
const DEPTH = 3;
const SHRINK = 0.1;
/** A split leaves at least this much hessian weight on each side (the rows' weights sum to 1). */
const MIN_CHILD = 2e-4;
/** At most this many thresholds per feature (quantiles of its distinct values). */
const MAX_CUTS = 32;

/** Gradient-boosted trees on the weighted pairs, histogram splits; deterministic (no sampling). */
export function fitGbdt(rows: Row[], d: number): (x: number[]) => number {
  const n = rows.length;
  const total = rows.reduce((s, r) => s + r.w, 0);
  const w = Float64Array.from(rows, (r) => r.w / total);
  const y = Float64Array.from(rows, (r) => r.y);
  let pos = 0;
  for (let i = 0; i < n; i++) pos += w[i] * y[i];
  const base = Math.log(pos / (1 - pos));
  const cuts: number[][] = [];
  const bins: Uint8Array[] = [];
  for (let f = 0; f < d; f++) {
    const values = [...new Set(rows.map((r) => r.x[f]))].sort((a, b) => a - b);
    const step = Math.max(1, Math.ceil(values.length / MAX_CUTS));
    const th: number[] = [];
    for (let i = 0; i + 1 < values.length; i += step) th.push((values[i] + values[Math.min(values.length - 1, i + step)]) / 2);
    cuts.push(th);
    bins.push(Uint8Array.from(rows, (r) => th.filter((t) => r.x[f] > t).length));
  }
  const score = new Float64Array(n).fill(base);
  const g = new Float64Array(n);
  const h = new Float64Array(n);
  const hg = new Float64Array(MAX_CUTS + 1);
  const hh = new Float64Array(MAX_CUTS + 1);
  const gain = (gs: number, hs: number) => (gs * gs) / (hs + 1e-4);
  const grow = (idx: number[], depth: number): Tree => {
    let G = 0;
    let H = 0;
    for (const i of idx) (G += g[i]), (H += h[i]);
    const leaf = (SHRINK * G) / (H + 1e-4);
    if (depth === 0) return leaf;
    let best = { gain: 1e-12, f: -1, k: 0 };
    for (let f = 0; f < d; f++) {
      const nb = cuts[f].length + 1;
      if (nb < 2) continue;
      hg.fill(0, 0, nb);
      hh.fill(0, 0, nb);
      const b = bins[f];
      for (const i of idx) (hg[b[i]] += g[i]), (hh[b[i]] += h[i]);
      let gl = 0;
      let hl = 0;
      for (let k = 0; k < nb - 1; k++) {
        gl += hg[k];
        hl += hh[k];
        if (hl < MIN_CHILD || H - hl < MIN_CHILD) continue;
        const v = gain(gl, hl) + gain(G - gl, H - hl) - gain(G, H);
        if (v > best.gain) best = { gain: v, f, k };
      }
    }
    if (best.f < 0) return leaf;
    const b = bins[best.f];
    return { f: best.f, k: best.k, left: grow(idx.filter((i) => b[i] <= best.k), depth - 1), right: grow(idx.filter((i) => b[i] > best.k), depth - 1) };
  };
  const trees: Tree[] = [];
  const all = rows.map((_, i) => i);
  const walkBin = (t: Tree, i: number): number => (typeof t === 'number' ? t : walkBin(bins[t.f][i] <= t.k ? t.left : t.right, i));
  for (let t = 0; t < TREES; t++) {
    for (let i = 0; i < n; i++) {
      const p = 1 / (1 + Math.exp(-score[i]));
      g[i] = w[i] * (y[i] - p);
      h[i] = w[i] * p * (1 - p);
    }
    const tree = grow(all, DEPTH);
    trees.push(tree);
    for (let i = 0; i < n; i++) score[i] += walkBin(tree, i);
  }
  const walk = (t: Tree, x: number[]): number => (typeof t === 'number' ? t : walk(x[t.f] <= cuts[t.f][t.k] ? t.left : t.right, x));
  return (x) => 1 / (1 + Math.exp(-trees.reduce((z: number, t) => z + walk(t, x), base)));
}

/** Each file's group when pairs whose `joins` holds are joined (linkage as affinity.ts). */
function groupsBy(c: DumpCase, joins: (x: number[]) => boolean, linkage: 'single' | 'average'): Map<string, string> {
  const n = Math.max(-1, ...c.node, ...c.pairs.flatMap(([a, b]) => [a, b])) + 1;
  const group = partitionByAffinity(n, c.pairs.map(([a, b, x]) => ({ a, b, p: joins(x) ? 1 : 0 })), 0.5, MAX_COHORT_FILES, linkage);
  return new Map(c.files.map((f, i) => [f, c.node[i] < 0 ? `alone\0${f}` : String(group[c.node[i]])]));
}

interface Rule {
  linkage: 'single' | 'average';
  joins: (x: number[]) => boolean;
  label: string;
}

/** The rule of the variant that scores best on the training cases (bench/support/affinity-fit.ts objective). */
function chooseRule(variant: string, train: DumpCase[], d: number, rulesFeature: number): Rule {
  const rows = trainingPairs(train);
  let prob: (x: number[]) => number;
  if (variant === 'gbdt') prob = fitGbdt(rows, d);
  else {
    const model = fitLogistic(rows, d);
    prob = (x) => pairProbability(model, x);
  }
  // A candidate decides from a pair's probability and whether the rules join it; each training pair's two are
  // computed once here, and the rule chosen applies the same decision to a pair's features.
  const scored = train.map((c) => ({ ...c, pairs: c.pairs.map(([a, b, x]): [number, number, number[]] => [a, b, [prob(x), x[rulesFeature]]]) }));
  const candidates: Array<{ label: string; on: (p: number, byRules: boolean) => boolean }> = [];
  if (variant === 'gbdt') for (const t of THRESHOLDS) candidates.push({ label: `p ≥ ${t}`, on: (p) => p >= t });
  else
    for (const lo of [0, 0.1, 0.2, 0.3, 0.4, 0.5])
      for (const hi of [0.5, 0.6, 0.7, 0.8, 0.9, 1.01]) candidates.push({ label: `rules ∧ p ≥ ${lo}, or p ≥ ${hi}`, on: (p, byRules) => p >= (byRules ? lo : hi) });
  let best: { score: number; rule: Rule } | undefined;
  for (const linkage of ['single', 'average'] as const) {
    for (const cand of candidates) {
      const byRepo = new Map<string, number[]>();
      for (const c of scored) byRepo.set(c.repo, [...(byRepo.get(c.repo) ?? []), randIndex(truthOf(c), groupsBy(c, ([p, r]) => cand.on(p, r === 1), linkage))]);
      const score = objective(byRepo);
      if (!best || score > best.score + 1e-12) best = { score, rule: { linkage, joins: (x) => cand.on(prob(x), x[rulesFeature] === 1), label: `${cand.label}, ${linkage}` } };
    }
  }
  return best!.rule;
}

export function main(args: string[]): void {
  const variant = argValue(args, '--variant') ?? 'gbdt';
  if (variant !== 'gbdt' && variant !== 'veto') throw new Error(`--variant: gbdt or veto, not ${variant}`);
  const cases = loadDumps(argValue(args, '--dumps') ?? DEFAULT_DUMPS);
  const d = AFFINITY_FEATURES.length;
  const rulesFeature = AFFINITY_FEATURES.indexOf('rules');
  const repos = [...new Set(cases.map((c) => c.repo))].sort().slice(0, Number(argValue(args, '--folds') ?? Infinity));
  const rows: Array<{ repo: string; variant: number; rules: number; byFile: number; byDir: number; mean: number }> = [];
  for (const repo of repos) {
    const rule = chooseRule(variant, cases.filter((c) => c.repo !== repo), d, rulesFeature);
    const held = cases.filter((c) => c.repo === repo);
    const scores = held.map((c) => randIndex(truthOf(c), groupsBy(c, rule.joins, rule.linkage)));
    const row = {
      repo,
      variant: median(scores),
      mean: mean(scores),
      rules: median(held.map((c) => randIndex(truthOf(c), rulesGroups(c, rulesFeature)))),
      byFile: median(held.map((c) => randIndex(truthOf(c), byFileGroups(c)))),
      byDir: median(held.map((c) => randIndex(truthOf(c), byDirGroups(c)))),
    };
    rows.push(row);
    console.log(`${repo.padEnd(34)} ${variant} ${row.variant.toFixed(3)} (mean ${row.mean.toFixed(3)})  rules ${row.rules.toFixed(3)}  by-file ${row.byFile.toFixed(3)}  by-dir ${row.byDir.toFixed(3)}  [${rule.label}]`);
  }
  const counts = (k: 'variant' | 'rules') => ({
    medianAtLeast080: rows.filter((r) => r[k] >= 0.8).length,
    andAboveBoth: rows.filter((r) => r[k] >= 0.8 && r[k] > r.byFile && r[k] > r.byDir).length,
    andNotBelowEither: rows.filter((r) => r[k] >= 0.8 && r[k] >= r.byFile && r[k] >= r.byDir).length,
    belowByFile: rows.filter((r) => r[k] < r.byFile).length,
    meanOfMedians: Math.round(mean(rows.map((r) => r[k])) * 1000) / 1000,
  });
  console.log(JSON.stringify({ bench: 'fit-cohorts-variants', variant, repositories: rows.length, cases: cases.filter((c) => repos.includes(c.repo)).length, [variant]: counts('variant'), rules: counts('rules') }));
}
