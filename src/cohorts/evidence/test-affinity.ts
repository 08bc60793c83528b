import { BoundedArrayCache } from '../../codegraph/bounded-cache';
import { collectFromChangedLines, IdentifierFrequency, KEYWORDS } from './shared-identifiers';

/**
 * The `test-affinity` signal: after every other signal, a cohort of changed sources that no test joined and a cohort of
 * changed tests that joined no source are one piece of work when the words of the tests' added lines are, clearly and
 * relatively, closest to the words of the sources' changed lines. A fix and its regression test in a feature-named
 * suite (got's `test/retry.ts`, reaching the code only through `got(…)`) share no reference and seldom three exact rare
 * names (`test-names`) or a title word (`test-titles`), but they share vocabulary: `calculateRetryDelay`'s `retry`,
 * `delay`, `attempt` in the source, `retry: {limit: 1, calculateDelay}` and `'retries on 413'` in the test.
 *
 * Words: every identifier of a changed line (code and the words inside its string literals; no comment line), split
 * into its camelCase / snake_case / digit parts, lower-cased, of AFFINITY_MIN_WORD characters or more, no reserved or
 * stop word, lightly stemmed (`retries` → `retry`, `destroyed` → `destroy`). A test's words come from its ADDED lines
 * (what the test case it adds says), a source's from its added and removed lines. Each word weighs its inverse document
 * frequency over the head commit's indexed files, ln((N + 1) / (df + 1)), and a word in more than AFFINITY_MAX_SHARE of
 * them weighs nothing; the affinity of two cohorts is the cosine of their (binary, idf-weighted) word sets.
 *
 * A source cohort S and a test cohort T join when
 * - the affinity is at least AFFINITY_MIN (an absolute floor),
 * - T is S's closest test cohort by a factor AFFINITY_MARGIN over the next one, and S is T's closest source cohort by the
 *   same factor over the next one (a relative decision, both ways), and
 * - there is something to choose between: at least two test cohorts or two source cohorts without a partner. One
 *   test-only change beside one source-only change is as often two commits as one (a test-only commit next to a
 *   source-only one; session 30's "priors are worse"), and a similarity with nothing to compare it to says little
 *   (h3's `charset=UTF-8` set in `src/response.ts` and asserted by `test/proxy.test.ts` one commit later).
 * Measured on thirteen repositories (docs/cohorts.md, session 33).
 */
export const AFFINITY_MIN = 0.25;
export const AFFINITY_MARGIN = 1.5;
export const AFFINITY_MAX_SHARE = 0.5;
export const AFFINITY_MIN_WORD = 3;
/** At most this many cohorts on each side are compared (bounded work on a wide change): beyond it the signal joins nothing. */
export const AFFINITY_MAX_COHORTS = 64;

