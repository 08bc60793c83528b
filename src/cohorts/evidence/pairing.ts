import * as path from 'node:path';
import { pushTo } from '../group';

/**
 * Name conventions that pair files without a resolved edge between them: a test and its subject, and
 * tooling configurations of one directory (generated or vendored mirrors: `mirrors.ts`). Formation uses them as
 * signals (src/cohorts/registry.ts); each is measured on `npm run eval:cohorts`.
 */

/** Test-name patterns per ecosystem: the capture is the subject's stem. */
const TEST_STEMS: RegExp[] = [
  /^(.+)\.(?:test|spec|tests|e2e|test-d)\.[cm]?[jt]sx?$/, // JS/TS: foo.test.ts, foo.spec.js, foo.test-d.ts (tsd)
  /^test_(.+)\.py$/, // Python: test_foo.py
  /^(.+)_test\.(?:py|go|rb|rs|exs|dart|c|cc|cpp|zig)$/, // foo_test.go, foo_test.py
  /^(.+)_spec\.rb$/, // RSpec
  /^(.+?)(?:Tests?|IT)\.(?:java|kt|cs|scala|php)$/, // FooTest.java
];

/** Stem of a file without its extension(s): `src/utils/body.ts` → `body`. */
function stemOf(p: string): string {
  return path.posix.basename(p).replace(/\.(d\.ts|[^.]+)$/, '');
}

/** The subject stem a test file names (lower-cased unless `keepCase`: camelCase parts need the case). */
export function testedStem(testPath: string, keepCase = false): string | undefined {
  const base = path.posix.basename(testPath);
  let stem = stemOf(testPath);
  for (const re of TEST_STEMS) {
    const m = re.exec(base);
    if (m) {
      stem = m[1];
      break;
    }
  }
  // tests/foo.ts beside src/foo.ts: the directory says it is a test, the name is the subject's.
  return keepCase ? stem : stem.toLowerCase();
}

/** Segments two paths share from the start. */
function commonPrefix(a: string, b: string): number {
  const x = a.split('/');
  const y = b.split('/');
  let n = 0;
  while (n < x.length - 1 && n < y.length - 1 && x[n] === y[n]) n++;
  return n;
}

/** A tsd type test: `index.test-d.ts` (tsd's convention for the checks of `index.d.ts`). */
const TYPE_TEST = /^(.+)\.test-d\.[cm]?tsx?$/;

const GENERIC_STEMS = new Set(['index', 'mod', 'main', '__init__', 'lib', 'util', 'utils', 'types', 'helpers']);

/**
 * A stem compared without case or separators: `http-error`, `http_error`, `HTTPError` → `httperror`; `_compat` (a
 * Python private module) → `compat`; `options.implies` → `optionsimplies`.
 */
function flatStem(stem: string): string {
  return stem.toLowerCase().replace(/[-_.]/g, '');
}

/** The generic stems, flattened: `__init__` → `init`. */
const GENERIC_FLAT = new Set([...GENERIC_STEMS].map(flatStem));

/**
 * Kebab, snake and camelCase parts of a stem, lower-cased: `as-stream` → as, stream; `persistAsync` → persist, async;
 * `HTTPError` → http, error; `_client` → client. One linear pass (a path is PR input).
 */
export function stemParts(stem: string): string[] {
  const parts: string[] = [];
  let cur = '';
  const upper = (c: string | undefined) => c !== undefined && c >= 'A' && c <= 'Z';
  const lower = (c: string | undefined) => c !== undefined && c >= 'a' && c <= 'z';
  const lowerOrDigit = (c: string | undefined) => lower(c) || (c !== undefined && c >= '0' && c <= '9');
  for (let i = 0; i < stem.length; i++) {
    const c = stem[i];
    if (c === '-' || c === '_' || c === ' ') {
      if (cur) parts.push(cur.toLowerCase());
      cur = '';
      continue;
    }
    // A part starts at an upper-case letter after a lower-case one (`persist|Async`), or at the last upper-case letter of
    // a run that a lower-case one follows (`HTTP|Error`).
    if (cur && upper(c) && (lowerOrDigit(stem[i - 1]) || (upper(stem[i - 1]) && lower(stem[i + 1])))) {
      parts.push(cur.toLowerCase());
      cur = '';
    }
    cur += c;
  }
  if (cur) parts.push(cur.toLowerCase());
  return parts;
}

/** Characters of the whole parts `short` shares with `long` as its first or last parts; 0 when none. */
function alignedLength(short: readonly string[], long: readonly string[]): number {
  if (!short.length || short.length >= long.length) return 0;
  const off = long.length - short.length;
  if (short.every((p, i) => long[i] === p) || short.every((p, i) => long[off + i] === p)) return short.join('').length;
  return 0;
}

/** The generic stems as parts join them: `__init__` → `init`. */
const GENERIC_PARTS = new Set([...GENERIC_STEMS].map((g) => stemParts(g).join('')));

/** Fewest characters of the shorter stem's parts a part-aligned pairing needs (`stream` ↔ `as-stream`, not `as` ↔ `as-stream`). */
export const MIN_ALIGNED_CHARS = 4;

interface SourceName {
  /** `flatStem` of the file's stem. */
  flat: string;
  /** `stemParts` of the stem; undefined for a dotted stem. */
  parts?: string[];
}

