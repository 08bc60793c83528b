import * as path from 'node:path';
import { testedStem } from './evidence/pairing';
import { MAX_FILE_SHARE } from './evidence/shared-identifiers';
import { signalsOf } from './registry';
import { UnionFind } from './union-find';
import type { AffinityModel, FormationFile, FormationInput, Join, Link, PairEvidence } from './types';
import { pushTo } from './group';

/**
 * Pairwise affinity of changed files: every signal's say about a pair of semantic files becomes one feature of that
 * pair, and one fitted combination of the features (a logistic model, `weights.json`, fitted by bench/fit-cohorts.ts on
 * composite commits of many repositories and validated leaving each repository out) decides which pairs belong
 * together. The rule engine's own partition is one feature among them, so the model starts from what the rules say.
 */

/** The joining signals (pre-join and join stages, registry order): each is one feature, 1 when it would join the pair. */
const JOIN_SIGNALS = [...signalsOf('pre-join'), ...signalsOf('join')].map((s) => s.id);

/**
 * The features of a pair, in the order of a model's weights. Changing this list (or what a feature means) needs a
 * refit: `weights.json` records the list it was fitted with and the engine refuses a model whose list differs.
 */
export const EVIDENCE_FEATURES: readonly string[] = [
  /** The rule engine put the two files in one cohort. */
  'rules',
  /** The rule engine left both files alone. */
  'rules-loners',
  /** A reference link between the two (either direction). */
  'link',
  /** Distinct linked definitions between the two, capped at 4, over 4. */
  'link-count',
  /** A test whose references vote for the other file (the tests' vote). */
  'test-vote',
  ...JOIN_SIGNALS.map((s) => `signal:${s}`),
  /** Rare identifiers (MAX_FILE_SHARE) both files' changed lines name, capped at 5, over 5. */
  'shared-rare-ids',
  /** Of those, the ones no other changed file names, capped at 5, over 5. */
  'exclusive-rare-ids',
  /** Changed lines (normalized) both files add or remove, capped at 5, over 5. */
  'shared-edit-lines',
  /** Same directory and both left alone by the rules. */
  'same-dir-loners',
];

/** Language families: a feature each for a pair of files of one family, and for such a pair in one directory. */
const FAMILIES: ReadonlyArray<[string, readonly string[]]> = [
  ['js', ['javascript', 'typescript', 'tsx']],
  ['python', ['python']],
  ['go', ['go']],
  ['jvm', ['kotlin', 'java', 'scala']],
  ['swift', ['swift']],
  ['dart', ['dart']],
];
const familyOf = (language: string | undefined): string | undefined => FAMILIES.find(([, ls]) => language !== undefined && ls.includes(language))?.[0];

/**
 * Features of a pair that its two paths (their roles and languages) alone give. Chosen by leave-repository-out CV on the
 * first 20 corpus repositories by name (docs/cohorts.md): the change's size, the first path segment and the extension
 * as features lowered the cross-validated mean of medians there, so they are not here.
 */
export const PATH_FEATURES: readonly string[] = [
  /** Same directory. */
  'same-dir',
  /** Directory steps between the two, capped at 6, over 6. */
  'dir-distance',
  /** One a test, the other a source. */
  'test-source',
  /** Both tests. */
  'both-tests',
  /** The same stem once test markers are dropped (`foo_test.go`, `foo.go`). */
  'same-stem',
  ...FAMILIES.flatMap(([f]) => [`lang:${f}`, `same-dir:${f}`]),
];

/**
 * The features of a pair, in the order of a model's weights. Changing this list (or what a feature means) needs a
 * refit: `weights.json` records the list it was fitted with and the engine refuses a model whose list differs.
 */
export const AFFINITY_FEATURES: readonly string[] = [...EVIDENCE_FEATURES, ...PATH_FEATURES];

export interface PathSide {
  path: string;
  role: string;
  language?: string;
}

/** The path features of two files (PATH_FEATURES order). */
export function pathFeatures(a: PathSide, b: PathSide): number[] {
  const da = path.posix.dirname(a.path);
  const db = path.posix.dirname(b.path);
  const sa = testedStem(a.path) ?? '';
  const x = [da === db ? 1 : 0, Math.min(dirSteps(da, db), 6) / 6, (a.role === 'test') !== (b.role === 'test') ? 1 : 0, a.role === 'test' && b.role === 'test' ? 1 : 0, sa && sa === testedStem(b.path) ? 1 : 0];
  const fa = familyOf(a.language);
  const same = fa !== undefined && fa === familyOf(b.language);
  for (const [f] of FAMILIES) x.push(same && fa === f ? 1 : 0, same && fa === f && da === db ? 1 : 0);
  return x;
}

/** Above this many semantic files only pairs with some evidence beyond paths are scored (the pair count is quadratic). */
export const MAX_DENSE_FILES = 300;

const idx = new Map(AFFINITY_FEATURES.map((f, i) => [f, i]));

function dirSteps(a: string, b: string): number {
  const x = a === '.' ? [] : a.split('/');
  const y = b === '.' ? [] : b.split('/');
  let n = 0;
  while (n < x.length && n < y.length && x[n] === y[n]) n++;
  return x.length - n + (y.length - n);
}

