import * as path from 'node:path';
import type { Node } from 'web-tree-sitter';
import type { ImportFacts } from '../import-facts';

/**
 * Dart (SPEC §8.1): tags over @sengac/tree-sitter-dart 1.1.6 (Dart 3 syntax: records, patterns, sealed/base
 * classes, extension types; its tags.scm reports nameless method definitions, so these are written here;
 * dartRepairSource covers the two constructs it still lacks), library imports and their
 * resolution. A Dart import makes every public top-level name of the library visible (a star import);
 * `import … as p` binds the prefix `p`; `export` and `part` re-export. `package:<name>/<path>` resolves
 * through the `pubspec.yaml` declaring `name: <name>` to `<its dir>/lib/<path>`; other URIs are relative.
 */
export const DART_TAGS = `
(class_definition name: (identifier) @name) @definition.class
(mixin_declaration (identifier) @name) @definition.class
(extension_declaration name: (identifier) @name) @definition.class
(extension_type_declaration name: (identifier) @name) @definition.class
(enum_declaration name: (identifier) @name) @definition.enum
(type_alias . (type_identifier) @name) @definition.type
(type_alias (annotation) . (type_identifier) @name) @definition.type
(program (function_signature name: (identifier) @name) @definition.function)
(program (getter_signature name: (identifier) @name) @definition.function)
(program (setter_signature name: (identifier) @name) @definition.function)
(program (static_final_declaration_list (static_final_declaration (identifier) @name) @definition.constant))
(method_signature (function_signature name: (identifier) @name)) @definition.method
(method_signature (getter_signature name: (identifier) @name)) @definition.method
(method_signature (setter_signature name: (identifier) @name)) @definition.method
(type_identifier) @name @reference.type
(relational_expression (relational_expression . (identifier) @name . (relational_operator) @lt) . (relational_operator) @gt . [(parenthesized_expression) (record_literal)] (#eq? @lt "<") (#eq? @gt ">")) @reference.call
(relational_expression (relational_expression (relational_operator) @lt . (identifier) @name .) . (relational_operator) @gt . [(parenthesized_expression) (record_literal)] (#eq? @lt "<") (#eq? @gt ">")) @reference.type
(_ (identifier) @name @reference.call . (selector (argument_part)))
(_ (identifier) @name @reference.class . (selector (unconditional_assignable_selector)))
(_ (identifier) @name @reference.class . (selector (type_arguments)) . (selector (unconditional_assignable_selector)))
(named_argument (identifier) @name @reference.call)
(constructor_invocation (identifier) @name) @reference.call
(_ (identifier) . (selector (unconditional_assignable_selector (identifier) @name)) @reference.call . (selector (argument_part)))
`;

/*
 * The last two reference patterns above: 1.1.6 parses a generic call with one type argument, `Foo<T>(x)`,
 * as `(Foo < T) > (x)` — a relational expression nested in another, which valid Dart never is
 * (relational operators do not chain) — so that shape is read back as the call of `Foo` with type `T`.
 */

/**
 * Dart member chains are flat (\`A.b()\` is identifier, selector(.b), selector(args)): the qualifier of
 * \`b\` is the identifier right before its selector, when the chain starts there (\`A.b\`, \`prefix.A\`).
 */
export function dartQualifierOf(ancestors: readonly Node[], siblings: NamedSiblings): string | undefined {
  // `ancestors`: parent first (extract.ts knows them from its walk; Node.parent walks down from the root).
  const [parent, grandparent, chain] = ancestors;
  // `Box<int>.named(…)` as a constructor_invocation: the member of the type named first.
  if (parent?.type === 'constructor_invocation') return parent.namedChildren.find((c) => c.type === 'type_identifier')?.text ?? '?';
  const sel = parent?.type === 'unconditional_assignable_selector' ? grandparent : null;
  if (!sel || sel.type !== 'selector' || !chain) return undefined;
  let prev = siblings.previousNamed(chain, sel);
  // `Foo<T>.named(…)`: the type arguments are a selector of their own between the class and the member.
  while (prev?.type === 'selector' && prev.namedChildren.length === 1 && prev.namedChildren[0].type === 'type_arguments') prev = siblings.previousNamed(chain, prev);
  if (!prev) return undefined;
  if (prev.type === 'identifier') return prev.text;
  return '?';
}

