import { parseUnifiedDiff } from '../git/unified-diff';

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

const normalize = (line: string) => line.trim().replace(/\s+/g, ' ').replace(/[;,]+$/, '');

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
    for (const h of f.hunks) {
      let oldLine = h.oldStart;
      let newLine = h.newStart;
      for (const line of h.text.split('\n').slice(1)) {
        const sign = line[0];
        if (sign === '+') newLine++;
        else if (sign === '-') oldLine++;
        else continue;
        const at = sign === '+' ? newLine - 1 : oldLine - 1;
        if ((sign === '+' ? side.headDoc : side.baseDoc)?.has(at)) continue;
        const key = editKey(sign, line.slice(1));
        if (key && (sign === '+' ? inHead : inBase).get(key.slice(1)) === 1) keys.add(key);
      }
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
export async function idiomEditKeys(editLines: Map<string, Set<string>>, changed: Set<string>, indexed: (path: string) => boolean, grep: (patterns: string[]) => Promise<Map<string, Set<string>>>): Promise<Set<string>> {
  const shared = [...sharedEditKeys(editLines)].sort((a, b) => a[0].localeCompare(b[0])).slice(0, IDIOM_MAX_KEYS);
  const out = new Set<string>();
  if (!shared.length) return out;
  const texts = [...new Set(shared.map(([k]) => k.slice(1)))];
  const found = await grep(texts);
  for (const [k, n] of shared) {
    const unchanged = [...(found.get(k.slice(1)) ?? [])].filter((p) => !changed.has(p) && indexed(p)).length;
    if (unchanged >= Math.max(IDIOM_MIN_FILES, n)) out.add(k);
  }
  return out;
}
