import type { Node } from 'web-tree-sitter';
import type { ImportFacts } from './import-facts';

/**
 * C# (SPEC §8.1): resolution by namespace. A file's namespace (block or file-scoped) is its package; the
 * types of the same namespace and of its enclosing namespaces are visible without a `using`; `using A.B;`
 * opens namespace A.B, `using X = A.B.C;` binds one type. Symbol ids do not include the namespace (the
 * upstream tags.scm makes a one-word namespace a definition, a dotted one not: that definition is dropped
 * so ids are `File.cs#Class.Method` either way). Project files (.csproj) are not read: a namespace is
 * matched across the whole repository.
 */
export const CSHARP_EXTRA_TAGS = `
(invocation_expression function: (identifier) @name) @reference.call
(member_access_expression expression: (identifier) @name) @reference.class
(base_list (identifier) @name) @reference.class
(parameter type: (identifier) @name) @reference.type
(method_declaration returns: (identifier) @name) @reference.type
(struct_declaration name: (identifier) @name) @definition.class
(enum_declaration name: (identifier) @name) @definition.enum
(record_declaration name: (identifier) @name) @definition.class
(constructor_declaration name: (identifier) @name) @definition.method
(property_declaration name: (identifier) @name) @definition.method
`;

export function csharpImports(root: Node, out: ImportFacts): void {
  const visit = (nodes: Node[]) => {
    for (const n of nodes) {
      if (n.type === 'namespace_declaration' || n.type === 'file_scoped_namespace_declaration') {
        const name = n.childForFieldName('name')?.text.replace(/\s+/g, '');
        if (name && out.packageName === undefined) out.packageName = name;
        const body = n.childForFieldName('body');
        if (body) visit(body.namedChildren);
        else visit(n.namedChildren);
        continue;
      }
      if (n.type !== 'using_directive') continue;
      out.importRanges.push([n.startIndex, n.endIndex]);
      if (n.children.some((c) => c.type === 'static')) continue;
      const alias = n.childForFieldName('name')?.text;
      const target = n.namedChildren.find((c) => (c.type === 'qualified_name' || c.type === 'identifier') && c.text !== alias);
      if (!target) continue;
      const name = target.text.replace(/\s+/g, '');
      if (alias) {
        const cut = name.lastIndexOf('.');
        if (cut > 0) out.imports.push({ source: `${name.slice(0, cut)}`, bindings: [{ local: alias, imported: name.slice(cut + 1) }] });
      } else out.imports.push({ source: name, bindings: [], star: true });
    }
  };
  visit(root.namedChildren);
}
