import * as path from 'node:path';
import { partitionByAffinity, pairProbability } from '../../src/cohorts/affinity';
import { MAX_COHORT_FILES } from '../../src/cohorts/form';
import type { AffinityModel } from '../../src/cohorts/types';
import { randIndex } from './cohort-score';

/**
 * The fitter of the cohort affinity model (bench/fit-cohorts.ts), pure and deterministic so that
 * test/bench/affinity-fit.test.ts can hold it to exact behaviour on a small synthetic dump.
 *
 * A dump case (bench/eval-cohorts.ts `--dump`) lists a composite change's code files, the commit each came from, the
 * formation node each maps to and the feature vector of each pair of nodes. The fit:
 * 1. logistic regression of "same commit" on the pair features, L2-penalized, by a fixed number of Newton steps; each
 *    pair weighs 1 / (pairs of its case × cases of its repository), so every repository counts the same and every case
 *    of it the same, as in the per-repository Rand the report measures;
 * 2. the join threshold and linkage that maximize, over the training repositories, the mean of each repository's median
 *    and mean Rand index when the cohorts are formed from the model's probabilities (affinity.ts `partitionByAffinity`,
 *    the engine's own code).
 */

export interface DumpCase {
  repo: string;
  files: string[];
  truth: number[];
  node: number[];
  pairs: Array<[number, number, number[]]>;
}

export const L2 = Number(process.env.AFFINITY_L2 ?? 1e-3);
export const NEWTON_STEPS = 30;
export const THRESHOLDS = (process.env.AFFINITY_THRESHOLDS ?? '0.3,0.4,0.5,0.6,0.7').split(',').map(Number);
/**
 * Added to the `rules` weight after the log-loss fit and chosen with the threshold by the Rand objective: the
 * log-loss calibrates each pair, while the objective scores whole partitions, where the rules' transitive groups
 * count more than any one pair's evidence.
 */
export const RULES_BOOSTS = (process.env.AFFINITY_BOOSTS ?? '0,2').split(',').map(Number);
export const LINKAGES: Array<AffinityModel['linkage']> = (process.env.AFFINITY_LINKAGE ?? 'single,average').split(',') as Array<AffinityModel['linkage']>;

/** Solves A x = b (A symmetric positive definite, small) by Gaussian elimination with partial pivoting. */
function solve(a: number[][], b: number[]): number[] {
  const n = b.length;
  const m = a.map((row, i) => [...row, b[i]]);
  for (let c = 0; c < n; c++) {
    let p = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(m[r][c]) > Math.abs(m[p][c])) p = r;
    [m[c], m[p]] = [m[p], m[c]];
    const d = m[c][c] || 1e-12;
    for (let r = 0; r < n; r++) {
      if (r === c) continue;
      const f = m[r][c] / d;
      if (!f) continue;
      for (let k = c; k <= n; k++) m[r][k] -= f * m[c][k];
    }
  }
  return m.map((row, i) => row[n] / (row[i] || 1e-12));
}

/** Training pairs of cases: distinct formation nodes of two files, label same commit, weight per the header. */
export function trainingPairs(cases: DumpCase[]): Array<{ x: number[]; y: number; w: number }> {
  const perRepo = new Map<string, number>();
  for (const c of cases) perRepo.set(c.repo, (perRepo.get(c.repo) ?? 0) + 1);
  const out: Array<{ x: number[]; y: number; w: number }> = [];
  for (const c of cases) {
    const xs = new Map(c.pairs.map(([a, b, x]) => [`${a} ${b}`, x]));
    const rows: Array<{ x: number[]; y: number }> = [];
    let total = 0;
    for (let i = 0; i < c.files.length; i++) {
      for (let j = i + 1; j < c.files.length; j++) {
        total++;
        const [a, b] = [c.node[i], c.node[j]].sort((p, q) => p - q);
        if (a < 0 || a === b) continue;
        const x = xs.get(`${a} ${b}`);
        if (x) rows.push({ x, y: c.truth[i] === c.truth[j] ? 1 : 0 });
      }
    }
    for (const r of rows) out.push({ ...r, w: 1 / (total * perRepo.get(c.repo)!) });
  }
  return out;
}

/** L2-penalized weighted logistic regression (bias unpenalized) by NEWTON_STEPS Newton steps from zero. */
export function fitLogistic(rows: Array<{ x: number[]; y: number; w: number }>, features: number, l2 = L2): { bias: number; weights: number[] } {
  const d = features + 1;
  let beta = new Array<number>(d).fill(0);
  const wsum = rows.reduce((s, r) => s + r.w, 0) || 1;
  for (let step = 0; step < NEWTON_STEPS; step++) {
    const g = new Array<number>(d).fill(0);
    const h = Array.from({ length: d }, () => new Array<number>(d).fill(0));
    for (const r of rows) {
      const v = [1, ...r.x];
      let z = 0;
      for (let k = 0; k < d; k++) z += beta[k] * v[k];
      const p = 1 / (1 + Math.exp(-z));
      const w = r.w / wsum;
      const s = w * p * (1 - p);
      for (let k = 0; k < d; k++) {
        if (!v[k]) continue;
        g[k] += w * (p - r.y) * v[k];
        for (let l = 0; l < d; l++) if (v[l]) h[k][l] += s * v[k] * v[l];
      }
    }
    for (let k = 1; k < d; k++) {
      g[k] += l2 * beta[k];
      h[k][k] += l2;
    }
    h[0][0] += 1e-9;
    const delta = solve(h, g);
    beta = beta.map((b, k) => b - delta[k]);
  }
  return { bias: beta[0], weights: beta.slice(1) };
}

