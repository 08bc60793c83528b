import type { RecordedEvent } from '../events/envelope';
import type { WorkspaceHandle } from '../workspaces/registry';
import type { QueryDefinition } from './query';

export interface QueryAnswer<R = unknown> {
  /** The global position the answer reflects (the last event folded, or the as-of bound). */
  position: number;
  value: R;
}

/**
 * Answers a query by folding its sources up to `asOf` (a global position; default: the head).
 * Stream sources are merged in global order so the fold sees exactly the log's order.
 */
export async function runQuery<I, S, R>(q: QueryDefinition<I, S, R>, workspace: WorkspaceHandle, input: I, asOf?: number): Promise<QueryAnswer<R>> {
  const head = await workspace.store.headPosition();
  const until = asOf === undefined ? head : Math.min(asOf, head);
  const fold = await q.fold(input, workspace);
  let state = fold.initialState();
  const sources = q.sources(input);
  if (sources === 'all') {
    for await (const e of workspace.store.readAll({ until })) if (q.affects(input, e)) state = fold.evolve(state, e);
  } else {
    const events: RecordedEvent[] = [];
    for (const s of sources) for await (const e of workspace.store.readStream(s)) if (e.globalPosition <= until) events.push(e);
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