/** Each pair's features from the rule engine's partition and the joins and votes its signals asked for (observe mode). */
export function pairEvidence(input: FormationInput, semantic: FormationFile[], links: Link[], rules: UnionFind, observed: { joins: Join[]; votes: Array<{ test: string; file: string }> }): PairEvidence {
  const files = semantic.map((f) => f.path);
  const at = new Map(files.map((p, i) => [p, i]));
  const key = (a: string, b: string) => {
    const i = at.get(a);
    const j = at.get(b);
    if (i === undefined || j === undefined || i === j) return undefined;
    return i < j ? i * files.length + j : j * files.length + i;
  };
  const sparse = new Map<number, Map<number, number>>();
  const set = (k: number | undefined, feature: string, v: number) => {
    if (k === undefined) return;
    const m = sparse.get(k) ?? new Map<number, number>();
    m.set(idx.get(feature)!, v);
    sparse.set(k, m);
  };
  const linkSymbols = new Map<number, Set<string>>();
  for (const l of links) {
    const k = key(l.fromFile, l.toFile);
    if (k === undefined) continue;
    const s = linkSymbols.get(k) ?? new Set<string>();
    s.add(`${l.fromSymbol}\0${l.toSymbol}`);
    linkSymbols.set(k, s);
  }
  for (const [k, s] of linkSymbols) {
    set(k, 'link', 1);
    set(k, 'link-count', Math.min(s.size, 4) / 4);
  }
  for (const v of observed.votes) set(key(v.test, v.file), 'test-vote', 1);
  // Shared names and lines, counted through each name's files (linear in the names; a name of many files is no evidence).
  const shared = (byFile: Map<string, Set<string>> | undefined, keep: (name: string) => boolean, count: (k: number, files: number) => void) => {
    if (!byFile) return;
    const filesOf = new Map<string, number[]>();
    files.forEach((p, i) => {
      for (const name of byFile.get(p) ?? []) if (keep(name)) pushTo(filesOf, name, i);
    });
    for (const fs of filesOf.values()) {
      if (fs.length < 2 || fs.length > 8) continue;
      for (let x = 0; x < fs.length; x++) for (let y = x + 1; y < fs.length; y++) count(fs[x] * files.length + fs[y], fs.length);
    }
  };
  const tally = new Map<string, Map<number, number>>();
  const add = (feature: string) => (k: number) => {
    const m = tally.get(feature) ?? new Map<number, number>();
    m.set(k, (m.get(k) ?? 0) + 1);
    tally.set(feature, m);
  };
  const frequency = input.identifierFrequency;
  if (frequency) {
    const rare = (name: string) => name.length >= 3 && (frequency.counts.get(name) ?? 0) <= Math.max(2, MAX_FILE_SHARE * frequency.files);
    shared(input.changedIdentifiers, rare, (k, n) => {
      add('shared-rare-ids')(k);
      if (n === 2) add('exclusive-rare-ids')(k);
    });
  }
  shared(input.editLines, () => true, add('shared-edit-lines'));
  for (const [feature, m] of tally) for (const [k, v] of m) set(k, feature, Math.min(v, 5) / 5);
  for (const j of observed.joins) set(key(j.a, j.b), `signal:${j.signal}`, 1);
  const n = files.length;
  const dense = n <= MAX_DENSE_FILES;
  const dirs = files.map((p) => path.posix.dirname(p));
  const sides: PathSide[] = semantic.map((f) => ({ path: f.path, role: f.role, language: f.language }));
  const pathAt = EVIDENCE_FEATURES.length;
  const roots = files.map((p) => rules.find(p));
  const alone = files.map((p) => rules.sizeOf(p) === 1);
  const pairs: PairEvidence['pairs'] = [];
  const byRoot = new Map<string, number[]>();
  roots.forEach((r, i) => pushTo(byRoot, r, i));
  const candidates: number[] = [];
  if (dense) {
    for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) candidates.push(i * n + j);
  } else {
    const ks = new Set<number>(sparse.keys());
    for (const members of byRoot.values()) for (let x = 0; x < members.length; x++) for (let y = x + 1; y < members.length; y++) ks.add(members[x] * n + members[y]);
    candidates.push(...[...ks].sort((p, q) => p - q));
  }
  for (const k of candidates) {
    const i = Math.floor(k / n);
    const j = k % n;
    const x = new Array<number>(AFFINITY_FEATURES.length).fill(0);
    for (const [f, v] of sparse.get(k) ?? []) x[f] = v;
    const put = (f: string, v: number) => (x[idx.get(f)!] = v);
    if (roots[i] === roots[j]) put('rules', 1);
    if (alone[i] && alone[j]) put('rules-loners', 1);
    if (dirs[i] === dirs[j] && alone[i] && alone[j]) put('same-dir-loners', 1);
    pathFeatures(sides[i], sides[j]).forEach((v, f) => (x[pathAt + f] = v));
    pairs.push({ a: i, b: j, x });
  }
  return { files, pairs };
}

