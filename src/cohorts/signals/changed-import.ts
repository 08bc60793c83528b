import type { CodeGraph } from '../../codegraph/graph';
import { changeOfSymbols, importsOf, isModuleImport } from '../import-links';
import type { SignalDef } from '../types';

/** A file's import bindings on one side, as `source\0imported\0local` keys. */
const bindingKeys = (graph: CodeGraph | undefined, file: string | undefined): Set<string> => {
  const facts = file ? graph?.index.files.get(file)?.facts : undefined;
  return new Set((facts?.imports ?? []).flatMap((d) => d.bindings.map((x) => `${d.source}\0${x.imported}\0${x.local}`)));
};

/**
 * A source file's binding it did not import before (head) or no longer imports (base) naming any changed symbol: the file
 * starts or stops using what the change touches. Source files only: a test's references already link it to what it
 * exercises, and a test that imports a changed symbol it never uses says little (measured on immer).
 */
export const changedImport: SignalDef = {
  id: 'changed-import',
  stage: 'link',
  default: true,
  measured: 'click (ablation); counting every binding on a changed import line cost h3 0.800 → 0.733, including tests cost immer\'s mean',
  joins: 'a source file that starts or stops importing a changed symbol, and that symbol\'s file',
  evidence: 'changed references: src/a.ts → g',
  test: 'test/compute/formation-signals.test.ts',
  apply: (ctx) => {
    const changeOf = changeOfSymbols(ctx.files);
    for (const [graph, side] of [[ctx.input.head, 'head'], [ctx.input.base, 'base']] as const) {
      if (!graph) continue;
      const otherOf = new Map<string, Set<string>>();
      for (const { file: f, decl, target } of importsOf(ctx.files, graph, side)) {
        if (isModuleImport(decl) || f.role === 'test') continue;
        // The same file's bindings on the other side: a binding on both sides neither starts nor stops.
        let other = otherOf.get(f.path);
        if (!other) {
          other = side === 'head' ? bindingKeys(ctx.input.base, f.status === 'added' ? undefined : f.oldPath ?? f.path) : bindingKeys(ctx.input.head, f.status === 'deleted' ? undefined : f.path);
          otherOf.set(f.path, other);
        }
        for (const b of decl.bindings) {
          if (b.imported === '*') continue;
          const to = graph.resolveExport(target, b.imported, 0);
          if (!to || !changeOf.get(to) || !ctx.linkable(to) || other.has(`${decl.source}\0${b.imported}\0${b.local}`)) continue;
          const toFile = ctx.fileOfSymbol.get(to)!;
          if (toFile !== f.path) ctx.addLink({ fromFile: f.path, toFile, fromSymbol: f.path, toSymbol: to });
        }
      }
    }
  },
};
