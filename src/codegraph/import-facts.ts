import type { ImportDecl } from './facts';

/** How a language writes its imports; selects the extractor in imports.ts. */
export type ImportStyle = 'ecmascript' | 'python' | 'go' | 'java' | 'rust' | 'include' | 'ruby' | 'dart' | 'kotlin' | 'swift' | 'csharp' | 'php' | 'zig' | 'none';

/** What the import extractors of imports.ts and lang-<language>.ts read off a file's top level. */
export interface ImportFacts {
  imports: ImportDecl[];
  exportAliases: Array<[string, string]>;
  packageName?: string;
  /** Source ranges of import statements: identifiers inside them are bindings, not uses. */
  importRanges: Array<[number, number]>;
  /** ECMAScript: start offsets of the top level's `const`/`let`/`var` declarations (read on the same walk; see ecma-tags.ts). */
  topLevelDeclarations?: Set<number>;
}
