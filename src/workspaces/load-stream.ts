import type { RecordedEvent } from '../events/envelope';
import type { StreamFold } from '../events/kernel-types';
import { foldCache } from './fold-cache';
import type { WorkspaceHandle } from './registry';
import { Slot } from '../slots';

const ids = new WeakMap<object, number>();
let nextId = 0;
const idOf = (o: object): number => {
  let id = ids.get(o);
  if (id === undefined) ids.set(o, (id = ++nextId));
  return id;
};
const CLOSE = new Slot<{ closeWithWorkspace: () => unknown }>('foldCacheEntries');

/**
 * Folds a stream (from the process's fold cache, reading only events past the cached revision). The
 * cache is keyed by workspace, fold object and stream, so the command executor and every reader at the
 * edge share one folded state per (fold, stream) and each load costs only the tail. The cache is
 * bounded by bytes (src/workspaces/fold-cache.ts): an evicted state is folded again from its stream.
 */
export interface LoadOptions {
  /**
   * The state is for a decision whose append names the revision it decided on, so a state that misses
   * another server's not-yet-announced append is refused at append (and re-decided on a fresh read): the
   * store's freshness (EventStore.freshness) may then stand in for the read. Readers that answer clients
   * leave it off and always read, so a write on one server is visible to a read on another at once.
   */
  forDecision?: boolean;
}

function keyOf(fold: object, workspace: WorkspaceHandle, streamId: string): string {
  const prefix = `${idOf(workspace.cache)}\0`;
  if (!workspace.cache.has(CLOSE)) workspace.cache.set(CLOSE, { closeWithWorkspace: () => foldCache.dropPrefix(prefix) });
  return `${prefix}${idOf(fold)}\0${streamId}`;
}

/**
 * The command executor's own append, folded into the cached state it decided on, so the next load finds
 * it there instead of reading it back and decoding it again: `events` are the stored batch as the store
 * recorded it (the kernel's copies, parsed from the very JSON the store wrote), right after the state at
 * revision `decidedAt`. Queued behind the stream's loads like a load; it folds only when the state is
 * still at `decidedAt` (a load that ran first and read past it has them already), else nothing.
 */
export function foldAppended<S>(fold: StreamFold<S>, workspace: WorkspaceHandle, streamId: string, decidedAt: number, events: readonly RecordedEvent[]): void {
  if (events.length === 0 || events[0].streamRevision !== decidedAt + 1) return;
  const key = keyOf(fold, workspace, streamId);
  const e = foldCache.entry(key, () => fold.initialState());
  e.lock = e.lock.then(() => {
    if (e.revision !== decidedAt) return;
    for (const ev of events) {
      e.state = fold.evolve(e.state, ev);
      e.revision = ev.streamRevision;
    }
    foldCache.folded(key, e, events.length);
  });
}

export async function loadStream<S>(fold: StreamFold<S>, workspace: WorkspaceHandle, streamId: string, options: LoadOptions = {}): Promise<{ state: S; revision: number }> {
  const key = keyOf(fold, workspace, streamId);
  const e = foldCache.entry(key, () => fold.initialState());
  const arrival = (e.arrivals = (e.arrivals ?? 0) + 1);
  // Serialize catch-up per stream: evolve may mutate the cached state, so two loaders must not fold
  // the same events into it concurrently.
  const run = e.lock.then(async () => {
    // A read that began after this load was asked for has completed meanwhile (loads of a stream queue
    // here, one read at a time): its state already holds everything committed before this load was asked
    // for, as a read of its own would. So loads that queue behind one read share the next one.
    if (!options.forDecision && (e.readFrom ?? 0) >= arrival) return;
    // Nothing can have been added that this process has not seen: skip the read (PostgreSQL: no round trip).
    const fresh = workspace.store.freshness?.();
    const stamp = fresh ? (fresh.stampOf?.(streamId) ?? fresh.stamp) : undefined;
    if (fresh && options.forDecision && e.stamp === stamp) {
      if (fresh.ownRevision(streamId) <= e.revision) return;
      // Only this process's own appends are new: fold them from what it wrote.
      const tail = fresh.ownTail?.(streamId, e.revision + 1);
      if (tail) {
        for (const ev of tail) {
          e.state = fold.evolve(e.state, ev);
          e.revision = ev.streamRevision;
        }
        foldCache.folded(key, e, tail.length);
        return;
      }
    }
    e.stamp = stamp;
    const readFrom = e.arrivals!;
    let folded = 0;
    for await (const ev of workspace.store.readStream(streamId, { fromRevision: e.revision + 1, lean: fold.leanEvents })) {
      e.state = fold.evolve(e.state, ev);
      e.revision = ev.streamRevision;
      folded++;
    }
    e.readFrom = readFrom;
    foldCache.folded(key, e, folded);
  });
  e.lock = run.catch(() => undefined);
  await run;
  return { state: e.state, revision: e.revision };
}
