import type { StreamFold } from '../events/kernel-types';
import type { WorkspaceHandle } from './registry';

interface CachedStream<S> {
  revision: number;
  state: S;
  lock: Promise<void>;
}

/**
 * Folds a stream (from the per-workspace cache, reading only events past the cached revision). The
 * cache is keyed by the fold object, so the command executor and every reader at the edge share one
 * folded state per (fold, stream) and each load costs only the tail.
 */
export async function loadStream<S>(fold: StreamFold<S>, workspace: WorkspaceHandle, streamId: string): Promise<{ state: S; revision: number }> {
  let byStream = workspace.cache.get(fold) as Map<string, CachedStream<S>> | undefined;
  if (!byStream) workspace.cache.set(fold, (byStream = new Map()));
  let entry = byStream.get(streamId);
  if (!entry) byStream.set(streamId, (entry = { revision: -1, state: fold.initialState(), lock: Promise.resolve() }));
  const e = entry;
  // Serialize catch-up per stream: evolve may mutate the cached state, so two loaders must not fold
  // the same events into it concurrently.
  const run = e.lock.then(async () => {
    for await (const ev of workspace.store.readStream(streamId, { fromRevision: e.revision + 1 })) {
      e.state = fold.evolve(e.state, ev);
      e.revision = ev.streamRevision;
    }
  });
  e.lock = run.catch(() => undefined);
  await run;
  return { state: e.state, revision: e.revision };
}
