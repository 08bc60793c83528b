import * as path from 'node:path';

/**
 * Name conventions that pair files without a resolved edge between them: a test and its subject, and
 * tooling configurations of one directory (generated or vendored mirrors: `mirrors.ts`). Formation uses them as
 * signals (src/codegraph/formation.ts); each is measured on `npm run eval:cohorts`.
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

/** The subject stem a test file names, or undefined when its name follows no convention. */
export function testedStem(testPath: string): string | undefined {
  const base = path.posix.basename(testPath);
  for (const re of TEST_STEMS) {
    const m = re.exec(base);
    if (m) return m[1].toLowerCase();
  }
  // tests/foo.ts beside src/foo.ts: the directory says it is a test, the name is the subject's.
  return stemOf(testPath).toLowerCase();
}

/** Segments two paths share from the start. */
function commonPrefix(a: string, b: string): number {
  const x = a.split('/');
  const y = b.split('/');
  let n = 0;
  while (n < x.length - 1 && n < y.length - 1 && x[n] === y[n]) n++;
  return n;
}

const GENERIC_STEMS = new Set(['index', 'mod', 'main', '__init__', 'lib', 'util', 'utils', 'types', 'helpers']);

/**
 * The changed source file a test is named for: same stem, nearest by shared directory prefix; undefined
 * when none or when two are equally near (an ambiguous name pairs nothing), or for generic stems.
 */
export function subjectOf(testPath: string, sources: string[]): string | undefined {
  const stem = testedStem(testPath);
  if (!stem || GENERIC_STEMS.has(stem)) return undefined;
  const same = sources.filter((s) => stemOf(s).toLowerCase() === stem);
  if (!same.length) return undefined;
  const scored = same.map((s) => ({ s, n: commonPrefix(testPath, s) })).sort((a, b) => b.n - a.n || a.s.localeCompare(b.s));
  if (scored.length > 1 && scored[0].n === scored[1].n) return undefined;
  return scored[0].s;
}

/** A tsd type test: `index.test-d.ts` (tsd's convention for the checks of `index.d.ts`). */
const TYPE_TEST = /^(.+)\.test-d\.[cm]?tsx?$/;

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
  for (const p of [...paths].sort()) if (isToolingConfig(p)) byDir.set(path.posix.dirname(p), [...(byDir.get(path.posix.dirname(p)) ?? []), p]);
  const out: Array<[string, string]> = [];
  for (const ps of byDir.values()) for (const p of ps.slice(1)) out.push([ps[0], p]);
  return out;
}
