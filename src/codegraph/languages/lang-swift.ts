import type { Node } from 'web-tree-sitter';
import type { ImportFacts } from '../import-facts';

/**
 * Swift (SPEC §8.1): tags over tree-sitter-swift 0.7.1 (its own tags.scm reports a class as the definition
 * of its methods, so these are written here) and imports. Swift resolves by module: the files of one
 * module see each other's declarations without an import; `import M` opens module M. A module is a
 * SwiftPM target — the directory `Sources/<M>/` (or `Tests/<M>/`) — and every other Swift file of the
 * repository is taken as one app module (an Xcode target), which is what most apps are.
 * tree-sitter-swift 0.7.1 parses `a + f(x)` as `(a + f)(x)`: the operand right before a call suffix is
 * reported as the call.
 */
export const SWIFT_TAGS = `
(class_declaration name: (type_identifier) @name) @definition.class
(class_declaration name: (user_type (type_identifier) @name)) @definition.class
(protocol_declaration name: (type_identifier) @name) @definition.interface
(function_declaration name: (simple_identifier) @name) @definition.function
(protocol_function_declaration name: (simple_identifier) @name) @definition.method
(typealias_declaration name: (type_identifier) @name) @definition.type
(source_file (property_declaration name: (pattern (simple_identifier) @name)) @definition.constant)
(call_expression . (simple_identifier) @name) @reference.call
(call_expression . (navigation_expression suffix: (navigation_suffix suffix: (simple_identifier) @name))) @reference.call
(navigation_expression . target: (simple_identifier) @name) @reference.class
(user_type (type_identifier) @name) @reference.type
(call_expression . [(additive_expression rhs: (simple_identifier) @name) (multiplicative_expression rhs: (simple_identifier) @name) (comparison_expression rhs: (simple_identifier) @name) (equality_expression rhs: (simple_identifier) @name) (nil_coalescing_expression if_nil: (simple_identifier) @name) (conjunction_expression rhs: (simple_identifier) @name) (disjunction_expression rhs: (simple_identifier) @name)]) @reference.call
`;

/** \`a.b\`: the name's parent is a navigation_suffix; the qualifier is the navigation's target, when simple. */
export function swiftQualifierOf(ancestors: readonly Node[]): string | undefined {
  // `ancestors`: parent first (extract.ts knows them from its walk; Node.parent walks down from the root).
  const [suffix, navigation] = ancestors;
  if (suffix?.type !== 'navigation_suffix') return undefined;
  const target = navigation?.childForFieldName('target');
  if (!target) return undefined;
  return target.type === 'simple_identifier' || target.type === 'self_expression' ? target.text : '?';
}

/** The SwiftPM target a file belongs to: `[key, module name]`; the app module ("", "") otherwise. */
export function swiftModuleOf(filePath: string): [key: string, name: string] {
  const m = /^(.*?(?:^|\/))(Sources|Tests)\/([^/]+)\//.exec(filePath);
  return m ? [`${m[1]}${m[2]}/${m[3]}`, m[3]] : ['', ''];
}

export function swiftImports(root: Node, out: ImportFacts): void {
  for (const n of root.namedChildren) {
    if (n.type !== 'import_declaration') continue;
    out.importRanges.push([n.startIndex, n.endIndex]);
    const id = n.namedChildren.find((c) => c.type === 'identifier');
    const module = id?.namedChildren[0]?.text;
    if (module) out.imports.push({ source: module, bindings: [], star: true });
  }
}

const blank = (s: string): string => s.replace(/[^\n]/g, ' ');
const CONDITIONAL = /^([ \t]*)#(if|elseif|else|endif)\b/;

/** The end of a directive's condition: through the lines its parentheses (or a trailing `&&`/`||`) continue onto. */
function directiveEnd(lines: string[], at: number): number {
  let depth = 0;
  for (let i = at; i < lines.length; i++) {
    const comment = lines[i].indexOf('//'); // (not /\/\/.*$/: quadratic on a line of slashes ending in \r)
    const code = comment < 0 ? lines[i] : lines[i].slice(0, comment);
    for (const ch of code) depth += ch === '(' ? 1 : ch === ')' ? -1 : 0;
    if (depth <= 0 && !/(&&|\|\|)\s*$/.test(code)) return i;
  }
  return lines.length - 1;
}