export const sigmoid = (z: number): number => 1 / (1 + Math.exp(-z));

/** The model's probability that a pair belongs together. */
export function pairProbability(model: Pick<AffinityModel, 'bias' | 'weights'>, x: readonly number[]): number {
  let z = model.bias;
  for (let f = 0; f < x.length; f++) if (x[f]) z += model.weights[f] * x[f];
  return sigmoid(z);
}

/**
 * The partition of `n` nodes that the pair probabilities give: most probable pair first (ties by index), a pair at or
 * above the threshold joins its two groups unless the result would exceed `maxSize`. With `average` linkage two groups
 * join when the mean probability over all their cross pairs (a pair not listed counts 0) reaches the threshold.
 * Deterministic: the same probabilities, the same partition. Returns each node's group (its smallest member index).
 */
export function partitionByAffinity(n: number, pairs: ReadonlyArray<{ a: number; b: number; p: number }>, threshold: number, maxSize: number, linkage: 'single' | 'average'): number[] {
  const group = Array.from({ length: n }, (_, i) => i);
  const members = new Map<number, number[]>(group.map((g) => [g, [g]]));
  const ordered = pairs.filter((q) => q.p >= threshold).sort((x, y) => y.p - x.p || x.a - y.a || x.b - y.b);
  if (linkage === 'single' || n > MAX_DENSE_FILES) {
    for (const q of ordered) {
      const ga = group[q.a];
      const gb = group[q.b];
      if (ga === gb) continue;
      const ma = members.get(ga)!;
      const mb = members.get(gb)!;
      if (ma.length + mb.length > maxSize) continue;
      const [keep, drop] = ga < gb ? [ga, gb] : [gb, ga];
      const merged = [...members.get(keep)!, ...members.get(drop)!];
      for (const m of merged) group[m] = keep;
      members.set(keep, merged);
      members.delete(drop);
    }
    return group;
  }
  // Average linkage: repeatedly join the two groups whose cross pairs have the highest mean probability.
  const p = new Map<number, number>();
  for (const q of pairs) p.set(Math.min(q.a, q.b) * n + Math.max(q.a, q.b), q.p);
  const sum = new Map<number, number>(); // group pair key (g < h) → sum of cross probabilities
  for (const [k, v] of p) sum.set(k, v);
  for (;;) {
    let best: { g: number; h: number; mean: number } | undefined;
    for (const [k, s] of sum) {
      const g = Math.floor(k / n);
      const h = k % n;
      const size = members.get(g)!.length * members.get(h)!.length;
      if (members.get(g)!.length + members.get(h)!.length > maxSize) continue;
      const mean = s / size;
      if (mean < threshold) continue;
      if (!best || mean > best.mean || (mean === best.mean && (g < best.g || (g === best.g && h < best.h)))) best = { g, h, mean };
    }
    if (!best) return group;
    const { g: keep, h: drop } = best;
    const merged = [...members.get(keep)!, ...members.get(drop)!];
    for (const m of merged) group[m] = keep;
    members.set(keep, merged);
    members.delete(drop);
    // Cross sums of the merged group with every other: the sums of both parts.
    const next = new Map<number, number>();
    for (const [k, s] of sum) {
      let g = Math.floor(k / n);
      let h = k % n;
      if (g === drop) g = keep;
      if (h === drop) h = keep;
      if (g === h) continue;
      const kk = Math.min(g, h) * n + Math.max(g, h);
      next.set(kk, (next.get(kk) ?? 0) + s);
    }
    sum.clear();
    for (const [k, s] of next) sum.set(k, s);
  }
}

/** A pair the model joined, with the features that weighed most for it. */
export interface AffinityJoin {
  a: string;
  b: string;
  p: number;
  because: string[];
}

/** The cohorts a model forms from a change's pair evidence, as a union of file paths, and the pairs that joined them. */
export function affinityUnion(evidence: PairEvidence, model: AffinityModel, maxSize: number): { uf: UnionFind; joined: AffinityJoin[] } {
  const pairs = evidence.pairs.map((q) => ({ a: q.a, b: q.b, p: pairProbability(model, q.x) }));
  const group = partitionByAffinity(evidence.files.length, pairs, model.threshold, maxSize, model.linkage);
  const uf = new UnionFind();
  for (const f of evidence.files) uf.add(f);
  group.forEach((g, i) => uf.union(evidence.files[g], evidence.files[i]));
  const joined: AffinityJoin[] = [];
  evidence.pairs.forEach((q, k) => {
    if (group[q.a] !== group[q.b] || pairs[k].p < model.threshold) return;
    const because = q.x
      .map((v, f) => ({ f, c: v * model.weights[f] }))
      .filter((t) => t.c > 0)
      .sort((x, y) => y.c - x.c || x.f - y.f)
      .slice(0, 2)
      .map((t) => model.features[t.f]);
    joined.push({ a: evidence.files[q.a], b: evidence.files[q.b], p: pairs[k].p, because });
  });
  joined.sort((x, y) => y.p - x.p || x.a.localeCompare(y.a) || x.b.localeCompare(y.b));
  return { uf, joined };
}