/** `n`'s nearest `count` ancestors, parent first: for callers without a walk of their own. */
export function ancestorsOf(n: Node, count: number): Node[] {
  const out: Node[] = [];
  for (let p = n.parent; p && out.length < count; p = p.parent) out.push(p);
  return out;
}

/**
 * Previous named siblings from each parent's list of named children, read once per parent:
 * `Node.previousNamedSibling` finds the parent by walking down from the root, and a chain of members
 * `a.b.c…` asked once per member made that quadratic.
 */
export class NamedSiblings {
  private readonly byParent = new Map<number, { children: Node[]; index: Map<number, number> }>();

  previousNamed(parent: Node, child: Node): Node | null {
    let entry = this.byParent.get(parent.id);
    if (!entry) {
      const children = parent.namedChildren.filter((c): c is Node => c !== null);
      entry = { children, index: new Map(children.map((c, i) => [c.id, i])) };
      this.byParent.set(parent.id, entry);
    }
    const i = entry.index.get(child.id);
    return i !== undefined && i > 0 ? entry.children[i - 1] : null;
  }
}

/**
 * Flutter awareness: a Widgetbook use-case (`@UseCase(type: BuyButton)` of widgetbook_annotation) renders
 * the widget, i.e. runs its `build`: the annotation's `type:` is reported as a reference to `BuyButton.build`
 * (resolved like any `Type.member`, falling back to the class), so a changed widget and its changed
 * use-case meet on the changed definition.
 */
export function widgetbookUseCaseRefs(root: Node): Array<{ node: Node; member: string }> {
  const out: Array<{ node: Node; member: string }> = [];
  for (const a of root.descendantsOfType('annotation')) {
    const name = a.childForFieldName('name');
    const last = name?.type === 'scoped_identifier' ? name.childForFieldName('name')?.text : name?.text;
    if (last !== 'UseCase') continue;
    // 1.1.6 has no `arguments` field on an annotation (1.0.0 had): the arguments are its child node.
    for (const arg of a.namedChildren.find((c) => c.type === 'arguments')?.namedChildren ?? []) {
      if (arg.type !== 'named_argument' || withoutColon(arg.namedChildren[0]?.text) !== 'type') continue;
      const value = arg.namedChildren[1];
      if (value?.type === 'identifier' || value?.type === 'type_identifier') out.push({ node: value, member: 'build' });
    }
  }
  return out;
}

/** Dart signatures and their bodies are siblings: the definition spans through the body that follows. */
export function dartDefinitionEnd(node: Node): Node {
  const next = node.nextNamedSibling;
  return next && next.type === 'function_body' ? next : node;
}

