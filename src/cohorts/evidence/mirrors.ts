import * as path from 'node:path';
import { pushTo } from '../group';

/**
 * Generated or vendored mirrors (the `mirror` formation signal): a directory tree whose files are copies of
 * another tree's, the same relative paths under two roots (zod v3's `deno/lib/` ↔ `src/`, a `deno_dist/`
 * copy of `src/`), content equal once module specifiers are normalized (`./types.ts` → `./types`,
 * `./index` → `.`). Cheap by construction: only changed files of the same name are candidates, the tree
 * evidence is read from the index's definitions, and only candidate pairs' texts are compared, line by
 * hashed line.
 */

/** A changed file paired with the file it mirrors. */
export interface MirrorPair {
  /** The copy (`deno/lib/types.ts`). */
  mirror: string;
  /** What it is a copy of (`src/types.ts`). */
  source: string;
}

/** Two changed files with the same relative path `tail` under two different roots. */
export interface MirrorCandidate {
  a: string;
  b: string;
  rootA: string;
  rootB: string;
  tail: string;
}

/** Root directory of `p` once `tail` is dropped (`deno/lib/helpers/util.ts`, `helpers/util.ts` → `deno/lib`). */
function rootOf(p: string, tail: string): string {
  return p.length === tail.length ? '' : p.slice(0, p.length - tail.length - 1);
}

/**
 * Pairs of changed files with the same name whose longest common path suffix leaves two different
 * roots. Candidates only: `detectMirrors` decides.
 */
export function mirrorCandidates(paths: string[]): MirrorCandidate[] {
  const byName = new Map<string, string[]>();
  for (const p of [...new Set(paths)].sort()) pushTo(byName, path.posix.basename(p), p);
  const out: MirrorCandidate[] = [];
  for (const ps of byName.values()) {
    // A name changed in very many places (index.ts of every package) is no copy of one tree.
    if (ps.length < 2 || ps.length > 8) continue;
    for (let i = 0; i < ps.length; i++) {
      for (let j = i + 1; j < ps.length; j++) {
        const x = ps[i].split('/');
        const y = ps[j].split('/');
        let n = 0;
        while (n < x.length && n < y.length && x[x.length - 1 - n] === y[y.length - 1 - n]) n++;
        const tail = x.slice(x.length - n).join('/');
        out.push({ a: ps[i], b: ps[j], rootA: rootOf(ps[i], tail), rootB: rootOf(ps[j], tail), tail });
      }
    }
  }
  return out;
}

/** A relative module specifier without its extension or `/index`: `./types.ts` and `./types` compare equal, `./index.ts` and `.` too. */
function normalizeSpecifier(spec: string): string {
  const s = spec.replace(/\.(?:d\.[cm]?ts|[cm]?[jt]sx?)$/, '').replace(/\/index$/, '').replace(/\/$/, '');
  return s === '' ? '.' : s;
}

