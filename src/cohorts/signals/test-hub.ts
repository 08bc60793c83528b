import type { CodeGraph } from '../../codegraph/graph';
import { isTestPath } from '../../codegraph/file-roles';
import type { SignalDef } from '../types';

/**
 * A definition referenced from more than this share of the head commit's indexed files' test files is a hub (the
 * entry point every test calls: `execa()`, `new Elysia()`, kong's `New`). A changed test's reference to it on an
 * UNCHANGED line says nothing about which change the test belongs to.
 */
export const TEST_HUB_SHARE = 0.05;
/** …and from at least this many test files: in a repository of a few dozen files 5 % is one or two tests, no hub. */
export const TEST_HUB_MIN_TESTS = 3;
const hubCounts = new WeakMap<CodeGraph, Map<string, number>>();
/** In how many distinct test files of the graph each definition is referenced (resolved edges). */
function testReferenceCounts(graph: CodeGraph): Map<string, number> {
  const cached = hubCounts.get(graph);
  if (cached) return cached;
  const files = new Map<string, Set<string>>();
  for (const e of graph.edges) {
    if (!isTestPath(e.fromFile) || e.fromFile === e.toFile) continue;
    const set = files.get(e.to) ?? new Set<string>();
    set.add(e.fromFile);
    files.set(e.to, set);
  }
  const counts = new Map([...files].map(([k, v]) => [k, v.size]));
  hubCounts.set(graph, counts);
  return counts;
}

/** With `changed-reference` only: a test's unchanged line naming a hub is how every test starts, not what this one is about. */
export const testHub: SignalDef = {
  id: 'test-hub',
  stage: 'edge',
  default: true,
  measured: 'review-14: no median lower on 13 repositories; execa 0.667 → 0.700, elysia 0.600 → 0.667, click 0.850 → 0.867',
  joins: 'none: a changed test\'s reference on an unchanged line to a hub (referenced from more test files than 5 % of the indexed files, and from at least 3) does not link',
  evidence: 'fewer `changed references`',
  test: 'test/compute/formation-signals.test.ts',
  edge: {
    skips: (ctx, e, fromFile, side) => {
      const graph = ctx.input.head ?? ctx.input.base;
      if (!graph || !ctx.active.has('changed-reference') || !ctx.testFiles.has(fromFile) || ctx.onChangedLine(fromFile, side, e.line)) return false;
      const n = testReferenceCounts(graph).get(e.to) ?? 0;
      return n > TEST_HUB_SHARE * graph.index.files.size && n >= TEST_HUB_MIN_TESTS;
    },
  },
};