/** The URI of a directive: its `uri` node's string (an annotation before the directive has strings too). */
function uriOf(n: Node): string | undefined {
  const s = n.descendantsOfType('uri')[0]?.descendantsOfType('string_literal')[0] ?? n.namedChildren.find((c) => c.type === 'string_literal' || c.type === 'uri');
  return s ? s.text.replace(/^r?(['"]{1,3})|(['"]{1,3})$/g, '') : undefined;
}

export function dartImports(root: Node, out: ImportFacts): void {
  for (const n of root.namedChildren) {
    if (n.type === 'import_or_export') {
      out.importRanges.push([n.startIndex, n.endIndex]);
      const inner = n.namedChildren[0];
      if (!inner) continue;
      const uri = uriOf(inner);
      if (!uri) continue;
      if (inner.type === 'library_export') {
        out.imports.push({ source: uri, bindings: [], star: true, reexport: true });
        continue;
      }
      const spec = inner.namedChildren.find((c) => c.type === 'import_specification');
      const prefix = spec?.namedChildren.find((c) => c.type === 'identifier')?.text;
      if (prefix) out.imports.push({ source: uri, bindings: [{ local: prefix, imported: '*' }] });
      else out.imports.push({ source: uri, bindings: [], star: true });
    } else if (n.type === 'part_directive') {
      out.importRanges.push([n.startIndex, n.endIndex]);
      const uri = uriOf(n);
      // A part shares the library's scope both ways: its names are the library's own.
      if (uri) out.imports.push({ source: uri, bindings: [], star: true, reexport: true });
    } else if (n.type === 'part_of_directive') {
      out.importRanges.push([n.startIndex, n.endIndex]);
      const uri = uriOf(n);
      if (uri) out.imports.push({ source: uri, bindings: [], star: true });
    }
  }
}

/** `name:` of a pubspec.yaml (top-level key only). */
export function pubspecName(text: string): string | undefined {
  return /^name:\s*['"]?([A-Za-z_][\w]*)['"]?\s*$/m.exec(text)?.[1];
}

/** The repo path a Dart import URI names, or undefined for `dart:` / packages outside the repo. */
export function dartModulePath(fromFile: string, uri: string, packages: Array<{ dir: string; name: string }>): string | undefined {
  if (uri.startsWith('dart:')) return undefined;
  if (uri.startsWith('package:')) {
    const rest = uri.slice('package:'.length);
    const slash = rest.indexOf('/');
    if (slash < 0) return undefined;
    const name = rest.slice(0, slash);
    const pkg = packages.find((p) => p.name === name);
    if (!pkg) return undefined;
    return path.posix.normalize(path.posix.join(pkg.dir || '.', 'lib', rest.slice(slash + 1)));
  }
  if (/^[a-z]+:/.test(uri)) return undefined;
  const joined = path.posix.normalize(path.posix.join(path.posix.dirname(fromFile), uri));
  return joined.startsWith('..') ? undefined : joined;
}

/**
 * Two constructs of Dart ≥ 2.19 that tree-sitter-dart 1.1.6 (the newest grammar in the registry) does not
 * parse, both without meaning for the code graph: the unnamed library directive `library;` and the empty
 * statement `;` inside a block. When every parse error of a file is one of these, the source comes back
 * with them blanked to spaces (same length, so every offset and line stays true) for a second parse;
 * otherwise undefined (the file keeps its parse errors and says so).
 */
export function dartRepairSource(source: string, root: Node): string | undefined {
  const spans: Array<[number, number]> = [];
  const visit = (n: Node): boolean => {
    if (n.isMissing) {
      const list = n.parent;
      const directive = list?.parent;
      if (n.type !== 'identifier' || list?.type !== 'dotted_identifier_list' || list.text !== '' || directive?.type !== 'library_name') return false;
      const keyword = directive.children.find((c) => c.type === 'library');
      if (!keyword) return false;
      spans.push([keyword.startIndex, directive.endIndex]);
      return true;
    }
    if (n.isError) {
      if (n.parent?.type !== 'block' || n.children.some((c) => c.type !== ';')) return false;
      spans.push([n.startIndex, n.endIndex]);
      return true;
    }
    if (!n.hasError) return true;
    for (const c of n.children) if (!visit(c)) return false;
    return true;
  };
  if (!visit(root) || !spans.length) return undefined;
  let out = '';
  let at = 0;
  for (const [s, e] of spans.sort((a, b) => a[0] - b[0])) {
    out += source.slice(at, s) + source.slice(s, e).replace(/[^\n]/g, ' ');
    at = e;
  }
  return out + source.slice(at);
}

/** A label's text without its final `:` and the whitespace before it (as .replace(/\s*:$/, ''), which retried a run of spaces from each of its characters). */
function withoutColon(label: string | undefined): string | undefined {
  return label?.endsWith(':') ? label.slice(0, -1).trimEnd() : label;
}
