import type { ApiContractComputation } from '../axes/types';
import { reviewStreamOf } from '../events/streams';
import { loadComputeState } from '../compute/streams';
import { DomainError } from '../domain-error';
import type { RecordedEvent } from '../events/envelope';
import type { CohortData } from '../events/catalogue/compute';
import type { WorkspaceHandle } from '../workspaces/registry';
import { evolveHistory, HistoryEntry, historyOf, HistoryState, initialHistoryState, isHistoryEvent } from './history-fold';
import { ensureTexts, headMaterials, HeadMaterials } from './materials';
import { buildContextPack, neededPaths } from './pack';
import type { ContextPack } from './pack-types';
import { catalogued } from '../events/catalogue/event-types';

export interface LatestComputation {
  headSha: string;
  baseSha: string;
  cohorts: CohortData[];
  apiContract?: ApiContractComputation;
}

/**
 * Folded events (the latest computation of the PR and the repo's review history) plus the repository
 * materials loaded at the edge for the head the query started on. `materials` is a reference to loaded
 * code, not event data: the fold itself stays a pure function of the events.
 */
export interface CohortContextState {
  streamId: string;
  computation: LatestComputation | null;
  history: HistoryState;
  materials: HeadMaterials | null;
}

export function evolveContextState(s: CohortContextState, raw: RecordedEvent): CohortContextState {
  const e = catalogued(raw);
  if (e.type === 'ReviewComputed' && e.streamId === s.streamId) {
    s.computation = { headSha: e.data.headSha, baseSha: e.data.baseSha, cohorts: e.data.cohorts, apiContract: e.data.apiContract };
  }
  evolveHistory(s.history, e);
  return s;
}

/** When the head a watcher loaded is no longer the computed one: ask again for the new head's pack. */
export interface StaleContext {
  stale: true;
  cohortKey: string;
  loadedHead: string | null;
  computedHead: string | null;
  reason: string;
}

/**
 * The pack of one cohort from a folded state (pure given the loaded materials). `history` replaces the
 * folded history (a read model answering the same lookups from rows, src/readmodels/stored/history-read-model.ts).
 */
export function contextOf(s: CohortContextState, cohortKey: string, budgetBytes: number, history?: (symbolId: string) => HistoryEntry[]): ContextPack | StaleContext {
  const c = s.computation;
  const m = s.materials;
  const cohort = c?.cohorts.find((x) => x.key === cohortKey);
  if (!c || !m || !cohort || m.headSha !== c.headSha || m.baseSha !== c.baseSha) {
    return { stale: true, cohortKey, loadedHead: m?.headSha ?? null, computedHead: c?.headSha ?? null, reason: cohort || !c ? 'the review was recomputed for another head: ask for the context again' : `cohortKey: "${cohortKey}" is not a cohort of the computation at ${c.headSha}` };
  }
  return buildContextPack(
    {
      cohort,
      headSha: c.headSha,
      baseSha: c.baseSha,
      graph: m.graph,
      hunks: m.hunks,
      lines: (p) => m.texts.get(p),
      docs: m.docs,
      nameMatchesByFrom: m.nameMatchesByFrom,
      history: history ?? ((symbolId) => historyOf(s.history, symbolId, { streamId: s.streamId })),
      apiContract: c.apiContract,
    },
    budgetBytes,
  );
}

/**
 * Loads what the packs of the PR's latest computation need: the head materials and, for `cohortKeys`,
 * the head files they quote. Refuses unknown reviews, uncomputed reviews and unknown cohort keys.
 */
export async function prepareContext(ws: WorkspaceHandle, target: { repoId: string; prNumber: number }, cohortKeys: string[] | 'all'): Promise<HeadMaterials | null> {
  const pr = await loadComputeState(ws, reviewStreamOf(target));
  if (!pr.exists) throw new DomainError('review_not_found', `prNumber: no review has been requested for ${target.repoId}#${target.prNumber}`);
  const latest = pr.latest;
  if (!latest) {
    if (cohortKeys === 'all') return null;
    throw new DomainError('not_computed', `prNumber: ${target.repoId}#${target.prNumber} has no computation yet (run computeReview first)`);
  }
  const cohorts = cohortKeys === 'all' ? latest.cohorts : cohortKeys.map((k) => latest.cohorts.find((c) => c.key === k) ?? notFound(k, latest.headSha));
  const m = await headMaterials(ws, target.repoId, latest.baseSha, latest.headSha);
  const paths = new Set<string>();
  for (const c of cohorts) for (const p of neededPaths(c, m.graph)) paths.add(p);
  await ensureTexts(ws, m, paths);
  return m;
}

function notFound(cohortKey: string, headSha: string): never {
  throw new DomainError('cohort_not_found', `cohortKey: "${cohortKey}" is not a cohort of the computation at ${headSha}`, { cohortKey });
}

export const contextFoldFor = (repoId: string, streamId: string, materials: HeadMaterials | null) => ({
  initialState: (): CohortContextState => ({ streamId, computation: null, history: initialHistoryState(repoId), materials }),
  evolve: evolveContextState,
});

export const affectsContext = (input: { repoId: string; prNumber: number }, e: RecordedEvent): boolean => isHistoryEvent(input.repoId, e);
