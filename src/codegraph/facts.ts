/**
 * What one parsed blob says, independent of where it lives: definitions, references and import
 * declarations. Facts are cached by (blob SHA, grammar, engine version), so they must not depend on the
 * file's path; symbol ids (`path#Qualified.name`) are formed when a commit's graph is built.
 */
export interface Definition {
  name: string;
  /** Qualified by enclosing definitions: `Class.method`, `outer.inner`, Go `Type.Method`. */
  qname: string;
  kind: string;
  /** 1-based inclusive line range. */
  start: number;
  end: number;
  exported: boolean;
  /** Index of the enclosing definition, -1 at top level. */
  parent: number;
}

export type ReferenceKind = 'call' | 'class' | 'type' | 'implementation' | 'use';

export interface Reference {
  name: string;
  /** `ns` in `ns.name(...)`, `this`, `self`, `pkg`…; absent for a bare identifier. */
  qualifier?: string;
  kind: ReferenceKind;
  line: number;
  /** Index of the innermost enclosing definition, -1 at top level. */
  from: number;
}

export interface ImportBinding {
  local: string;
  /** Exported name, `default`, or `*` for a namespace / whole module. */
  imported: string;
}

export interface ImportDecl {
  /** Module specifier as written (`./a`, `.models`, `github.com/x/y`, `a.b.C`, `x.h`). */
  source: string;
  bindings: ImportBinding[];
  /** `export … from`: the bindings are re-exported, not used locally. */
  reexport?: boolean;
  /** Every export of the source becomes visible (`export *`, `from x import *`, `#include`, Go dot import). */
  star?: boolean;
  /** CommonJS `require()`: the module value is `module.exports` (its `default` export; see imports.ts). */
  require?: boolean;
}

export interface FileFacts {
  defs: Definition[];
  refs: Reference[];
  imports: ImportDecl[];
  /** `export { local as exported }` / `export default local` without a source. */
  exportAliases: Array<[exported: string, local: string]>;
  /** Java package / Go package name. */
  packageName?: string;
  /** The parse produced error nodes (facts are best-effort). */
  hasErrors?: boolean;
  /** Which parser produced the facts when it was not the grammar's tree-sitter parser (a fallback). */
  parser?: 'typescript';
  /** Why the file has no facts (its parse ran past PARSE_BUDGET_MS, or it nests past the call stack: extract.ts); the indexer lists it as skipped. */
  abandoned?: string;
}

/** How a checker edge's reference names its target (graph.ts `Edge.form`). */
export type CheckerForm = 'binding' | 'namespace' | 'receiver';

/** One walked file's checker edges at one commit, as stored (the `from` file is the key's; type-edges.ts). */
export interface StoredCheckerEdge {
  from: string;
  to: string;
  toFile: string;
  kind: ReferenceKind;
  line: number;
  form: CheckerForm;
  member?: string;
}

/** Where per-commit checker results live (FactsCache implements it). */
export interface CheckerEdgeStore {
  getCheckerEdges(commit: string, path: string, engine: string): StoredCheckerEdge[] | undefined;
  putCheckerEdges(entries: Array<{ commit: string; path: string; engine: string; edges: StoredCheckerEdge[] }>): void;
}
