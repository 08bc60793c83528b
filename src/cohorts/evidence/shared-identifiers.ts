import { BoundedArrayCache } from '../../codegraph/bounded-cache';
import { parseUnifiedDiff } from '../../git/unified-diff';
import { pushTo } from '../group';
import { scanString } from '../../codegraph/strip-comments';

/**
 * The `shared-identifiers` signal: two changed files whose changed lines name the same rare identifiers are
 * one piece of work even without a resolved edge between their changed definitions — a new option threaded
 * through a source and the test that sets it (`knownLength`, `FormData`), a type and the code that builds it
 * (`StreamOptions`, `isStream`), a renamed helper at its definition and its users. An identifier counts when
 * - it is no reserved word, and it is rare in the head commit: it occurs (anywhere in the text) in at most MAX_FILE_SHARE of the indexed
 *   code files, so `options`, `response` or `expect` never join anything;
 * - it is on a changed line (added or removed, not a comment line, not inside a string literal) of exactly these two changed files: an
 *   identifier that three changed files touch says nothing about which two belong together;
 * and a pair needs at least MIN_SHARED of them. Measured on eight repositories (docs/cohorts.md).
 */
export const MIN_SHARED = 3;
export const MAX_FILE_SHARE = 0.05;
const MIN_LENGTH = 3;

const COMMENT = /^(?:\/\/|\/\*|\*|#(?!include|define|if|else|endif)|--|<!--)/;
const IDENTIFIER = /[A-Za-z_$][\w$]*/g;
/**
 * The string literals of `text` — '…', "…" or `…`, a backslash escaping the next character (not a line
 * break) — as [start, end) ranges: what the regex /(["'`])(?:\\.|(?!\1)[^\\])*\1/g matches, found in
 * one pass. That regex, retried from every quote of a line that never closes (`"\"\"\"…`), was
 * quadratic: an 80,000-character changed line took 5.4 s per signal, 1 MiB about 15 minutes. Here a
 * quote whose literal cannot close also rules out the same quote up to where its scan stopped (those
 * quotes are escaped ones, whose scans would stop there too), so each character is scanned at most
 * once per kind of quote, plus once inside a literal found.
 */
export function stringLiteralRanges(text: string): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  const failsBefore: Record<string, number> = { '"': -1, "'": -1, '`': -1 };
  let i = 0;
  while (i < text.length) {
    const q = text[i];
    if ((q === '"' || q === "'" || q === '`') && i >= failsBefore[q]) {
      const { closed, end } = scanString(text, i, true);
      if (closed) {
        out.push([i, end + 1]);
        i = end + 1;
        continue;
      }
      failsBefore[q] = end;
    }
    i++;
  }
  return out;
}

/** `text` with each string literal (stringLiteralRanges) replaced by `""`: names inside strings are not code. */
export function blankStrings(text: string): string {
  const ranges = stringLiteralRanges(text);
  if (ranges.length === 0) return text;
  let out = '';
  let at = 0;
  for (const [start, end] of ranges) {
    out += `${text.slice(at, start)}""`;
    at = end;
  }
  return out + text.slice(at);
}
/** Reserved words of the grammars' main languages: no identifiers, however rare in a repository. */
export const KEYWORDS: ReadonlySet<string> = new Set(
  (
    'abstract any as assert async await boolean break case catch class const constructor continue debugger declare def default del delete do elif else enum except export extends false finally for from func function get global go goto if implements import in instanceof interface is keyof lambda let module namespace new nil none nonlocal not null number object of or package pass private protected public raise readonly require return satisfies select self set static string struct super switch this throw true try type typeof undefined var void while with yield True False None chan defer fallthrough range map'
  ).split(' '),
);

/**
 * Per (head) path of a unified diff among `paths`, what `collect` takes from each changed line's text (the
 * line without its `+`/`-`, trimmed; blank and comment lines left out; with `addedOnly`, added lines only). One
 * walk over the patch serves the identifiers, the string literals and the test titles alike.
 */
