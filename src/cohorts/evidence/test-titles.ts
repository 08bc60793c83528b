import { collectFromChangedLines, IdentifierFrequency, TEST_MAX_FILE_SHARE } from './shared-identifiers';
import { pushTo } from '../group';

/**
 * The `test-titles` signal: a changed test that no other signal joined to a source joins the one changed source
 * whose changed lines name what the titles of the test cases it adds name. A regression test is titled for the
 * behaviour its fix touches — `test('reusedSocket getter', …)` beside `return this._request?.reusedSocket`,
 * `'beforeError hook is called for ERR_UNSUPPORTED_PROTOCOL'` beside `this._beforeError(error)` — while the test's
 * code reaches the library only through its entry point (`got.stream(…)`), so no reference, and seldom three shared
 * names (`test-names`), ties it to the fix. A title word counts when
 * - it is an identifier of TITLE_MIN_LENGTH characters or more in the title of a test case on an added line
 *   (`test('…')`, `it('…')`, `describe('…')` and their modifiers; the name of a Python `def test_…` or Go
 *   `func Test…`, whole and in its `_`/camelCase parts), compared without a leading `_` or `$`, case kept
 *   (`Returns` in a type is no `returns` in a title);
 * - the source's changed lines name it (an identifier, not a comment or a string's words) and it is rare: in at most
 *   TEST_MAX_FILE_SHARE of the head commit's indexed files, as for `test-names`;
 * - no other changed file's changed lines name it;
 * and the test joins the source with the most such words, at least one; a tie between two cohorts joins nothing.
 * A declaration file (`index.d.ts`) is no target: a title says what the code does, and typings only describe it
 * (commander's `CommanderError` test against `typings/index.d.ts` of another commit). Measured on thirteen
 * repositories (docs/cohorts.md, session 32).
 */
export const TITLE_MIN_LENGTH = 4;

/**
 * The first string argument of a JS/TS test case (`test(`, `it.only(`, `describe.each(…)(`, `test.skip(`) on one line.
 * A backslash is matched only as the start of an escape (`(?!\1|\\).` excludes it): with `.` free to take it too,
 * each backslash could be read two ways, and a PR line of ~60 backslashes with no closing quote backtracked
 * exponentially (38 took 1 s) — PR text is a tenant's input.
 */
const JS_TITLE = /^(?:test|it|describe)(?:\.\w+)*\(\s*(["'`])((?:\\.|(?!\1|\\).)*)\1/;
/** Python and Go test functions: the name says what is tested (`test_get_os_args`, `TestRouterMount`). */
const PY_TEST = /^(?:async\s+)?def\s+test_(\w+)/;
const GO_TEST = /^func\s+Test_?(\w+)\s*\(/;
const IDENTIFIER = /[A-Za-z_$][\w$]*/g;
const DECLARATION_FILE = /\.d\.[cm]?ts$/;

/** Without a leading `_`/`$`: `_beforeError` (the private method a fix changes) is what a title calls `beforeError`. */
const titleKey = (name: string): string => name.replace(/^[_$]+/, '');

/** The words one test case's title names (see the signal's rule above); a line that opens no test case names none. */
export function titleWordsOf(line: string): string[] {
  const js = JS_TITLE.exec(line);
  if (js) return [...js[2].matchAll(IDENTIFIER)].map((m) => m[0]);
  const fn = PY_TEST.exec(line) ?? GO_TEST.exec(line);
  if (!fn) return [];
  const name = fn[1];
  return [name, ...name.split(/_|(?<=[a-z])(?=[A-Z])/)];
}

/** Per (head) path of a unified diff, the title words of the test cases its added lines open (keys, see titleKey); only `paths`. */
export function changedTitleWordsOf(patch: string, paths: ReadonlySet<string>): Map<string, Set<string>> {
  return collectFromChangedLines(
    patch,
    paths,
    (text, words) => {
      for (const w of titleWordsOf(text)) if (w.length >= TITLE_MIN_LENGTH) words.add(titleKey(w));
    },
    true,
  );
}

/**
 * For each of `tests`, the changed sources (declaration files aside) whose changed identifiers name its title words,
 * most words first (ties by path), each with those words (sorted). A word counts for a source only when it is rare
 * (`frequency`, TEST_MAX_FILE_SHARE) and no changed file but the two names it on its changed lines.
 */
export function testTitleCandidates(tests: readonly string[], sources: ReadonlySet<string>, titleWords: ReadonlyMap<string, ReadonlySet<string>>, changedIdentifiers: ReadonlyMap<string, ReadonlySet<string>>, frequency: IdentifierFrequency): Map<string, Array<{ source: string; words: string[] }>> {
  const limit = TEST_MAX_FILE_SHARE * frequency.files;
  // word key → changed files naming it on their changed lines (with whether the name is rare there), at most three kept.
  const namedBy = new Map<string, Array<{ path: string; rare: boolean }>>();
  for (const [p, ids] of changedIdentifiers) {
    const keys = new Map<string, boolean>();
    for (const n of ids) {
      const c = frequency.counts.get(n);
      const k = titleKey(n);
      keys.set(k, (keys.get(k) ?? false) || (!!c && c <= limit));
    }
    for (const [k, rare] of keys) {
      const list = namedBy.get(k) ?? [];
      if (list.length < 3) list.push({ path: p, rare });
      namedBy.set(k, list);
    }
  }
  const out = new Map<string, Array<{ source: string; words: string[] }>>();
  for (const t of tests) {
    const bySource = new Map<string, string[]>();
    for (const w of titleWords.get(t) ?? []) {
      const others = (namedBy.get(w) ?? []).filter((x) => x.path !== t);
      if (others.length !== 1) continue; // named by no source, or by a third changed file too
      const [{ path: s, rare }] = others;
      if (!rare || !sources.has(s) || DECLARATION_FILE.test(s)) continue;
      pushTo(bySource, s, w);
    }
    if (!bySource.size) continue;
    const list = [...bySource].map(([source, words]) => ({ source, words: words.sort() }));
    out.set(t, list.sort((a, b) => b.words.length - a.words.length || a.source.localeCompare(b.source)));
  }
  return out;
}

/** The source one test joins: the first candidate, unless a candidate of another cohort (`cohortOf`) has as many words. */
export function testTitlesSubject(candidates: ReadonlyArray<{ source: string; words: string[] }> | undefined, cohortOf: (p: string) => string): { source: string; words: string[] } | undefined {
  const [best, ...rest] = candidates ?? [];
  if (!best) return undefined;
  if (rest.some((c) => c.words.length === best.words.length && cohortOf(c.source) !== cohortOf(best.source))) return undefined;
  return best;
}