/** Index of the `)` closing the `(` at `open`, or -1. */
function closingParen(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === '(') depth++;
    else if (text[i] === ')' && --depth === 0) return i;
  }
  return -1;
}

/**
 * Valid Swift that tree-sitter-swift 0.7.1 (the newest on the registry) does not parse, rewritten to text
 * it does, all same length (only spaces replace characters, newlines stay), so every offset and line stays
 * true. Used before the first parse (the grammar's error recovery on these files is slow: seconds per file)
 * and only when the rewritten text parses with no errors (extract.ts). Undefined when nothing applies.
 * - Conditional compilation (`#if` inside expressions, argument lists and bodies is not in the grammar):
 *   the `#if`/`#elseif`/`#else`/`#endif` lines are blanked and the first branch's code is kept; the other
 *   branches are blanked, so a symbol defined in both is not defined twice (the index sees one
 *   configuration: the first branch's).
 * - `#available(…)` / `#unavailable(…)` conditions become `true` (padded with spaces).
 * - Freestanding macros and literals (`#expect(…)`, `#require(…)`, `#function`, `#file`, …) become the
 *   identifier (` expect(…)`): a call of the same name, which is what the graph needs of a macro.
 * - `()` as an argument (`.success(())`, `Result(value: (), …)`) becomes `0 `; a `sending` parameter
 *   modifier (Swift 6), `nonisolated(unsafe)` and the `consume` operator (`_ = consume x`) are blanked.
 */
export function swiftPrepareSource(source: string): string | undefined {
  let text = source;
  if (/^[ \t]*#(if|elseif|else|endif)\b/m.test(text)) {
    const lines = text.split('\n');
    const stack: boolean[] = []; // per open #if: still in its first branch
    let pastFirst = 0; // how many of them are not (stack.includes(false) per line was quadratic in open #ifs)
    for (let i = 0; i < lines.length; i++) {
      const m = CONDITIONAL.exec(lines[i]);
      if (!m) {
        if (pastFirst > 0) lines[i] = blank(lines[i]);
        continue;
      }
      const kind = m[2];
      if (kind === 'if') stack.push(true);
      else if (kind === 'endif') {
        if (stack.pop() === false) pastFirst--;
      } else if (stack.length && stack[stack.length - 1]) {
        stack[stack.length - 1] = false;
        pastFirst++;
      }
      const end = kind === 'if' || kind === 'elseif' ? directiveEnd(lines, i) : i;
      for (let j = i; j <= end; j++) lines[j] = blank(lines[j]);
      i = end;
    }
    text = lines.join('\n');
  }
  text = rewriteAvailable(text);
  text = text.replace(/(^|[^\w#\\])#([A-Za-z_]\w*)/g, (m, before: string, name: string) =>
    /^(if|elseif|else|endif|available|unavailable)$/.test(name) ? m : `${before} ${name}`);
  text = text.replace(/([(,]\s*|\w:\s*)\(\)(?=\s*[),])/g, (_m, before: string) => `${before}0 `);
  text = text.replace(/(:\s*)sending(?=\s)/g, (_m, before: string) => `${before}       `);
  text = text.replace(/\bnonisolated\(unsafe\)/g, (m) => blank(m));
  text = text.replace(/([=(,]\s*|\breturn\s+)consume(?=\s+[A-Za-z_])/g, (_m, before: string) => `${before}       `);
  return text === source ? undefined : text;
}

/** `#available(iOS 15, *)` → `true` and spaces (newlines kept). */
function rewriteAvailable(text: string): string {
  const re = /#(?:un)?available\s*\(/g;
  let out = '';
  let at = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const close = closingParen(text, m.index + m[0].length - 1);
    if (close < 0) break;
    out += text.slice(at, m.index) + 'true' + blank(text.slice(m.index + 4, close + 1));
    at = close + 1;
    re.lastIndex = at;
  }
  return out + text.slice(at);
}
