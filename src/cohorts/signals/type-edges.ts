import type { SignalDef } from '../types';

/** Every edge only TypeScript's checker found links (never a field read landing on its owner class). Measured: no default (docs/cohorts-history.md). */
export const typeEdges: SignalDef = {
  id: 'type-edges',
  stage: 'edge',
  default: false,
  measured: 'off: with the defaults h3 0.800 → 0.667 (different-commit pairs joined 9.9 % → 20.7 %)',
  joins: 'a changed file and the changed definition it references through any edge only TypeScript\'s checker resolved',
  evidence: 'changed references: f → g',
  test: 'test/codegraph/type-edges.test.ts',
  edge: { admitsCheckerEdge: () => true },
};
