import type { ImportDecl } from './facts';
import { BOUNDS } from '../events/catalogue/bounds';

/**
 * Longer module paths name no file the index holds (paths past BOUNDS.path are not indexed). A grouped
 * `use long::path::{a, b, …}` builds one full path per item, and each kept a copy of the prefix: a 224 KiB
 * Rust or PHP file held 1.6 GB of heap after extraction (1 MiB: ~35 GB, out of memory).
 */
export const MAX_IMPORT_SOURCE_CHARS = BOUNDS.path;

/**
 * Characters of module paths that grouped imports (`use a::b::{c, d, …}`, PHP `use A\B\{C, D, …}`) may
 * build per file: each item's path repeats the group's prefix, so 300,000 items of a 4,000-character
 * prefix would be 1.2 G characters out of a 1 MiB file. Real files build a few KB.
 */
const GROUPED_SOURCE_BUDGET = 4 * 1024 * 1024;
const groupedSpent = new WeakMap<ImportFacts, number>();

/** Whether a grouped import may build a module path of `chars` more characters in this file (and counts them). */
export function spendGroupedSource(out: ImportFacts, chars: number): boolean {
  const spent = (groupedSpent.get(out) ?? 0) + chars;
  if (chars > MAX_IMPORT_SOURCE_CHARS || spent > GROUPED_SOURCE_BUDGET) return false;
  groupedSpent.set(out, spent);
  return true;
}

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