export function collectFromChangedLines(patch: string, paths: ReadonlySet<string>, collect: (text: string, into: Set<string>) => void, addedOnly = false): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const f of parseUnifiedDiff(patch)) {
    if (!paths.has(f.path)) continue;
    const into = out.get(f.path) ?? new Set<string>();
    for (const h of f.hunks) {
      for (const line of h.text.split('\n').slice(1)) {
        if (line[0] !== '+' && (addedOnly || line[0] !== '-')) continue;
        const text = line.slice(1).trim();
        if (!text || COMMENT.test(text)) continue;
        collect(text, into);
      }
    }
    out.set(f.path, into);
  }
  return out;
}

/** Per (head) path of a unified diff, the identifiers on its changed lines (comment lines left out); only `paths`. */
export function changedIdentifiersOf(patch: string, paths: ReadonlySet<string>): Map<string, Set<string>> {
  return collectFromChangedLines(patch, paths, (text, ids) => {
    // Words inside string literals (`'charset=utf-8'`, messages) are no identifiers: blanked first.
    for (const m of blankStrings(text).matchAll(IDENTIFIER)) if (m[0].length >= MIN_LENGTH && !KEYWORDS.has(m[0])) ids.add(m[0]);
  });
}

/**
 * Per (head) path of a unified diff, the identifiers its changed lines declare as a key: a property signature or an
 * object/struct literal key (`enforceRetryRules?: boolean`, `maxRedirects: 10`, Go `OrigHelp: help`); only `paths`.
 * `new-identifier` takes a name a changed source declares so as one the change introduces.
 */
