import { parseUnifiedDiff } from '../../git/unified-diff';

/**
 * The `similar-edit` signal (SmartCommit's "systematic edits"): the same line added, or the same line removed,
 * in two changed files is one edit applied in several places — an API renamed at every call site, an import
 * swapped in every test, one option added to each driver. A changed line counts once normalized (whitespace
 * collapsed, a trailing `;` or `,` dropped) and only when it says something:
 * - at least MIN_EDIT_CHARS characters with a word of three letters;
 * - code: no comment line and no docstring/comment line of the file (`doc-lines.ts`), since a comment such
 *   as `// TODO: optimize` or `.. versionadded:: 6.0` recurs across unrelated changes;
 * - a signature of the file: the line occurs exactly once in that side's text of the file. A line repeated
 *   through it is an idiom (`assert not result.exception`, `}).toThrowErrorMatchingSnapshot()`), which two
 *   unrelated commits easily both add.
 * Only modified or renamed files take part: two files added or deleted whole share their boilerplate.
 */
export const MIN_EDIT_CHARS = 16;

/** A comment line in the common syntaxes. */
const COMMENT = /^(?:\/\/|\/\*|\*|#(?!include|define|if|else|endif)|--|<!--)/;

/** Whitespace collapsed, trailing `;` and `,` dropped (by hand: `/[;,]+$/` retried a run of them from each of its characters, quadratic). */
function normalize(line: string): string {
  const text = line.trim().replace(/\s+/g, ' ');
  let end = text.length;
  while (end > 0 && (text[end - 1] === ';' || text[end - 1] === ',')) end--;
  return text.slice(0, end);
}

/** `+text` / `-text` of a changed line worth comparing across files, or undefined. */
export function editKey(sign: '+' | '-', line: string): string | undefined {
  const text = normalize(line);
  if (text.length < MIN_EDIT_CHARS || !/[A-Za-z_$]{3}/.test(text) || COMMENT.test(text)) return undefined;
  return `${sign}${text}`;
}

/** Both sides of a modified file: its texts, and its comment/docstring lines when known (1-based). */
export interface EditSides {
  headText: string;
  baseText: string;
  headDoc?: Set<number>;
  baseDoc?: Set<number>;
}

/**
 * The changed lines of a modified file's hunks, each with its sign and text (without the sign), the lines its
 * sides' comment/docstring lines (`headDoc`, `baseDoc`) hold left out: added lines at head, removed ones at base.
 */
export function* undocumentedChangedLines(hunks: ReadonlyArray<{ oldStart: number; newStart: number; text: string }>, side: EditSides): Generator<{ sign: '+' | '-'; text: string }> {
  for (const h of hunks) {
    let oldLine = h.oldStart;
    let newLine = h.newStart;
    for (const line of h.text.split('\n').slice(1)) {
      const sign = line[0];
      if (sign === '+') newLine++;
      else if (sign === '-') oldLine++;
      else continue;
      const at = sign === '+' ? newLine - 1 : oldLine - 1;
      if ((sign === '+' ? side.headDoc : side.baseDoc)?.has(at)) continue;
      yield { sign, text: line.slice(1) };
    }
  }
}

/** Per (head) path of a unified diff, the keys of its changed lines; only the paths `sides` has. */
export function editKeysOf(patch: string, sides: Map<string, EditSides>): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const f of parseUnifiedDiff(patch)) {
    const side = sides.get(f.path);
    if (!side) continue;
    const occurrences = (text: string) => {
      const n = new Map<string, number>();
      for (const l of text.split('\n')) {
        const k = normalize(l);
        n.set(k, (n.get(k) ?? 0) + 1);
      }
      return n;
    };
    const inHead = occurrences(side.headText);
    const inBase = occurrences(side.baseText);
    const keys = new Set<string>();
    for (const { sign, text } of undocumentedChangedLines(f.hunks, side)) {
      const key = editKey(sign, text);
      if (key && (sign === '+' ? inHead : inBase).get(key.slice(1)) === 1) keys.add(key);
    }
    if (keys.size) out.set(f.path, keys);
  }
  return out;
}

