import * as path from 'node:path';
import { parseUnifiedDiff } from '../../git/unified-diff';

/**
 * The `fixture-name` signal: a changed test whose string literals name another changed file — by its basename
 * (`execa('verbose-script.js')`, the fixture script a test runs as a child process) or by a relative path ending in it
 * (`'./fixtures/x.js'`, `'fixtures/x.js'`) — is one piece of work with it. No import edge exists: the test runs the
 * fixture by name, so the code graph never sees the two together. Which names count (`fixtureNamings`): those on the
 * test's added lines, on its removed lines (in the base), and on the rest of its text only a fixture that is the one
 * changed file the test names so. A source names nothing (a build config's entry list is no piece of work).
 *
 * A literal names the indexed file whose path ends with it (segment by segment, after leading `./` and `../`); when
 * several do (`index.js` in every directory), the one nearest the naming file's directory, and a tie names nothing.
 * Import specifiers (`from './b.js'`, `require('./b')`, `import('./b')`) are no names: the graph already follows them,
 * with the changed-line rule this signal must not bypass.
 *
 * Bounds (PR text is a tenant's input): the scanner is one pass over the text (an unclosed quote ends at its line's
 * end, or for a backtick at the text's end, and the scan resumes after it, never re-reading); literals longer than
 * MAX_NAME_LENGTH characters or past MAX_LITERALS_PER_FILE distinct ones in a file are ignored; one file names at most
 * MAX_NAMED_PER_FILE changed files; a name more than MAX_SAME_NAME indexed files share names nothing. Reads only the
 * changed tests' head blobs. Measured in docs/cohorts.md (session 34).
 */
export const MAX_NAME_LENGTH = 200;
export const MAX_LITERALS_PER_FILE = 10_000;
export const MAX_SAME_NAME = 64;
/** Changed files one file's literals may name (a cohort holds at most 12 files: more could not join anyway). */
export const MAX_NAMED_PER_FILE = 16;
/** A bare name shorter than this (`'a.js'`) is too likely a coincidence. */
export const MIN_NAME_LENGTH = 4;

/** Before a quote: an import specifier follows (`from '…'`, `import '…'`, `require('…'`, `import('…'`, `export * from`). */
const SPECIFIER_BEFORE = /(?:\bfrom|\bimport|\brequire\s*\(|\bimport\s*\()\s*$/;
/** How far back the specifier check looks: bounded, so the scan stays linear. */
const LOOKBACK = 24;

/**
 * The string literals of `text` (quotes stripped) that could name a file: one line, no escapes, no `${…}`, at most
 * MAX_NAME_LENGTH characters, import specifiers left out. `//` line comments are skipped, and `#` ones with
 * `hashComments` (Python, shell). Linear in `text`.
 */
export function nameLiteralsOf(text: string, hashComments = false): Set<string> {
  const out = new Set<string>();
  const n = text.length;
  let i = 0;
  while (i < n && out.size < MAX_LITERALS_PER_FILE) {
    const c = text.charCodeAt(i);
    // `//` (not in a string: strings are consumed whole below) and `#` comments run to the end of the line.
    if ((c === 47 /* / */ && text.charCodeAt(i + 1) === 47) || (hashComments && c === 35 /* # */)) {
      const nl = text.indexOf('\n', i);
      i = nl < 0 ? n : nl + 1;
      continue;
    }
    if (c !== 39 /* ' */ && c !== 34 /* " */ && c !== 96 /* ` */) {
      i++;
      continue;
    }
    const start = i + 1;
    let j = start;
    let plain = true;
    for (; j < n; j++) {
      const d = text.charCodeAt(j);
      if (d === c) break;
      if (d === 92 /* \ */) {
        plain = false;
        j++;
        continue;
      }
      if (d === 10 /* \n */) {
        plain = false;
        if (c !== 96) break; // a quote left open ends with its line
      }
      if (d === 36 /* $ */ && c === 96 && text.charCodeAt(j + 1) === 123 /* { */) plain = false;
    }
    const closed = j < n && text.charCodeAt(j) === c;
    if (closed && plain && j > start && j - start <= MAX_NAME_LENGTH && !SPECIFIER_BEFORE.test(text.slice(Math.max(0, i - LOOKBACK), i))) out.add(text.slice(start, j));
    i = j + 1;
  }
  return out;
}

/** Per path of a unified diff among `paths` (head path; base path for a deletion), the name literals of its removed lines. */
export function removedNameLiteralsOf(patch: string, paths: ReadonlySet<string>): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const f of parseUnifiedDiff(patch)) {
    if (!paths.has(f.path)) continue;
    const into = out.get(f.path) ?? new Set<string>();
    for (const h of f.hunks) for (const line of h.text.split('\n').slice(1)) if (line[0] === '-') for (const l of nameLiteralsOf(line.slice(1))) into.add(l);
    if (into.size) out.set(f.path, into);
  }
  return out;
}

/** The literal as a relative path: leading `./` and `../` dropped; undefined when it cannot name a file. */
function asRelativePath(literal: string): string | undefined {
  let p = literal.trim();
  while (p.startsWith('./') || p.startsWith('../')) p = p.slice(p.indexOf('/') + 1);
  if (!p || p.endsWith('/') || p.startsWith('/') || /[\t\n\r*?<>|:]/.test(p)) return undefined;
  if (p.split('/').some((s) => s === '' || s === '.' || s === '..')) return undefined;
  return p;
}

