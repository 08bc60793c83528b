import type { Node } from 'web-tree-sitter';
import type { ImportFacts } from '../import-facts';

/**
 * Kotlin (SPEC §8.1): tags over @tree-sitter-grammars/tree-sitter-kotlin 1.1.0 (no tags.scm shipped) and
 * imports. Kotlin resolves by package, not by file: `import a.b.C` names the top-level declaration C of
 * package a.b in whichever file (any Gradle source set) declares `package a.b`; `import a.b.*` opens the
 * package; files of one package see each other's top-level declarations without an import.
 */
export const KOTLIN_TAGS = `
(class_declaration name: (identifier) @name) @definition.class
(object_declaration name: (identifier) @name) @definition.class
(function_declaration name: (identifier) @name) @definition.function
(source_file (property_declaration (variable_declaration (identifier) @name)) @definition.constant)
(type_alias type: (identifier) @name) @definition.type
(call_expression . (identifier) @name) @reference.call
(call_expression . (navigation_expression (_) . (identifier) @name .)) @reference.call
(navigation_expression . (identifier) @name) @reference.class
(user_type (identifier) @name) @reference.type
(delegation_specifier (constructor_invocation (user_type (identifier) @name))) @reference.class
`;

const dotted = (n: Node): string => n.text.replace(/\s+/g, '');

export function kotlinImports(root: Node, out: ImportFacts): void {
  for (const n of root.namedChildren) {
    if (n.type === 'package_header') {
      const id = n.namedChildren.find((c) => c.type === 'qualified_identifier' || c.type === 'identifier');
      if (id) out.packageName = dotted(id);
      continue;
    }
    if (n.type !== 'import') continue;
    out.importRanges.push([n.startIndex, n.endIndex]);
    const id = n.namedChildren.find((c) => c.type === 'qualified_identifier' || c.type === 'identifier');
    if (!id) continue;
    const name = dotted(id);
    if (/\.\*\s*$|\*\s*$/.test(withoutAlias(n.text))) {
      out.imports.push({ source: name, bindings: [], star: true });
      continue;
    }
    const alias = n.namedChildren.find((c, i) => i > 0 && c.type === 'identifier')?.text;
    const last = name.slice(name.lastIndexOf('.') + 1);
    // `import a.b.C`: a declaration of package a.b (found by package, like a Java type import).
    out.imports.push({ source: name, bindings: [{ local: alias ?? last, imported: last }] });
  }
}

/**
 * tree-sitter-kotlin 1.1.0 rejects a nested class whose primary constructor starts on the next line
 * (`class Builder` / `internal constructor(…) :` inside a class body; valid Kotlin, and the same at top level
 * parses). The newline is moved to between `class` and the name (`class\nBuilder  internal constructor(…)`),
 * which the grammar takes: same length, every offset kept, only the name's row moves down one. Undefined
 * when no such header is in the text.
 */
export function kotlinRepairSource(source: string): string | undefined {
  if (!/constructor[ \t]*\(/.test(source)) return undefined;
  // Header by header: a line and the next (the header ends its line). Over the whole text, the regex's
  // `<[^\n{}()]*>` rescanned a line from each `class` on it (quadratic in a line of `class A<`); lines
  // longer than MAX_HEADER_LINE are not headers anyone writes and are left as they are.
  const lines = source.split('\n');
  let changed = false;
  for (let i = 0; i + 1 < lines.length; i++) {
    if (lines[i].length > MAX_HEADER_LINE || !/\b(?:class|object)\b/.test(lines[i])) continue;
    const window = `${lines[i]}\n${lines[i + 1]}`;
    const repaired = window.replace(SPLIT_HEADER, (_m, kw: string, gap: string, name: string, trail: string, indent: string) => `${kw}\n${' '.repeat(gap.length - 1)}${name}${trail} ${indent}`);
    if (repaired === window) continue;
    changed = true;
    const nl = repaired.indexOf('\n');
    lines[i] = repaired.slice(0, nl);
    lines[i + 1] = repaired.slice(nl + 1);
  }
  return changed ? lines.join('\n') : undefined;
}

const MAX_HEADER_LINE = 1_000;
const SPLIT_HEADER = /\b(class|object)([ \t]+)([A-Za-z_]\w*(?:<[^\n{}()]*>)?)([ \t]*)\n([ \t]*)(?=(?:(?:public|private|internal|protected)[ \t]+)?(?:@\w+(?:\([^)\n]*\))?[ \t]+)*constructor[ \t]*\()/;

const isWordChar = (c: string | undefined): boolean => c !== undefined && /\w/.test(c);
const isSpaceChar = (c: string | undefined): boolean => c !== undefined && /\s/.test(c);

/**
 * An import's text without a trailing ` as Alias`, as `.replace(/\s+as\s+\w+$/, '')` gives it — read
 * backwards from the end instead: that regex retried every whitespace run from each of its characters
 * (quadratic in a run of spaces).
 */
export function withoutAlias(text: string): string {
  let j = text.length;
  while (isWordChar(text[j - 1])) j--;
  if (j === text.length) return text;
  let k = j;
  while (isSpaceChar(text[k - 1])) k--;
  if (k === j || text.slice(k - 2, k) !== 'as') return text;
  let start = k - 2;
  if (!isSpaceChar(text[start - 1])) return text;
  while (isSpaceChar(text[start - 1])) start--;
  return text.slice(0, start);
}