/**
 * The `same-substitution` signal: the same part of a line changed the same way in two changed files — an API
 * renamed at its call sites (`searchParameters` → `searchParams`), an import path moved, a JSDoc type widened in
 * each class (`{any}` → `{*}`) — where the lines around the change differ from file to file, so `similar-edit`
 * (whole identical lines) does not see it. In each run of removed lines followed by as many added lines, the n-th
 * removed line pairs with the n-th added one; the pair's tokens (identifiers, numbers, whole string literals,
 * single punctuation characters) are compared, the common prefix and suffix dropped, and what is left on each
 * side is the substitution. It counts when it says something:
 * - at most MAX_SUBSTITUTION_TOKENS tokens on each side (a rewritten line is no substitution);
 * - a token of three letters on either side (`0` → `1`, `;` → `,` say nothing);
 * - neither line longer than MAX_SUBSTITUTION_LINE.
 * Comment and docstring lines count, unlike for `similar-edit`: a whole comment line recurs across unrelated changes
 * (`// TODO: optimize`), but the same words replaced inside two different comments (a moved project's URL,
 * `pressly/lg` → `go-chi/httplog` in chi's docs and an example) is one edit; what recurs is caught by `edit-idiom`.
 * Keys are `~<removed tokens>→<added tokens>`; the text a key stands for (for `edit-idiom`'s search) is the added
 * span as written, or the removed span when nothing was added.
 */
export const MAX_SUBSTITUTION_TOKENS = 6;
/** Longer lines (minified or generated code) are not compared: bounded work per line of a hostile PR. */
export const MAX_SUBSTITUTION_LINE = 1000;

/**
 * One token: an identifier, a number, a whole quoted string (escapes read one way only, so no backtracking on a
 * hostile line), or any other single non-space character.
 */
const TOKEN = /[A-Za-z_$][\w$]*|\d+(?:\.\d+)?|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`(?:[^`\\]|\\.)*`|\S/g;

interface Token {
  text: string;
  start: number;
  end: number;
}
/** A number or string literal token. */
const LITERAL = /^(?:\d|["'`])/;
const tokensOf = (line: string): Token[] => [...line.matchAll(TOKEN)].map((m) => ({ text: m[0], start: m.index!, end: m.index! + m[0].length }));

/** The substitution turning `removed` into `added` (see above), or undefined when it says nothing. */
export function substitutionOf(removed: string, added: string): { key: string; text: string } | undefined {
  if (removed.length > MAX_SUBSTITUTION_LINE || added.length > MAX_SUBSTITUTION_LINE) return undefined;
  const r = tokensOf(removed);
  const a = tokensOf(added);
  let i = 0;
  while (i < r.length && i < a.length && r[i].text === a[i].text) i++;
  let j = 0;
  while (j < r.length - i && j < a.length - i && r[r.length - 1 - j].text === a[a.length - 1 - j].text) j++;
  const rm = r.slice(i, r.length - j);
  const ad = a.slice(i, a.length - j);
  if ((!rm.length && !ad.length) || rm.length > MAX_SUBSTITUTION_TOKENS || ad.length > MAX_SUBSTITUTION_TOKENS) return undefined;
  if (![...rm, ...ad].some((t) => /[A-Za-z]{3}/.test(t.text))) return undefined;
  const span = (line: string, ts: Token[]) => (ts.length ? line.slice(ts[0].start, ts[ts.length - 1].end) : '');
  // A literal the rewrite carries over (`process.exit(1)` → `process.exitCode = 1`, and `(2)` in the next file) is the
  // edit's argument, not the edit: it is keyed by its place, so one rewrite applied with different values is one key.
  const carried = new Map<string, string>();
  for (const t of rm) if (LITERAL.test(t.text) && ad.some((x) => x.text === t.text) && !carried.has(t.text)) carried.set(t.text, `#${carried.size + 1}`);
  const keyOf = (ts: Token[]) => ts.map((t) => carried.get(t.text) ?? t.text).join(' ');
  return { key: `~${keyOf(rm)}→${keyOf(ad)}`, text: span(added, ad) || span(removed, rm) };
}

