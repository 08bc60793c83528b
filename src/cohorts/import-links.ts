import type { FragmentData } from '../events/catalogue/compute';
import type { ImportDecl } from '../codegraph/facts';
import type { CodeGraph } from '../codegraph/graph';
import type { IndexedFile } from '../codegraph/indexer';
import type { FormationFile } from './types';

/** An import of a whole module rather than of named bindings: `export *`, a namespace, a side effect, `import *`. */
export const isModuleImport = (d: ImportDecl): boolean => Boolean(d.star) || d.bindings.every((b) => b.imported === '*');

/** Each changed definition's change (added, modified, deleted). */
export function changeOfSymbols(files: FormationFile[]): Map<string, FragmentData['change']> {
  const changeOf = new Map<string, FragmentData['change']>();
  for (const f of files) for (const fr of f.fragments) if (fr.symbolId) changeOf.set(fr.symbolId, fr.change);
  return changeOf;
}

/** Each import declaration of each changed file indexed on that side (a deleted file only on the base), with the module it resolves to. */
export function* importsOf(files: FormationFile[], graph: CodeGraph, side: 'head' | 'base'): Generator<{ file: FormationFile; indexed: IndexedFile; decl: ImportDecl; target: string }> {
  for (const file of files) {
    const own = side === 'head' ? file.path : file.oldPath ?? file.path;
    if (side === 'head' && file.status === 'deleted') continue;
    const indexed = graph.index.files.get(own);
    if (!indexed) continue;
    for (const decl of indexed.facts.imports) {
      const target = graph.resolveModule(indexed, decl.source);
      if (target) yield { file, indexed, decl, target };
    }
  }
}
