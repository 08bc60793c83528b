import * as path from 'node:path';
import type { Node } from 'web-tree-sitter';
import type { ImportFacts } from '../import-facts';

/**
 * C# (SPEC §8.1): resolution by namespace. A file's namespace (block or file-scoped) is its package; the
 * types of the same namespace and of its enclosing namespaces are visible without a `using`; `using A.B;`
 * opens namespace A.B, `using X = A.B.C;` binds one type. Symbol ids do not include the namespace (the
 * upstream tags.scm makes a one-word namespace a definition, a dotted one not: that definition is dropped
 * so ids are `File.cs#Class.Method` either way). A namespace is matched within the file's project and
 * the projects it references (graph.ts, build-modules.ts); across a project boundary only `public` types.
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

/** What a `.csproj` says about assembly boundaries: the projects it references (repo-relative paths). */
export interface CsProject {
  path: string;
  dir: string;
  references: string[];
}

/**
 * `<ProjectReference Include="..\Core\Core.csproj" />` (Windows or POSIX separators, relative to the
 * project's directory); references leaving the repository are dropped. `<RootNamespace>` is not read: it
 * only names the namespace new files get, while a file's namespace is the one it declares.
 */
/** XML without its `<!-- … -->` comments; an unclosed one is kept, as /<!--[\s\S]*?-->/g kept it (found by indexOf: that regex rescanned to the end from every unclosed `<!--`). */
function withoutXmlComments(text: string): string {
  let out = '';
  let at = 0;
  for (;;) {
    const open = text.indexOf('<!--', at);
    const close = open < 0 ? -1 : text.indexOf('-->', open + 4);
    if (close < 0) return out + text.slice(at);
    out += text.slice(at, open);
    at = close + 3;
  }
}

/**
 * The `Include` of each `<ProjectReference … Include="…">` tag (the last `Include=` before the tag's `>`,
 * as /<ProjectReference\b[^>]*\bInclude\s*=\s*"([^"]+)"/gi found it). Tag by tag: that regex scanned from
 * every `<ProjectReference` to the next `>` and back (quadratic on tags without one: ~55 s per MiB).
 */
function projectReferenceIncludes(xml: string): string[] {
  const out: string[] = [];
  const tag = /<ProjectReference\b/gi;
  for (let m = tag.exec(xml); m; m = tag.exec(xml)) {
    const gt = xml.indexOf('>', m.index);
    const inside = xml.slice(m.index + m[0].length, gt < 0 ? xml.length : gt);
    let found: { at: number; value: string } | undefined;
    for (const a of inside.matchAll(/\bInclude\s*=\s*"/gi)) {
      const from = m.index + m[0].length + a.index! + a[0].length;
      const end = xml.indexOf('"', from);
      if (end > from) found = { at: end + 1, value: xml.slice(from, end) };
    }
    if (found) {
      out.push(found.value);
      tag.lastIndex = found.at;
    } else if (gt < 0) break; // later tags end there too: nothing left
    else tag.lastIndex = gt; // tags inside this one end at the same `>`: no Include either
  }
  return out;
}

export function csprojOf(projectPath: string, text: string): CsProject {
  const dir = projectPath.includes('/') ? projectPath.slice(0, projectPath.lastIndexOf('/')) : '';
  const references: string[] = [];
  for (const include of projectReferenceIncludes(withoutXmlComments(text))) {
    const rel = include.replace(/\\/g, '/').replace(/\$\(MSBuildThisFileDirectory\)/gi, '');
    const joined = path.posix.normalize(path.posix.join(dir || '.', rel));
    if (!joined.startsWith('..')) references.push(joined);
  }
  return { path: projectPath, dir, references };
}
