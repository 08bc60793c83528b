import type { Node } from 'web-tree-sitter';
import type { ImportFacts } from './import-facts';

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
export function swiftQualifierOf(nameNode: Node): string | undefined {
  const suffix = nameNode.parent;
  if (suffix?.type !== 'navigation_suffix') return undefined;
  const target = suffix.parent?.childForFieldName('target');
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