/**
 * Per (head) path of a unified diff, the substitution keys of its changed line pairs (see `substitutionOf`), each
 * with the text it stands for; only the paths `paths` has (the modified or renamed files `similar-edit` compares).
 */
export function substitutionKeysOf(patch: string, paths: { has(path: string): boolean }): Map<string, Map<string, string>> {
  const out = new Map<string, Map<string, string>>();
  for (const f of parseUnifiedDiff(patch)) {
    if (!paths.has(f.path)) continue;
    const keys = new Map<string, string>();
    for (const h of f.hunks) {
      let removed: string[] = [];
      let added: string[] = [];
      const pairUp = () => {
        if (removed.length && removed.length === added.length) {
          for (let k = 0; k < removed.length; k++) {
            const s = substitutionOf(removed[k], added[k]);
            if (s && !keys.has(s.key)) keys.set(s.key, s.text);
          }
        }
        removed = [];
        added = [];
      };
      for (const line of h.text.split('\n').slice(1)) {
        const sign = line[0];
        if (sign === '-') {
          if (added.length) pairUp(); // a removal after additions starts the next run
          removed.push(line.slice(1));
        } else if (sign === '+') {
          added.push(line.slice(1));
        } else pairUp();
      }
      pairUp();
    }
    if (keys.size) out.set(f.path, keys);
  }
  return out;
}

/**
 * The `edit-idiom` modification of `similar-edit`: a shared changed line that is already established in the
 * code the change leaves alone is an idiom being spread, not one edit. When an author migrates one file per
 * commit (the same import, the same fixture line added to each test in turn), the files migrated earlier
 * still hold the line unchanged at head, and the files not migrated yet still hold a line the others remove;
 * one edit applied in several places in one commit (an API renamed at every call site) leaves few such
 * unchanged copies. A key shared by n ≥ 2 changed files is an idiom when at least max(IDIOM_MIN_FILES, n)
 * unchanged indexed files of the head commit contain its text.
 */
export const IDIOM_MIN_FILES = 2;
/** At most this many shared keys are looked up (one `git grep` with a pattern each). */
export const IDIOM_MAX_KEYS = 400;

/** Keys shared by at least two files of `editLines`, with how many files share each. */
export function sharedEditKeys(editLines: Map<string, Set<string>>): Map<string, number> {
  const n = new Map<string, number>();
  for (const keys of editLines.values()) for (const k of keys) n.set(k, (n.get(k) ?? 0) + 1);
  return new Map([...n].filter(([, c]) => c > 1));
}

/**
 * The shared keys that are idioms of the head commit. `grep(patterns)` returns, per pattern text found, the
 * head paths containing it (fixed-string search, `git grep -F -o`); only `indexed` paths not in `changed` count.
 */
export async function idiomEditKeys(
  editLines: Map<string, Set<string>>,
  changed: Set<string>,
  indexed: (path: string) => boolean,
  grep: (patterns: string[]) => Promise<Map<string, Set<string>>>,
  textOf: (key: string) => string = (k) => k.slice(1),
): Promise<Set<string>> {
  const shared = [...sharedEditKeys(editLines)].sort((a, b) => a[0].localeCompare(b[0])).slice(0, IDIOM_MAX_KEYS);
  const out = new Set<string>();
  if (!shared.length) return out;
  const texts = [...new Set(shared.map(([k]) => textOf(k)))];
  const found = await grep(texts);
  for (const [k, n] of shared) {
    const unchanged = [...(found.get(textOf(k)) ?? [])].filter((p) => !changed.has(p) && indexed(p)).length;
    if (unchanged >= Math.max(IDIOM_MIN_FILES, n)) out.add(k);
  }
  return out;
}