/** Each file's group when the model forms the case's cohorts (a file without a node is alone). */
export function modelGroups(c: DumpCase, model: Pick<AffinityModel, 'bias' | 'weights' | 'threshold' | 'linkage'>): Map<string, string> {
  const n = Math.max(-1, ...c.node, ...c.pairs.flatMap(([a, b]) => [a, b])) + 1;
  const pairs = c.pairs.map(([a, b, x]) => ({ a, b, p: pairProbability(model, x) }));
  const group = partitionByAffinity(n, pairs, model.threshold, MAX_COHORT_FILES, model.linkage);
  return new Map(c.files.map((f, i) => [f, c.node[i] < 0 ? `alone\0${f}` : String(group[c.node[i]])]));
}

/** The rule engine's groups as the dump records them (the `rules` feature: one cohort). */
export function rulesGroups(c: DumpCase, rulesFeature: number): Map<string, string> {
  const n = Math.max(-1, ...c.node, ...c.pairs.flatMap(([a, b]) => [a, b])) + 1;
  const group = partitionByAffinity(n, c.pairs.filter(([, , x]) => x[rulesFeature] === 1).map(([a, b]) => ({ a, b, p: 1 })), 0.5, Infinity, 'single');
  return new Map(c.files.map((f, i) => [f, c.node[i] < 0 ? `alone\0${f}` : String(group[c.node[i]])]));
}

export const truthOf = (c: DumpCase): Map<string, number> => new Map(c.files.map((f, i) => [f, c.truth[i]]));
export const byFileGroups = (c: DumpCase): Map<string, string> => new Map(c.files.map((f) => [f, f]));
export const byDirGroups = (c: DumpCase): Map<string, string> => new Map(c.files.map((f) => [f, path.posix.dirname(f)]));

export function median(xs: number[]): number {
  if (!xs.length) return 0;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}
export const mean = (xs: number[]): number => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);

/** Per repository, the model's Rand index of each case. */
function scoresByRepo(cases: DumpCase[], model: Pick<AffinityModel, 'bias' | 'weights' | 'threshold' | 'linkage'>): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const c of cases) out.set(c.repo, [...(out.get(c.repo) ?? []), randIndex(truthOf(c), modelGroups(c, model))]);
  return out;
}

/** The objective a threshold and linkage are chosen by: the mean over repositories of (median + mean) / 2 Rand. */
export function objective(byRepo: Map<string, number[]>): number {
  const kind = process.env.AFFINITY_OBJECTIVE ?? 'both';
  const per = [...byRepo.values()].map((xs) => (kind === 'median' ? median(xs) : kind === 'mean' ? mean(xs) : (median(xs) + mean(xs)) / 2));
  return mean(per);
}

/** Fits weights, then the threshold and linkage, on the given cases. */
export function fitModel(cases: DumpCase[], features: readonly string[]): Omit<AffinityModel, 'version'> {
  const fitted = fitLogistic(trainingPairs(cases), features.length);
  const rules = features.indexOf('rules');
  let best: { threshold: number; linkage: AffinityModel['linkage']; weights: number[]; score: number } | undefined;
  for (const boost of rules < 0 ? [0] : RULES_BOOSTS) {
    const weights = fitted.weights.map((w, f) => (f === rules ? w + boost : w));
    for (const linkage of LINKAGES) {
      for (const threshold of THRESHOLDS) {
        const score = objective(scoresByRepo(cases, { bias: fitted.bias, weights, threshold, linkage }));
        if (!best || score > best.score + 1e-12) best = { threshold, linkage, weights, score };
      }
    }
  }
  return { features, bias: fitted.bias, weights: best!.weights, threshold: best!.threshold, linkage: best!.linkage };
}

export interface RepoRow {
  repo: string;
  cases: number;
  fitted: { median: number; mean: number };
  rules: { median: number; mean: number };
  byFile: { median: number; mean: number };
  byDir: { median: number; mean: number };
  /** Fitted vs by-directory and vs by-file per case. */
  vsDir: { wins: number; ties: number; losses: number };
  vsFile: { wins: number; ties: number; losses: number };
}

function wtl(a: number[], b: number[]): { wins: number; ties: number; losses: number } {
  const r = { wins: 0, ties: 0, losses: 0 };
  a.forEach((x, i) => {
    if (Math.abs(x - b[i]) < 1e-9) r.ties++;
    else if (x > b[i]) r.wins++;
    else r.losses++;
  });
  return r;
}

/** Leave-repository-out: for each repository, the model fitted on all others scores its cases. */
export function crossValidate(cases: DumpCase[], features: readonly string[], onRepo?: (row: RepoRow, model: Omit<AffinityModel, 'version'>) => void): RepoRow[] {
  const repos = [...new Set(cases.map((c) => c.repo))].sort();
  const rulesFeature = features.indexOf('rules');
  const rows: RepoRow[] = [];
  for (const repo of repos) {
    const held = cases.filter((c) => c.repo === repo);
    const model = fitModel(cases.filter((c) => c.repo !== repo), features);
    const fitted = held.map((c) => randIndex(truthOf(c), modelGroups(c, model)));
    const rules = held.map((c) => randIndex(truthOf(c), rulesGroups(c, rulesFeature)));
    const byFile = held.map((c) => randIndex(truthOf(c), byFileGroups(c)));
    const byDir = held.map((c) => randIndex(truthOf(c), byDirGroups(c)));
    const mm = (xs: number[]) => ({ median: median(xs), mean: mean(xs) });
    const row: RepoRow = { repo, cases: held.length, fitted: mm(fitted), rules: mm(rules), byFile: mm(byFile), byDir: mm(byDir), vsDir: wtl(fitted, byDir), vsFile: wtl(fitted, byFile) };
    rows.push(row);
    onRepo?.(row, model);
  }
  return rows;
}
