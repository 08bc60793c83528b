import { contextOf, type CohortContextState } from '../../context/context-fold';
import type { HistoryEntry } from '../../context/history-fold';
import type { CohortContextInput, ContextPack } from '../../context/pack-types';
import type { StaleContext } from '../../context/context-fold';
import { reviewStreamOf } from '../../events/streams';
import { cohortContextQuery } from '../queries/cohort-context';
import type { QueryDefinition } from '../queries/query';
import { reviewMetricsQuery, reviewMetricsView, type MetricsState, type ReviewMetrics } from '../queries/review-metrics';
import type { WorkspaceHandle } from '../../workspaces/registry';
import { historyFromRows } from './history-read-model';
import type { ReadModelStorage, Slot } from './storage';

/**
 * Folds the query's own fold over the PR stream alone (its latest computation, cohort progress,
 * changed files — per-PR facts, cheap), as of `until`. The repo-wide part, the history, comes from
 * the history read model instead of the whole log.
 */
async function foldPrStream<I extends { repoId: string; prNumber: number }, S>(q: QueryDefinition<I, S, unknown>, ws: WorkspaceHandle, input: I, until: number): Promise<S> {
  const fold = await q.fold(input, ws);
  let state = fold.initialState();
  for await (const e of ws.store.readStream(reviewStreamOf(input))) {
    if (e.globalPosition > until) break;
    if (q.affects(input, e)) state = fold.evolve(state, e);
  }
  return state;
}

const symbolsOf = (s: CohortContextState, cohortKeys: string[] | 'all'): string[] => {
  const out: string[] = [];
  for (const c of s.computation?.cohorts ?? []) {
    if (cohortKeys !== 'all' && !cohortKeys.includes(c.key)) continue;
    for (const f of c.fragments) if (f.symbolId) out.push(f.symbolId);
  }
  return out;
};

async function lookup(storage: ReadModelStorage, slot: Slot, input: { repoId: string; prNumber: number }, symbols: string[], until: number): Promise<(symbolId: string) => HistoryEntry[]> {
  const rows = await historyFromRows(storage, slot, input.repoId, reviewStreamOf(input), symbols, until);
  return (symbolId) => rows.get(symbolId) ?? [];
}

/** `cohortContext` with its history clues from rows: the same pack as the fold of the whole log. */
export async function contextFromRows(storage: ReadModelStorage, slot: Slot, input: CohortContextInput, until: number, ws: WorkspaceHandle): Promise<ContextPack | StaleContext> {
  const s = await foldPrStream(cohortContextQuery, ws, input, until);
  return contextOf(s, input.cohortKey, input.budgetBytes, await lookup(storage, slot, input, symbolsOf(s, [input.cohortKey]), until));
}

/** `metrics` with the context packs' history from rows. */
export async function metricsFromRows(storage: ReadModelStorage, slot: Slot, input: { repoId: string; prNumber: number }, until: number, ws: WorkspaceHandle): Promise<ReviewMetrics> {
  const s: MetricsState = await foldPrStream(reviewMetricsQuery, ws, input, until);
  return reviewMetricsView(s, await lookup(storage, slot, input, symbolsOf(s.context, 'all'), until));
}
