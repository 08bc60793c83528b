import type { QueryDefinition } from '../queries/query';
import { attachReadSide, type QueryAnswer, type ReadSide } from '../queries/run-query';
import type { RecordedEvent } from '../../events/envelope';
import type { WorkspaceHandle } from '../../workspaces/registry';
import { DomainError } from '../../domain-error';
import { auditQuery } from '../queries/audit';
import { cohortContextQuery } from '../queries/cohort-context';
import { reviewMetricsQuery } from '../queries/review-metrics';
import { advanceAuditFromRows, auditFromRows, auditReadModel } from './audit-read-model';
import { contextFromRows, metricsFromRows } from './context-answers';
import { historyReadModel } from './history-read-model';
import { reviewFactsFromRows, reviewFactsReadModel } from './review-facts';
import { reviewSources } from '../queries/review-fold';
import { ReadModelHost, type ReadModelHostOptions } from './host';
import type { ReadModel } from './model';
import { PostgresReadModelStorage, ReadModelStorage, Slot, SqliteReadModelStorage } from './storage';
import { Slot as CacheSlot } from '../../slots';

/** Every read model of the ledger, one line each. */
export const READ_MODELS: ReadModel[] = [auditReadModel, historyReadModel, reviewFactsReadModel];

type Answer = (storage: ReadModelStorage, slot: Slot, input: any, until: number, ws: WorkspaceHandle) => Promise<unknown>;
/** The answer as of `until` from the one as of `from`, reading only what (from, until] added (watch updates). */
type Advance = (storage: ReadModelStorage, slot: Slot, input: any, previous: any, from: number, until: number) => Promise<unknown>;

/** Workspace-wide queries answered from a read model instead of a fold of the whole log (keyed by the queries' own names). */
const ANSWERS: Record<string, { model: string; answer: Answer; advance?: Advance }> = {
  [auditQuery.name]: { model: 'audit', answer: auditFromRows, advance: advanceAuditFromRows },
  [cohortContextQuery.name]: { model: 'history', answer: contextFromRows },
  [reviewMetricsQuery.name]: { model: 'history', answer: metricsFromRows },
};

const HOST = new CacheSlot<{ host: ReadModelHost | null; closeWithWorkspace: () => unknown }>('readModelHost');

/**
 * The store's own technology: SQLite beside the log, PostgreSQL in its schema; KurrentDB in the
 * catalogue's PostgreSQL database when there is one (DATABASE_URL), else a SQLite file beside the workspace.
 */
function storageFor(ws: WorkspaceHandle): ReadModelStorage | null {
  const store = ws.store as { adapter: string; file?: string; backend?: { pool: import('pg').Pool; schema: string }; readModels?: { pool: import('pg').Pool; schema: string } };
  if (store.adapter === 'postgres' && store.backend) return new PostgresReadModelStorage(ws.id, store.backend.pool, store.backend.schema);
  if (store.adapter === 'kurrentdb' && store.readModels) return new PostgresReadModelStorage(ws.id, store.readModels.pool, store.readModels.schema, true);
  if (store.adapter === 'sqlite') return new SqliteReadModelStorage(ws.id, ws.dir, store.file && store.file !== ':memory:' ? store.file : undefined);
  if (store.adapter === 'kurrentdb') return new SqliteReadModelStorage(ws.id, ws.dir);
  return null;
}

/** The workspace's read-model host (opened once, closed with the workspace); null for stores without one. */
export function readModelHost(ws: WorkspaceHandle, models: ReadModel[] = READ_MODELS, options: ReadModelHostOptions = {}): ReadModelHost | null {
  const cached = ws.cache.get(HOST);
  if (cached) return cached.host;
  let host: ReadModelHost | null = null;
  try {
    const storage = storageFor(ws);
    if (storage) host = new ReadModelHost(ws.store, storage, models, options);
  } catch {
    host = null;
  }
  ws.cache.set(HOST, { host, closeWithWorkspace: () => host?.close() });
  return host;
}

/**
 * The answer of `q` from its read model, exactly as of `until`; null when `q` has none or it is not
 * built yet (the caller folds the log: slower, equally exact).
 */
export async function answerFromReadModel<I, R>(q: QueryDefinition<I, unknown, R>, ws: WorkspaceHandle, input: I, until: number): Promise<QueryAnswer<R> | null> {
  const a = ANSWERS[q.name];
  if (!a) return null;
  const host = readModelHost(ws);
  if (!host) return null;
  try {
    const slot = await host.readySlot(a.model, until);
    if (!slot) return null;
    return { position: until, value: (await a.answer(host.storage, slot, input, until, ws)) as R };
  } catch (err) {
    // A refusal (unknown review, unknown cohort) is the answer; the fold would refuse the same way.
    if (err instanceof DomainError) throw err;
    // A slot dropped under us by a newer process, a store that closed: the fold still answers.
    return null;
  }
}

/**
 * The answer of `q` as of `until` from its answer as of `from`, reading only the rows (from, until]
 * added; null when `q` has no incremental answer or its model is not ready (the caller reads it whole).
 */
export async function advanceFromReadModel<I, R>(q: QueryDefinition<I, unknown, R>, ws: WorkspaceHandle, input: I, previous: R, from: number, until: number): Promise<QueryAnswer<R> | null> {
  const a = ANSWERS[q.name];
  if (!a?.advance) return null;
  const host = readModelHost(ws);
  if (!host) return null;
  try {
    const slot = await host.readySlot(a.model, until);
    if (!slot) return null;
    return { position: until, value: (await a.advance(host.storage, slot, input, previous, from, until)) as R };
  } catch (err) {
    if (err instanceof DomainError) throw err;
    return null;
  }
}

/** The review queries' workspace facts from the reviewFacts model, exactly as of `until`; null while it is not built. */
export async function reviewFactsFromReadModel(ws: WorkspaceHandle, prEvents: readonly RecordedEvent[], until: number): Promise<RecordedEvent[] | null> {
  const host = readModelHost(ws);
  if (!host) return null;
  try {
    const slot = await host.readySlot('reviewFacts', until);
    return slot ? await reviewFactsFromRows(host.storage, slot, prEvents, until) : null;
  } catch {
    return null;
  }
}

/** The read side the composition root attaches to every workspace handle (src/ledger.ts). */
export const readModelReadSide: ReadSide = {
  answer: answerFromReadModel,
  advance: advanceFromReadModel,
  facts: (sources) => (sources === reviewSources ? reviewFactsFromReadModel : undefined),
};

/** Attaches the read models to a workspace handle (the entry points pass this to every Ledger they build). */
export function attachReadModels(ws: WorkspaceHandle): void {
  attachReadSide(ws, readModelReadSide);
}
