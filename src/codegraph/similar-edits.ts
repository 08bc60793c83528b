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
