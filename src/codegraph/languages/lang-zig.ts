import * as path from 'node:path';
import type { Node } from 'web-tree-sitter';
import type { ImportFacts } from '../import-facts';

/**
 * Zig (SPEC §8.1): `const m = @import("path.zig");` binds a file as a namespace (`m.f()` is f of that
 * file); `const T = @import("path.zig").T;` binds one declaration. Paths are relative to the importing file;
 * `@import("std")` and other named modules (build.zig modules) stay external.
 */
export const ZIG_REFERENCE_TAGS = `
(call_expression function: (field_expression member: (identifier) @name)) @reference.call
`;

function importPath(n: Node | null | undefined): string | undefined {
  if (!n || n.type !== 'builtin_function' || n.namedChildren[0]?.text !== '@import') return undefined;
  const s = n.descendantsOfType('string_content')[0]?.text;
  return s && s.endsWith('.zig') ? s : undefined;
}

export function zigImports(root: Node, out: ImportFacts): void {
  for (const n of root.namedChildren) {
    if (n.type !== 'variable_declaration') continue;
    const local = n.namedChildren.find((c) => c.type === 'identifier')?.text;
    const value = n.namedChildren.find((c) => c.type === 'builtin_function' || c.type === 'field_expression');
    if (!local || !value) continue;
    const direct = importPath(value);
    if (direct) {
      out.importRanges.push([n.startIndex, n.endIndex]);
      out.imports.push({ source: direct, bindings: [{ local, imported: '*' }] });
      continue;
    }
    if (value.type === 'field_expression') {
      const source = importPath(value.childForFieldName('object'));
      const member = value.childForFieldName('member')?.text;
      if (source && member) {
        out.importRanges.push([n.startIndex, n.endIndex]);
        out.imports.push({ source, bindings: [{ local, imported: member }] });
      }
    }
  }
}

export function zigModulePath(fromFile: string, source: string): string | undefined {
  const p = path.posix.normalize(path.posix.join(path.posix.dirname(fromFile), source));
  return p.startsWith('..') ? undefined : p;
}
