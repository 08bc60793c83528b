import type { SignalDef } from '../types';

/**
 * A JavaScript file's reference into a declaration file (`require('../')` bound to `typings/index.d.ts`): the code runs
 * the implementation, the typings only describe it, so `type-bindings` does not join them (measured on commander: with
 * it the signal cost the median 0.800 → 0.733).
 */
function jsIntoTypings(fromFile: string, toFile: string): boolean {
  return /\.[cm]?jsx?$/.test(fromFile) && /\.d\.[cm]?ts$/.test(toFile);
}

/**
 * Of the edges only TypeScript's checker found, those naming their target through a binding or a module's member, not a
 * member of an inferred receiver (which over-merges h3). Measured: commander gains, immer and h3 unchanged (docs/cohorts-history.md).
 */
export const typeBindings: SignalDef = {
  id: 'type-bindings',
  stage: 'edge',
  default: true,
  measured: 'commander mean 0.755 → 0.766, immer and h3 unchanged; without the `.d.ts` exclusion commander fell to 0.733',
  joins: 'a changed file and the changed definition it names through a binding or a module\'s member that only TypeScript\'s checker resolved',
  evidence: 'changed references: f → g',
  test: 'test/codegraph/type-edges.test.ts',
  edge: { admitsCheckerEdge: (e) => e.form !== 'receiver' && !jsIntoTypings(e.fromFile, e.toFile) },
};