/** Directories between two paths' directories (up to the common ancestor and down again). */
function distance(a: string, b: string): number {
  const x = path.posix.dirname(a).split('/');
  const y = path.posix.dirname(b).split('/');
  let k = 0;
  while (k < x.length && k < y.length && x[k] === y[k]) k++;
  return x.length - k + (y.length - k);
}

export interface FileNaming {
  /** The file whose text holds the name. */
  from: string;
  /** The changed file it names. */
  to: string;
  /** The literal, as written. */
  literal: string;
}

/**
 * For each file of `literalsByFile`, the other changed files (`changed`) its literals name among a commit's indexed
 * files (`indexed`). A bare name without its extension (`'verbose-script'`) names nothing: measured on execa it
 * joined a test to `test.js` by the word `'test'`, 25 cases down (docs/cohorts.md). Sorted by (from, to); one naming
 * per pair, its first literal in sorted order.
 */
export function fileNamings(literalsByFile: ReadonlyMap<string, Iterable<string>>, changed: ReadonlySet<string>, indexed: Iterable<string>): FileNaming[] {
  // basename → indexed paths, at most MAX_SAME_NAME + 1 kept.
  const byName = new Map<string, string[]>();
  const note = (key: string, p: string) => {
    const list = byName.get(key);
    if (!list) byName.set(key, [p]);
    else if (list.length <= MAX_SAME_NAME) list.push(p);
  };
  const all = new Set<string>(indexed);
  for (const p of changed) all.add(p);
  for (const p of all) note(path.posix.basename(p), p);
  const out = new Map<string, FileNaming>();
  for (const [from, literals] of literalsByFile) {
    let named = 0;
    for (const literal of [...literals].sort()) {
      if (named >= MAX_NAMED_PER_FILE) break;
      const rel = asRelativePath(literal);
      if (!rel) continue;
      const base = rel.slice(rel.lastIndexOf('/') + 1);
      if (base.length < MIN_NAME_LENGTH) continue;
      const list = byName.get(base);
      if (!list || list.length > MAX_SAME_NAME) continue;
      const matches = list.filter((p) => p === rel || p.endsWith(`/${rel}`));
      if (!matches.length) continue;
      let best = matches[0];
      if (matches.length > 1) {
        const scored = matches.map((p) => ({ p, d: distance(from, p) })).sort((a, b) => a.d - b.d);
        if (scored[0].d === scored[1].d) continue; // two files by that name, as near: names neither
        best = scored[0].p;
      }
      if (best === from || !changed.has(best)) continue;
      const key = `${from}\0${best}`;
      if (!out.has(key)) {
        out.set(key, { from, to: best, literal });
        named++;
      }
    }
  }
  const order = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);
  return [...out.values()].sort((a, b) => order(a.from, b.from) || order(a.to, b.to));
}

/** What `fixture-name` reads of one changed file: the name literals of its added lines, of the rest of its head text (tests only), and of its removed lines. */
export interface NameLiterals {
  added: ReadonlySet<string>;
  unchanged: ReadonlySet<string>;
  removed: ReadonlySet<string>;
}

/**
 * The namings that join (see the signal's rule above), in order: a name on an added line (resolved in the head's index),
 * on a removed line (in the base's: a fixture deleted with the test that ran it), then a test's name on a line it did not
 * change — only a fixture (a test-role file), and only when that is the one changed file the test names so (the name says which change the test is about; a
 * test that runs six changed fixtures on unchanged lines says nothing of which commit it belongs to, measured on execa).
 * Only a test names: a source's literal naming a file is an entry list (`input: ['src/server.ts']` in a build config),
 * a path it reads or serves, not one piece of work with that file (measured on unstorage: `build.config.ts` joined
 * `src/server.ts` of another commit, 3 cases down). `files`: the changed files formation joins (head path, base path
 * when it differs, status, role).
 */
export function fixtureNamings(literals: ReadonlyMap<string, NameLiterals>, files: ReadonlyArray<{ path: string; oldPath?: string; status: string; role: string }>, headIndexed: Iterable<string>, baseIndexed?: Iterable<string>): FileNaming[] {
  const live = new Set(files.filter((f) => f.status !== 'deleted').map((f) => f.path));
  const tests = new Set(files.filter((f) => f.role === 'test').map((f) => f.path));
  const pick = (which: keyof NameLiterals, from: ReadonlySet<string>) => new Map([...literals].filter(([p]) => from.has(p) && tests.has(p)).map(([p, l]) => [p, l[which]]));
  const out = fileNamings(pick('added', live), live, headIndexed);
  if (baseIndexed) {
    const headOf = new Map(files.filter((f) => f.status !== 'added' && f.status !== 'copied').map((f) => [f.oldPath ?? f.path, f.path]));
    for (const n of fileNamings(pick('removed', new Set(files.map((f) => f.path))), new Set(headOf.keys()), baseIndexed)) out.push({ ...n, to: headOf.get(n.to)! });
  }
  const seen = new Set(out.map((n) => `${n.from}\0${n.to}`));
  // On lines the test did not change, only a fixture (a test-role file) counts: a conftest building a directory tree of
  // files named `main.py` names no source (measured on uvicorn: it joined `uvicorn/main.py` of another commit).
  const rest = fileNamings(pick('unchanged', live), live, headIndexed).filter((n) => tests.has(n.to) && !seen.has(`${n.from}\0${n.to}`));
  const count = new Map<string, number>();
  for (const n of rest) count.set(n.from, (count.get(n.from) ?? 0) + 1);
  return [...out, ...rest.filter((n) => count.get(n.from) === 1)];
}
