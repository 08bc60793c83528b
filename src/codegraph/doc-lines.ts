import { Query } from 'web-tree-sitter';
import type { LoadedGrammar } from './languages/grammar-runtime';
import { parseWithin, QUERY_OPTIONS } from './extract';

/**
 * Lines of a source text that hold only comments, docstrings or nothing: a definition whose changed lines
 * are all of this kind changed its documentation, not its behaviour (formation's `code-change` signal).
 * Computed at compute time for the changed files only (the index and its cache are untouched).
 */

/** Comment node types across the grammars; each is kept only where the grammar has it. */
const CANDIDATES = ['(comment) @doc', '(line_comment) @doc', '(block_comment) @doc', '(multiline_comment) @doc', '(documentation_comment) @doc'];
/** Python docstrings: a string that is the first statement of a module, class or function body. */
const PYTHON_DOCSTRINGS = ['(module . (expression_statement (string) @doc))', '(block . (expression_statement (string) @doc))'];

const queries = new Map<string, Query | null>();

function docQueryOf(grammar: LoadedGrammar): Query | null {
  const id = grammar.spec.id;
  if (queries.has(id)) return queries.get(id)!;
  const valid: string[] = [];
  for (const pattern of [...CANDIDATES, ...(id === 'python' ? PYTHON_DOCSTRINGS : [])]) {
    try {
      new Query(grammar.language, pattern).delete();
      valid.push(pattern);
    } catch {
      // the grammar has no such node type
    }
  }
  const q = valid.length ? new Query(grammar.language, valid.join('\n')) : null;
  queries.set(id, q);
  return q;
}

/** The blank lines' numbers: all a text's doc lines can be said to be when it cannot be parsed in time. */
export function blankLineNumbers(source: string): number[] {
  const out: number[] = [];
  source.split('\n').forEach((l, i) => {
    if (!l.trim()) out.push(i + 1);
  });
  return out;
}

/**
 * 1-based numbers of the lines that are blank or whose every non-blank character is inside a comment or
 * docstring; null when the parse ran past `deadline` (performance.now() time). docLinesOf (doc-lines-of.ts)
 * runs it on the server's thread or on a worker.
 */
export function docLinesWithin(grammar: LoadedGrammar, source: string, deadline: number): Set<number> | null {
  const lines = source.split('\n');
  const out = new Set(blankLineNumbers(source));
  const query = docQueryOf(grammar);
  if (!query) return out;
  const parsed = parseWithin(grammar, source, deadline);
  if (parsed === 'abandoned') return null;
  const tree = parsed;
  if (!tree) return out;
  try {
    // Where each row's text starts and ends (whitespace aside), found once per row: trimming the row's
    // text before and after every comment on it was quadratic in a line of many comments.
    const starts = new Map<number, [number, number, number]>();
    const span = (row: number): [number, number, number] => {
      let s = starts.get(row);
      if (!s) {
        const line = lines[row] ?? '';
        let a = 0;
        while (a < line.length && /\s/.test(line[a])) a++;
        let b = line.length;
        while (b > a && /\s/.test(line[b - 1])) b--;
        starts.set(row, (s = [Math.min(a, line.length), a === line.length ? 0 : b, line.length]));
      }
      return s;
    };
    for (const { node } of query.captures(tree.rootNode, QUERY_OPTIONS)) {
      const r0 = node.startPosition.row;
      const r1 = node.endPosition.row;
      // (Columns count UTF-16 units of the text as parsed, like the slices they replace.)
      // Only whitespace before the start column, and after the end column, of the rows.
      const [firstText, , length0] = span(r0);
      const before = firstText >= Math.min(node.startPosition.column, length0);
      const after = span(r1)[1] <= node.endPosition.column;
      if (r0 === r1) {
        if (before && after) out.add(r0 + 1);
        continue;
      }
      if (before) out.add(r0 + 1);
      for (let r = r0 + 1; r < r1; r++) out.add(r + 1);
      if (after) out.add(r1 + 1);
    }
  } finally {
    tree.delete();
  }
  return out;
}