/** The lines of a text as a mirror compares them: trimmed, whitespace collapsed, blank lines dropped, relative specifiers normalized. */
export function mirrorLines(text: string): string[] {
  const out: string[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim().replace(/\s+/g, ' ');
    if (!line) continue;
    out.push(line.replace(/(['"`])(\.{1,2}(?:\/[^'"`\s]*)?)\1/g, (_m, _q, spec: string) => `'${normalizeSpecifier(spec)}'`));
  }
  return out;
}

/** Dice similarity of two multisets of strings (lines, definition names). */
function dice(la: readonly string[], lb: readonly string[]): number {
  if (!la.length || !lb.length) return 0;
  const count = new Map<string, number>();
  for (const l of la) count.set(l, (count.get(l) ?? 0) + 1);
  let common = 0;
  for (const l of lb) {
    const c = count.get(l) ?? 0;
    if (c > 0) {
      common++;
      count.set(l, c - 1);
    }
  }
  return (2 * common) / (la.length + lb.length);
}

/** Dice similarity of two texts' normalized line multisets: 1 for copies that differ only in specifiers. */
export function mirrorSimilarity(a: string, b: string): number {
  return dice(mirrorLines(a), mirrorLines(b));
}

/** Two files count as copies at this similarity (a Deno test swaps its two test-framework import lines). */
export const MIRROR_MIN_SIMILARITY = 0.8;
/** Files of the two trees (the pair included) whose definitions must be the same for the roots to be a mirror. */
export const MIRROR_MIN_TREE_FILES = 3;

/**
 * Whether `rootA` and `rootB` hold copies of one tree: of the indexed files with the same relative path
 * under both and any definitions, at least MIRROR_MIN_TREE_FILES and at least half define the same
 * (qualified names, Dice ≥ MIRROR_MIN_SIMILARITY: a Deno test adds `const test = Deno.test`). `defsOf`
 * maps an indexed path to its definitions' qualified names.
 */
export function isMirrorTree(rootA: string, rootB: string, defsOf: ReadonlyMap<string, readonly string[]>): boolean {
  const join = (root: string, rel: string) => (root === '' ? rel : `${root}/${rel}`);
  let counterparts = 0;
  let same = 0;
  for (const [p, defs] of defsOf) {
    const rel = rootA === '' ? p : p.startsWith(`${rootA}/`) ? p.slice(rootA.length + 1) : undefined;
    if (rel === undefined) continue;
    const other = defsOf.get(join(rootB, rel));
    if (other === undefined || (!defs.length && !other.length)) continue;
    counterparts++;
    if (dice(defs, other) >= MIRROR_MIN_SIMILARITY) same++;
  }
  return same >= MIRROR_MIN_TREE_FILES && same * 2 >= counterparts;
}

const MIRROR_ROOT = /(^|[/_.-])(deno|dist|vendor|vendored|generated|gen|build|out|esm|cjs|mirror|copy)([/_.-]|$)/i;

/** Which of the two is the copy: a root named like generated output (`deno/lib`, `deno_dist`), else the deeper root, else the later path. */
export function orientMirror(c: MirrorCandidate): MirrorPair {
  const ma = MIRROR_ROOT.test(c.rootA);
  const mb = MIRROR_ROOT.test(c.rootB);
  if (ma !== mb) return ma ? { mirror: c.a, source: c.b } : { mirror: c.b, source: c.a };
  const da = c.rootA === '' ? 0 : c.rootA.split('/').length;
  const db = c.rootB === '' ? 0 : c.rootB.split('/').length;
  if (da !== db) return da > db ? { mirror: c.a, source: c.b } : { mirror: c.b, source: c.a };
  return c.a < c.b ? { mirror: c.b, source: c.a } : { mirror: c.a, source: c.b };
}

/**
 * Root pairs one computation examines at most. Each examination walks the index once, so a PR changing
 * thousands of same-named files in distinct directories would otherwise cost (root pairs × indexed files);
 * real mirrors are one or two root pairs. Candidates come sorted, so which pairs are examined is
 * deterministic; the rest count as no mirror.
 */
export const MIRROR_MAX_ROOT_PAIRS = 32;

/**
 * The mirrors among changed files: candidates whose roots hold copies of one tree (`isMirrorTree`) and
 * whose own texts (head, or base for two deleted files; `textOf` undefined when unreadable) are copies.
 */
export async function detectMirrors(candidates: MirrorCandidate[], defsOf: ReadonlyMap<string, readonly string[]>, textOf: (p: string) => Promise<string | undefined>): Promise<MirrorPair[]> {
  const out: MirrorPair[] = [];
  const trees = new Map<string, boolean>();
  for (const c of candidates) {
    const key = `${c.rootA}\0${c.rootB}`;
    if (!trees.has(key)) {
      if (trees.size >= MIRROR_MAX_ROOT_PAIRS) continue;
      trees.set(key, isMirrorTree(c.rootA, c.rootB, defsOf));
    }
    if (!trees.get(key)) continue;
    const [ta, tb] = await Promise.all([textOf(c.a), textOf(c.b)]);
    if (ta === undefined || tb === undefined || mirrorSimilarity(ta, tb) < MIRROR_MIN_SIMILARITY) continue;
    out.push(orientMirror(c));
  }
  return out;
}