/** Per sources list (formation passes one list for all its tests), each source's flat stem and parts, computed once. */
const sourceNames = new WeakMap<readonly string[], SourceName[]>();
function namesOf(sources: readonly string[]): SourceName[] {
  let names = sourceNames.get(sources);
  if (!names || names.length !== sources.length) {
    names = sources.map((p) => {
      const stem = stemOf(p);
      return { flat: flatStem(stem), parts: stem.includes('.') ? undefined : stemParts(stem) };
    });
    sourceNames.set(sources, names);
  }
  return names;
}

/**
 * The changed source file a test is named for: same stem (case and `-`/`_`/`.` ignored: `flatStem`), nearest by shared directory prefix; undefined
 * when none or when two are equally near (an ambiguous name pairs nothing); a generic stem (`index`, `utils`) only
 * in the test's own directory (`sameDirectorySubject`). When no
 * changed source has the stem, the one whose stem's whole parts begin or end with the test's (or the reverse:
 * `alignedSubject`).
 */
export function subjectOf(testPath: string, sources: string[]): string | undefined {
  const tested = testedStem(testPath);
  if (!tested) return undefined;
  const stem = flatStem(tested);
  if (GENERIC_FLAT.has(stem)) return sameDirectorySubject(testPath, stem, sources);
  const names = namesOf(sources);
  const same = sources.filter((_, i) => names[i].flat === stem);
  if (!same.length) return alignedSubject(testedStem(testPath, true) ?? stem, sources, names);
  const scored = same.map((s) => ({ s, n: commonPrefix(testPath, s) })).sort((a, b) => b.n - a.n || a.s.localeCompare(b.s));
  if (scored.length > 1 && scored[0].n === scored[1].n) return undefined;
  return scored[0].s;
}

/**
 * A generic stem names no subject by itself, but beside the test it does: `src/middleware/cors/index.test.ts` ↔
 * `src/middleware/cors/index.ts`, `utils_test.go` ↔ `utils.go` — the one changed source of the test's directory with
 * that stem. A tsd type test (`index.test-d.ts`) is `typeTestSubject`'s: it checks the declarations, not `index.js`
 * (paired with `index.js` it cost execa 2 cases, docs/cohorts.md).
 */
function sameDirectorySubject(testPath: string, stem: string, sources: string[]): string | undefined {
  if (TYPE_TEST.test(path.posix.basename(testPath))) return undefined;
  const dir = path.posix.dirname(testPath);
  const here = sources.filter((s) => path.posix.dirname(s) === dir && flatStem(stemOf(s)) === stem);
  return here.length === 1 ? here[0] : undefined;
}

/**
 * No changed source has the test's stem: the one whose stem's kebab/snake/camelCase parts begin or end with all of the
 * test stem's parts, or the reverse — `stream` ↔ `as-stream`, `arguments` ↔ `normalize-arguments`, `persistAsync` ↔
 * `persist`, `client_ip_example` ↔ `client_ip` — the shorter side ≥ `MIN_ALIGNED_CHARS` characters and not a generic
 * stem. The most characters shared wins; a tie pairs nothing. A dotted stem (`command.help`: a class and an aspect of
 * it, commander's style) takes no part: paired with its class's file it cost commander 5 cases for 2 (docs/cohorts.md).
 */
function alignedSubject(testStem: string, sources: string[], names: readonly SourceName[]): string | undefined {
  if (testStem.includes('.')) return undefined;
  const t = stemParts(testStem);
  let best: string | undefined;
  let bestLen = 0;
  let tie = false;
  for (const [i, s] of sources.entries()) {
    const sp = names[i].parts;
    if (!sp) continue;
    const [short, long] = t.length <= sp.length ? [t, sp] : [sp, t];
    const len = alignedLength(short, long);
    if (len < MIN_ALIGNED_CHARS || GENERIC_PARTS.has(short.join(''))) continue;
    if (len > bestLen) [best, bestLen, tie] = [s, len, false];
    else if (len === bestLen) tie = true;
  }
  return tie ? undefined : best;
}

/**
 * The changed declaration file a tsd type test checks: `X.test-d.ts` ↔ `X.d.ts` (or `.d.mts`/`.d.cts`) of the
 * same directory, generic stems included — tsd reads `index.test-d.ts` against the `index.d.ts` beside it, so the
 * directory pins what a bare `index` leaves ambiguous for `subjectOf`. Undefined for any other test or when the
 * declaration file did not change.
 */
export function typeTestSubject(testPath: string, sources: readonly string[]): string | undefined {
  const m = TYPE_TEST.exec(path.posix.basename(testPath));
  if (!m) return undefined;
  const dir = path.posix.dirname(testPath);
  const want = new Set(['.d.ts', '.d.mts', '.d.cts'].map((ext) => path.posix.join(dir, `${m[1]}${ext}`)));
  return [...sources].sort().find((s) => want.has(s));
}

/** A build or test tool's configuration module: `vite.config.ts`, `vitest.config.mjs`, `eslint.config.js`, `build.config.ts`. */
export function isToolingConfig(p: string): boolean {
  return /^[\w-]+\.config\.[cm]?[jt]s$/.test(path.posix.basename(p));
}

/**
 * Changed tooling configurations of one directory, as pairs: they change together when the toolchain
 * does (a bundler upgrade, a move from `.mjs` to `.ts`), and nothing references them.
 */
export function toolingConfigPairs(paths: string[]): Array<[string, string]> {
  const byDir = new Map<string, string[]>();
  for (const p of [...paths].sort()) if (isToolingConfig(p)) pushTo(byDir, path.posix.dirname(p), p);
  const out: Array<[string, string]> = [];
  for (const ps of byDir.values()) for (const p of ps.slice(1)) out.push([ps[0], p]);
  return out;
}
