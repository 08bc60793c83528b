import type { RecordedEvent } from '../../events/envelope';
import type { WorkspaceHandle } from '../../workspaces/registry';
import type { QueryDefinition } from './query';
import { Slot } from '../../slots';

export interface QueryAnswer<R = unknown> {
  /** The global position the answer reflects (the last event folded, or the as-of bound). */
  position: number;
  value: R;
}

/**
 * Answers a query by folding its sources up to `asOf` (a global position; default: the head).
 * Stream sources are merged in global order so the fold sees exactly the log's order.
 */
/** Answers a workspace-wide query from checkpointed rows, or null to fold the log instead. */
export type WorkspaceQueryAnswerer = (q: QueryDefinition, workspace: WorkspaceHandle, input: unknown, until: number) => Promise<QueryAnswer | null>;

/**
 * The answer as of `until` from the answer as of `from` (`previous`), reading only what the events
 * between them added; null when the query's read model cannot (then the answer is read whole).
 */
export type WorkspaceQueryAdvancer = (q: QueryDefinition, workspace: WorkspaceHandle, input: unknown, previous: unknown, from: number, until: number) => Promise<QueryAnswer | null>;

/**
 * Reads, in place of the whole workspace stream, the workspace events a query's fold depends on given
 * the events of its other streams (already read, up to `until`); null to read the stream instead.
 */
export type WorkspaceFactsReader = (workspace: WorkspaceHandle, streamEvents: readonly RecordedEvent[], until: number) => Promise<RecordedEvent[] | null>;

/**
 * What a workspace's checkpointed read models can answer without a fold of the log. Built by
 * src/readmodels (which sits beside projections and imports them, so it cannot be imported from here)
 * and attached to each workspace handle by the composition root (Ledger): no module-level hook, and a
 * handle without one (a test's bare handle) answers every query by folding — slower, equally exact.
 */
export interface ReadSide {
  answer: WorkspaceQueryAnswerer;
  advance: WorkspaceQueryAdvancer;
  /** The facts reader for the queries whose `sources` is this function (only queries that share it share what their fold reads). */
  facts(sources: QueryDefinition['sources']): WorkspaceFactsReader | undefined;
}

const READ_SIDE = new Slot<ReadSide>('read-side');

export function attachReadSide(workspace: WorkspaceHandle, side: ReadSide): void {
  workspace.cache.set(READ_SIDE, side);
}

const readSideOf = (workspace: WorkspaceHandle): ReadSide | undefined => workspace.cache.get(READ_SIDE);

/**
 * The answer of a workspace-wide query from its read model, exactly as of `until` (waiting until the
 * model has folded that far); null when it has none, or none is built yet. Watch subscriptions take
 * their answers from here (src/rpc/watch.ts), so their first answer does not fold the log either.
 */
export async function readModelAnswer<I, S, R>(q: QueryDefinition<I, S, R>, workspace: WorkspaceHandle, input: I, until: number): Promise<QueryAnswer<R> | null> {
  const side = readSideOf(workspace);
  if (!side || q.sources(input) !== 'all') return null;
  return (await side.answer(q, workspace, input, until)) as QueryAnswer<R> | null;
}

/**
 * The read model's answer as of `until` given its answer as of `from` (a watch's previous answer), from
 * the rows the events in (from, until] added; null when the model has no incremental answer for `q`.
 */
export async function readModelAdvance<I, S, R>(q: QueryDefinition<I, S, R>, workspace: WorkspaceHandle, input: I, previous: R, from: number, until: number): Promise<QueryAnswer<R> | null> {
  const side = readSideOf(workspace);
  if (!side || q.sources(input) !== 'all') return null;
  return (await side.advance(q, workspace, input, previous, from, until)) as QueryAnswer<R> | null;
}

export async function runQuery<I, S, R>(q: QueryDefinition<I, S, R>, workspace: WorkspaceHandle, input: I, asOf?: number): Promise<QueryAnswer<R>> {
  return runQueryImpl(q, workspace, input, asOf, true);
}

/** The same answer by folding the log, never from a read model (the reference the read models are checked against). */
export function foldQuery<I, S, R>(q: QueryDefinition<I, S, R>, workspace: WorkspaceHandle, input: I, asOf?: number): Promise<QueryAnswer<R>> {
  return runQueryImpl(q, workspace, input, asOf, false);
}

async function runQueryImpl<I, S, R>(q: QueryDefinition<I, S, R>, workspace: WorkspaceHandle, input: I, asOf: number | undefined, readModels: boolean): Promise<QueryAnswer<R>> {
  const head = await workspace.store.headPosition();
  const until = asOf === undefined ? head : Math.min(asOf, head);
  const side = readModels ? readSideOf(workspace) : undefined;
  // Workspace-wide queries with a checkpointed read model (src/readmodels) answer from its rows.
  if (side && q.sources(input) === 'all') {
    const served = (await side.answer(q, workspace, input, until)) as QueryAnswer<R> | null;
    if (served) return served;
  }
  const fold = await q.fold(input, workspace);
  let state = fold.initialState();
  const sources = q.sources(input);
  if (sources === 'all') {
    for await (const e of workspace.store.readAll({ until })) if (q.affects(input, e)) state = fold.evolve(state, e);
  } else {
    const events: RecordedEvent[] = [];
    // The workspace stream grows with every dismissal: a read model may hand over just what this fold needs.
    const facts = side?.facts(q.sources);
    const streams = facts ? sources.filter((s) => s !== 'workspace') : sources;
    for (const s of streams) for await (const e of workspace.store.readStream(s)) if (e.globalPosition <= until) events.push(e);
    if (facts && streams.length < sources.length) {
      const fromRows = await facts(workspace, events, until);
      if (fromRows) events.push(...fromRows);
      else for await (const e of workspace.store.readStream('workspace')) if (e.globalPosition <= until) events.push(e);
    }
    if (sources.length > 1) events.sort((a, b) => a.globalPosition - b.globalPosition);
    for (const e of events) if (q.affects(input, e)) state = fold.evolve(state, e);
  }
  return { position: until, value: q.view(state, input) };
}

/** runQuery plus the query's `attach` facts, as the RPC and MCP answer it: `{position, value, ...attached}`. */
export async function answerQuery<I, S, R>(q: QueryDefinition<I, S, R>, workspace: WorkspaceHandle, input: I, asOf?: number): Promise<QueryAnswer<R> & { [fact: string]: unknown }> {
  const answer = await runQuery(q, workspace, input, asOf);
  return q.attach ? { ...(await q.attach(workspace)), ...answer } : { ...answer };
}
