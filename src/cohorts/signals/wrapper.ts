import type { CodeGraph } from '../../codegraph/graph';
import type { SignalDef } from '../types';

/** A top-level function or constant of the graph (a class is no wrapper: naming it says nothing about which changed method runs). */
const topLevelFunction = (graph: CodeGraph, id: string) => {
  const def = graph.symbols.get(id)?.def;
  return def && def.parent === -1 && (def.kind === 'function' || def.kind === 'constant') ? def : undefined;
};

/**
 * A changed non-exported top-level function reached through one exported top-level function of the same file that
 * calls it (the reference names the wrapper, the change is in the private helper). One hop only. Measured: through any
 * unchanged definition it did not earn its place; this form did on h3 (docs/cohorts-history.md).
 */
export const wrapper: SignalDef = {
  id: 'wrapper',
  stage: 'edge',
  default: true,
  measured: 'review-10: h3 mean 0.747 → 0.751, eight others unchanged; through any unchanged definition it cost h3 0.800 → 0.762',
  joins: 'a file referencing an exported top-level function and the changed private function of its file that it calls',
  evidence: 'through an exported wrapper: f → wrap → helper',
  test: 'test/compute/formation-signals.test.ts',
  edge: {
    hop: (ctx, graph, to) => {
      const info = graph.symbols.get(to);
      if (!info || !topLevelFunction(graph, to)?.exported) return undefined;
      for (const e of graph.outgoingOf(to)) {
        if (e.toFile !== info.path || !ctx.fileOfSymbol.has(e.to) || !ctx.linkable(e.to) || topLevelFunction(graph, e.to)?.exported !== false) continue;
        return e.to;
      }
      return undefined;
    },
  },
};
