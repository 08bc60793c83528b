import { DomainError } from '../domain-error';
import type { CohortData } from '../events/catalogue/compute';
import type { CodeGraph } from './graph';
import { isTestPath } from './file-roles';

/** How far the dependents of a change or a definition are followed (here and in a cohort's blast radius). */
export const DEFAULT_BLAST_DEPTH = 3;

export interface BlastRadiusView {
  target: string;
  symbols: string[];
  dependents: { files: string[]; symbols: string[]; depth: number; truncated: boolean; byDepth: Array<{ depth: number; symbols: string[] }> };
  publicApi: string[];
  tests: string[];
}

/**
 * `review_studio.blastRadius` (SPEC §8.5): who references a file's definitions or one symbol in the
 * graph, transitively along resolved edges up to `depth`.
 */
export function blastRadius(graph: CodeGraph, target: { path: string } | { symbolId: string }, depth = DEFAULT_BLAST_DEPTH): BlastRadiusView {
  const start = 'symbolId' in target ? [target.symbolId] : (graph.defsByFile.get(target.path) ?? []).map((s) => s.id);
  if ('symbolId' in target && !graph.symbols.has(target.symbolId)) throw new DomainError('symbol_not_found', `symbolId: "${target.symbolId}" is not a definition at ${graph.index.commit}`);
  if ('path' in target && !graph.index.files.has(target.path)) throw new DomainError('file_not_indexed', `path: "${target.path}" is not an indexed file at ${graph.index.commit}`);
  const ownFiles = new Set(start.map((s) => graph.symbols.get(s)!.path));
  const seen = new Set(start);
  const files = new Set<string>();
  const symbols = new Set<string>();
  const byDepth: Array<{ depth: number; symbols: string[] }> = [];
  let frontier = start;
  let truncated = false;
  for (let level = 1; level <= depth && frontier.length; level++) {
    const next: string[] = [];
    for (const s of frontier) {
      for (const e of graph.incomingOf(s)) {
        if (ownFiles.has(e.fromFile)) continue;
        files.add(e.fromFile);
        if (e.from !== e.fromFile) symbols.add(e.from);
        if (!seen.has(e.from)) {
          seen.add(e.from);
          next.push(e.from);
        }
      }
    }
    if (next.length) byDepth.push({ depth: level, symbols: [...next].sort() });
    frontier = next;
    if (level === depth && frontier.length) truncated = true;
  }
  return {
    target: 'symbolId' in target ? target.symbolId : target.path,
    symbols: start,
    dependents: { files: [...files].sort(), symbols: [...symbols].sort(), depth, truncated, byDepth },
    publicApi: start.filter((s) => graph.symbols.get(s)!.def.exported),
    tests: [...files].filter(isTestPath).sort(),
  };
}

/** `review_studio.cohortImpact` (SPEC §8.5): who depends on one cohort of a computation. Pure, from recorded data. */
export function cohortImpact(computation: { headSha: string; cohorts: CohortData[] }, cohortKey: string) {
  const c = computation.cohorts.find((x) => x.key === cohortKey);
  if (!c) throw new DomainError('cohort_not_found', `cohortKey: "${cohortKey}" is not a cohort of the computation at ${computation.headSha}`, { cohortKey });
  return { cohortKey, headSha: computation.headSha, rank: c.rank, title: c.title, files: c.files, anchors: c.anchors, blastRadius: c.blastRadius };
}