export function changedKeysOf(patch: string, paths: ReadonlySet<string>): Map<string, Set<string>> {
  return collectFromChangedLines(patch, paths, (text, keys) => {
    for (const m of blankStrings(text).matchAll(/(?:^|[\s{,(])([A-Za-z_$][\w$]*)\??\s*:(?!:)/g)) if (m[1].length >= MIN_LENGTH && !KEYWORDS.has(m[1])) keys.add(m[1]);
  });
}

/** Identifier document frequency of a commit's indexed files: in how many files each identifier occurs. */
export interface IdentifierFrequency {
  counts: Map<string, number>;
  files: number;
}

/**
 * Identifiers of one blob's text (MIN_LENGTH characters or more), kept per blob: most blobs recur between
 * commits. Bounded by the identifiers kept in all (least recently used blob out first), not by blobs: a
 * generated file can hold tens of thousands.
 */
export const MAX_CACHED_IDENTIFIERS = 1_000_000;
const blobIdentifiers = new BoundedArrayCache<string>(MAX_CACHED_IDENTIFIERS);
let cacheHits = 0;
/** Blobs answered from the cache so far in this process (tests check the cache's scope with it). */
export function identifierCacheHits(): number {
  return cacheHits;
}

/**
 * In how many of the commit's indexed files each identifier occurs (anywhere in the text: code, strings,
 * comments), read from the blobs; `onFile` is given each file's identifiers (`test-affinity` derives its word
 * frequency from them). A blob's identifiers are cached in the process (least recently used out),
 * keyed by `scope` (the workspace) as well as the blob: a process-wide reuse would make one tenant's
 * computation faster when another tenant had just read the same blob — a timing oracle for whether a given
 * file exists in someone else's repository.
 */
export async function identifierFrequency(files: Iterable<{ blob: string }>, readBlob: (sha: string) => Promise<Buffer | null | undefined>, scope: string, onFile?: (blob: string, identifiers: readonly string[]) => void): Promise<IdentifierFrequency> {
  const counts = new Map<string, number>();
  const list = [...files];
  const CHUNK = 64;
  for (let i = 0; i < list.length; i += CHUNK) {
    const chunk = list.slice(i, i + CHUNK);
    const ids = await Promise.all(
      chunk.map(async ({ blob }) => {
        const key = `${scope}\0${blob}`;
        const known = blobIdentifiers.get(key);
        if (known) {
          cacheHits++;
          return known;
        }
        const text = (await readBlob(blob))?.toString('utf8') ?? '';
        const set = new Set<string>();
        for (const m of text.matchAll(IDENTIFIER)) if (m[0].length >= MIN_LENGTH) set.add(m[0]);
        const out = [...set];
        blobIdentifiers.set(key, out);
        return out;
      }),
    );
    ids.forEach((names, k) => {
      for (const n of names) counts.set(n, (counts.get(n) ?? 0) + 1);
      onFile?.(chunk[k].blob, names);
    });
  }
  return { counts, files: list.length };
}

/**
 * Pairs of changed files sharing at least MIN_SHARED rare identifiers on their changed lines that no third
 * changed file's changed lines name, each pair with those identifiers (sorted); pairs sorted.
 */
export function sharedIdentifierPairs(ids: Map<string, Set<string>>, frequency: IdentifierFrequency): Array<{ a: string; b: string; names: string[] }> {
  const { counts } = frequency;
  const limit = MAX_FILE_SHARE * frequency.files;
  const filesOf = new Map<string, string[]>();
  for (const [p, names] of [...ids.entries()].sort((x, y) => x[0].localeCompare(y[0]))) {
    for (const n of names) {
      const c = counts.get(n);
      if (!c || c > limit) continue;
      pushTo(filesOf, n, p);
    }
  }
  const byPair = new Map<string, string[]>();
  for (const [n, ps] of filesOf) if (ps.length === 2) pushTo(byPair, `${ps[0]}\0${ps[1]}`, n);
  return [...byPair.entries()]
    .filter(([, names]) => names.length >= MIN_SHARED)
    .map(([k, names]) => {
      const [a, b] = k.split('\0');
      return { a, b, names: names.sort() };
    })
    .sort((x, y) => x.a.localeCompare(y.a) || x.b.localeCompare(y.b));
}

/**
 * The `test-names` signal's evidence: a changed test that no reference, name pairing or other signal joined to a
 * source names on its changed lines what one changed source's changed lines name — an option or property the fix
 * threads through (`reusedSocket`, `timings.phases.dns`), the error message or event name the test asserts
 * (`'No URL protocol specified'`). A test of a feature-named suite (`test/timeout.ts`) that reaches the code only
 * through the package's entry point (`got(url, {retry: {limit: 0}})`) has no resolved edge to the changed
 * internals: this is the evidence left. Looser than `shared-identifiers` in rarity (TEST_MAX_FILE_SHARE) because
 * it only ever chooses one source for one test, and only when the choice is clear:
 * - a name counts when it is rare (identifiers: in at most TEST_MAX_FILE_SHARE of the head commit's indexed files)
 *   or a whole one-line string literal of MIN_LITERAL characters or more, and no other changed file's changed
 *   lines name it;
 * - the test joins the source with the most such names, at least TEST_MIN_SHARED; a tie between two sources
 *   of different cohorts joins nothing.
 * Measured on thirteen repositories (docs/cohorts.md).
 */
export const TEST_MAX_FILE_SHARE = 0.15;
export const TEST_MIN_SHARED = 3;
export const MIN_LITERAL = 8;

/** Per (head) path of a unified diff, the one-line string literals (quotes stripped, no `${…}`) on its changed lines; only `paths`. */
export function changedLiteralsOf(patch: string, paths: ReadonlySet<string>): Map<string, Set<string>> {
  return collectFromChangedLines(patch, paths, (text, lits) => {
    for (const [start, end] of stringLiteralRanges(text)) {
      const inner = text.slice(start + 1, end - 1);
      if (inner.length >= MIN_LITERAL && !inner.includes('${') && !inner.includes('\\')) lits.add(inner);
    }
  });
}

/** What `test-names` needs of one changed file: the identifiers and string literals on its changed lines. */
export interface ChangedNames {
  identifiers: Set<string>;
  literals: Set<string>;
}

/**
 * For each changed test, the changed sources it shares names with (see TEST_MAX_FILE_SHARE), most names first (ties
 * by path), each with those names (identifiers, then literals quoted, each sorted). A name counts for a pair only when
 * exactly those two changed files name it on their changed lines; one pass over a name → files index, so a wide
 * change costs its names, not tests × sources × files.
 */
export function testNameCandidates(tests: readonly string[], sources: ReadonlySet<string>, names: ReadonlyMap<string, ChangedNames>, frequency: IdentifierFrequency): Map<string, Array<{ source: string; names: string[] }>> {
  const limit = TEST_MAX_FILE_SHARE * frequency.files;
  const rare = (n: string) => {
    const c = frequency.counts.get(n);
    return !!c && c <= limit;
  };
  const index = (pick: (x: ChangedNames) => Set<string>, keep: (n: string) => boolean) => {
    const filesOf = new Map<string, string[]>();
    for (const [p, x] of names) for (const n of pick(x)) if (keep(n)) filesOf.set(n, [...(filesOf.get(n) ?? []).slice(0, 2), p]);
    return filesOf;
  };
  const ids = index((x) => x.identifiers, rare);
  const lits = index((x) => x.literals, () => true);
  const testSet = new Set(tests);
  const shared = new Map<string, Map<string, { ids: string[]; lits: string[] }>>();
  const add = (filesOf: Map<string, string[]>, kind: 'ids' | 'lits') => {
    for (const [n, ps] of filesOf) {
      if (ps.length !== 2) continue;
      for (const [t, s] of [[ps[0], ps[1]], [ps[1], ps[0]]]) {
        if (!testSet.has(t) || !sources.has(s)) continue;
        const bySource = shared.get(t) ?? new Map<string, { ids: string[]; lits: string[] }>();
        const entry = bySource.get(s) ?? { ids: [], lits: [] };
        entry[kind].push(n);
        bySource.set(s, entry);
        shared.set(t, bySource);
      }
    }
  };
  add(ids, 'ids');
  add(lits, 'lits');
  const out = new Map<string, Array<{ source: string; names: string[] }>>();
  for (const [t, bySource] of shared) {
    const list = [...bySource].map(([source, e]) => ({ source, names: [...e.ids.sort(), ...e.lits.sort().map((l) => `'${l}'`)] }));
    out.set(t, list.sort((a, b) => b.names.length - a.names.length || a.source.localeCompare(b.source)));
  }
  return out;
}

/**
 * The source one test joins: the first candidate (testNameCandidates) when it has TEST_MIN_SHARED names and no
 * candidate of another cohort (`cohortOf`) has as many.
 */
export function testNamesSubject(candidates: ReadonlyArray<{ source: string; names: string[] }> | undefined, cohortOf: (p: string) => string): { source: string; names: string[] } | undefined {
  const [best, ...rest] = candidates ?? [];
  if (!best || best.names.length < TEST_MIN_SHARED) return undefined;
  if (rest.some((c) => c.names.length === best.names.length && cohortOf(c.source) !== cohortOf(best.source))) return undefined;
  return best;
}

/**
 * The `new-identifier` signal: identifiers on the changed lines of two or more changed files that no indexed file
 * of the base commit holds (anywhere in its text) and that the head commit's do — names the change introduces. A
 * new struct field set in composite literals (`OrigHelp:` in Go), a new method called on an inferred receiver: what
 * syntax cannot resolve, the name itself ties together. At least NEW_MIN_LENGTH characters, no reserved word. Each
 * name with its files (sorted), names sorted.
 */
export const NEW_MIN_LENGTH = 4;
export function newIdentifierGroups(ids: ReadonlyMap<string, ReadonlySet<string>>, base: IdentifierFrequency, head: IdentifierFrequency): Array<{ name: string; files: string[] }> {
  const filesOf = new Map<string, string[]>();
  for (const [p, names] of [...ids.entries()].sort((x, y) => x[0].localeCompare(y[0]))) {
    for (const n of names) {
      if (n.length < NEW_MIN_LENGTH || base.counts.has(n) || !head.counts.has(n)) continue;
      pushTo(filesOf, n, p);
    }
  }
  return [...filesOf.entries()].filter(([, ps]) => ps.length >= 2).map(([name, files]) => ({ name, files })).sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * `edit-rare-id`: whether two files' changed lines name a common rare identifier (at least three characters, in at
 * most MAX_FILE_SHARE of the commit's indexed files, or in two). Without identifiers or frequencies: true (no say).
 */
export function sharesRareIdentifier(a: string, b: string, ids: Map<string, Set<string>> | undefined, frequency: IdentifierFrequency | undefined): boolean {
  if (!ids || !frequency) return true;
  const x = ids.get(a);
  const y = ids.get(b);
  if (!x || !y) return false;
  const [small, large] = x.size <= y.size ? [x, y] : [y, x];
  for (const name of small) if (large.has(name) && name.length >= 3 && (frequency.counts.get(name) ?? 0) <= Math.max(2, MAX_FILE_SHARE * frequency.files)) return true;
  return false;
}