const IDENTIFIER = /[A-Za-z_$][\w$]*/g;
/** camelCase, PascalCase, ACRONYMCase and digit parts: `calculateRetryDelay` → calculate, Retry, Delay; `HTTPServer` → HTTP, Server. */
const PART = /[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+/g;
/** English function words and words every test says: no evidence whatever their frequency in a repository. */
const STOP = new Set(['the', 'and', 'for', 'with', 'should', 'when', 'that', 'this', 'not', 'does', 'are', 'was', 'can', 'from', 'into', 'than', 'then', 'have', 'has', 'but', 'its', 'only', 'also', 'more', 'will', 'all', ...[...KEYWORDS].map((k) => k.toLowerCase())]);
const SUFFIXES: ReadonlyArray<readonly [string, string]> = [['ies', 'y'], ['sses', 'ss'], ['ing', ''], ['ed', ''], ['es', ''], ['s', '']];

/** Light stemming: the first suffix that leaves AFFINITY_MIN_WORD characters (no `…ss` word is cut: `class`, `process`). */
export function stem(word: string): string {
  if (word.endsWith('ss')) return word;
  for (const [suffix, replacement] of SUFFIXES) {
    if (word.endsWith(suffix) && word.length - suffix.length + replacement.length >= AFFINITY_MIN_WORD) return word.slice(0, word.length - suffix.length) + replacement;
  }
  return word;
}

/** The words of one identifier (see the signal's rule); none for a reserved word or one shorter than AFFINITY_MIN_WORD. */
export function wordsOfIdentifier(identifier: string): string[] {
  if (identifier.length < AFFINITY_MIN_WORD || KEYWORDS.has(identifier)) return [];
  const out: string[] = [];
  for (const m of identifier.matchAll(PART)) {
    const part = m[0].toLowerCase();
    if (part.length >= AFFINITY_MIN_WORD && !STOP.has(part)) out.push(stem(part));
  }
  return out;
}

/** The words of one line's text: its identifiers', string literals' words included. */
export function affinityWordsOf(text: string): string[] {
  return [...text.matchAll(IDENTIFIER)].flatMap((m) => wordsOfIdentifier(m[0]));
}

/** Per (head) path of a unified diff among `paths`, the words of its added lines and of all its changed lines. */
export function changedAffinityWordsOf(patch: string, paths: ReadonlySet<string>): Map<string, { added: Set<string>; changed: Set<string> }> {
  const collect = (text: string, into: Set<string>) => {
    for (const w of affinityWordsOf(text)) into.add(w);
  };
  const added = collectFromChangedLines(patch, paths, collect, true);
  const changed = collectFromChangedLines(patch, paths, collect);
  return new Map([...changed].map(([p, words]) => [p, { added: added.get(p) ?? new Set<string>(), changed: words }]));
}

/**
 * A blob's words (the parts of its identifiers), kept per workspace `scope` and blob as `shared-identifiers` keeps its
 * identifiers (no process-wide reuse between tenants: a timing oracle), bounded by the words kept in all, least
 * recently used blob out first.
 */
export const MAX_CACHED_WORDS = 1_000_000;
const blobWords = new BoundedArrayCache<string>(MAX_CACHED_WORDS);

/**
 * Word document frequency of a commit's indexed files, from each file's identifiers (`identifierFrequency`'s `onFile`):
 * in how many files some identifier has the word among its parts.
 */
export function wordFrequency(filesIdentifiers: Iterable<{ blob: string; identifiers: readonly string[] }>, scope: string): IdentifierFrequency {
  const memo = new Map<string, string[]>();
  const counts = new Map<string, number>();
  let files = 0;
  for (const { blob, identifiers } of filesIdentifiers) {
    files++;
    const key = `${scope}\0${blob}`;
    let words = blobWords.get(key);
    if (!words) {
      const set = new Set<string>();
      for (const id of identifiers) {
        let ws = memo.get(id);
        if (!ws) memo.set(id, (ws = wordsOfIdentifier(id)));
        for (const w of ws) set.add(w);
      }
      words = [...set];
      blobWords.set(key, words);
    }
    for (const w of words) counts.set(w, (counts.get(w) ?? 0) + 1);
  }
  return { counts, files };
}

export interface AffinityCohort {
  /** A stable key of the cohort (its union-find root). */
  key: string;
  words: ReadonlySet<string>;
}

export interface AffinityJoin {
  source: string;
  test: string;
  score: number;
  /** The next test cohort's affinity to the source, and the next source cohort's to the test (0 when none). */
  nextTest: number;
  nextSource: number;
  /** The shared words, heaviest first. */
  words: string[];
}

/** The joins of source cohorts (no test) and test cohorts (no source) the rule above makes, highest affinity first. */
export function testAffinityJoins(sources: readonly AffinityCohort[], tests: readonly AffinityCohort[], frequency: IdentifierFrequency): AffinityJoin[] {
  if (!sources.length || !tests.length || sources.length + tests.length < 3) return [];
  if (sources.length > AFFINITY_MAX_COHORTS || tests.length > AFFINITY_MAX_COHORTS) return [];
  const limit = AFFINITY_MAX_SHARE * frequency.files;
  const weight = (w: string): number => {
    const df = frequency.counts.get(w) ?? 0;
    if (df > limit) return 0;
    return Math.max(0, Math.log((frequency.files + 1) / (df + 1)));
  };
  const vector = (c: AffinityCohort) => {
    const v = new Map<string, number>();
    for (const w of c.words) {
      const x = weight(w);
      if (x > 0) v.set(w, x);
    }
    const norm = Math.sqrt([...v.values()].reduce((s, x) => s + x * x, 0));
    return { v, norm };
  };
  const sv = sources.map(vector);
  const tv = tests.map(vector);
  const score = sources.map((_, i) =>
    tests.map((__, j) => {
      const [a, b] = sv[i].v.size <= tv[j].v.size ? [sv[i], tv[j]] : [tv[j], sv[i]];
      if (!a.norm || !b.norm) return 0;
      let dot = 0;
      for (const [w, x] of a.v) if (b.v.has(w)) dot += x * x;
      return dot / (a.norm * b.norm);
    }),
  );
  const proposals: AffinityJoin[] = [];
  sources.forEach((s, i) => {
    let best = -1;
    for (let j = 0; j < tests.length; j++) if (best < 0 || score[i][j] > score[i][best]) best = j;
    const top = score[i][best];
    if (top < AFFINITY_MIN) return;
    const nextTest = Math.max(0, ...score[i].filter((_, j) => j !== best));
    if (top < AFFINITY_MARGIN * nextTest) return;
    const column = sources.map((_, k) => score[k][best]);
    if (column.some((x, k) => k !== i && x > top)) return;
    const nextSource = Math.max(0, ...column.filter((_, k) => k !== i));
    if (top < AFFINITY_MARGIN * nextSource) return;
    const words = [...sv[i].v.keys()].filter((w) => tv[best].v.has(w)).sort((a, b) => sv[i].v.get(b)! - sv[i].v.get(a)! || a.localeCompare(b));
    proposals.push({ source: s.key, test: tests[best].key, score: top, nextTest, nextSource, words });
  });
  const taken = new Set<string>();
  return proposals
    .sort((a, b) => b.score - a.score || a.source.localeCompare(b.source))
    .filter((p) => !taken.has(p.test) && !!taken.add(p.test));
}
