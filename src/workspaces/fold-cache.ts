/**
 * Folded stream states kept warm between loads (the command executor and the readers at the edge),
 * least recently used first out, bounded by an estimate of their bytes — one budget for the whole
 * process, so a server holding 100k PR states (or many workspaces) keeps bounded memory. An evicted
 * state is simply folded again from its stream on the next load: same events, same fold, same state.
 *
 * Budget: `REVIEW_LEDGER_FOLD_CACHE_BYTES` (default 128 MiB); the most recently used state is always
 * kept, even when it alone exceeds the budget.
 */
export const DEFAULT_FOLD_CACHE_BYTES = 128 * 1024 * 1024;

export interface CachedFold<S = unknown> {
  revision: number;
  /** The store's freshness stamp when this state was last caught up (EventStore.freshness). */
  stamp?: number;
  state: S;
  lock: Promise<void>;
  /** Loads of this state so far, numbered as they are asked for (loadStream). */
  arrivals?: number;
  /** The `arrivals` count when the last read that completed began: loads numbered up to it asked before it. */
  readFrom?: number;
  /** Estimated bytes of `state`, and the events folded when it was last measured. */
  bytes: number;
  events: number;
  measuredAt: number;
}

/**
 * Rough V8 heap bytes of a plain data value (strings, numbers, arrays, objects, Maps, Sets), each
 * shared object counted once. Not exact — it ranks and bounds states, it does not account every byte
 * (test/workspaces/fold-cache.test.ts checks it against the heap the states really take).
 */
export function estimateBytes(value: unknown): number {
  const seen = new Set<object>();
  let bytes = 0;
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    switch (typeof v) {
      case 'string':
        bytes += 16 + v.length;
        break;
      case 'number':
      case 'boolean':
      case 'bigint':
        bytes += 8;
        break;
      case 'object': {
        if (v === null || seen.has(v)) break;
        seen.add(v);
        if (Array.isArray(v)) {
          bytes += 16 + 8 * v.length;
          for (const x of v) stack.push(x);
        } else if (v instanceof Map) {
          bytes += 32 + 24 * v.size;
          for (const [k, x] of v) stack.push(k, x);
        } else if (v instanceof Set) {
          bytes += 32 + 16 * v.size;
          for (const x of v) stack.push(x);
        } else {
          const keys = Object.keys(v);
          bytes += 24 + 16 * keys.length;
          for (const k of keys) stack.push((v as Record<string, unknown>)[k]);
        }
        break;
      }
      default:
        break;
    }
  }
  return bytes;
}

export class FoldCache {
  private readonly entries = new Map<string, CachedFold>();
  private total = 0;
  evictions = 0;

  constructor(public maxBytes: number) {}

  get bytes(): number {
    return this.total;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The entry (moved to most recently used), or a fresh one at revision -1. */
  entry<S>(key: string, initial: () => S): CachedFold<S> {
    let e = this.entries.get(key) as CachedFold<S> | undefined;
    if (e) {
      this.entries.delete(key);
      this.entries.set(key, e);
      return e;
    }
    e = { revision: -1, state: initial(), lock: Promise.resolve(), bytes: 0, events: 0, measuredAt: 0 };
    this.entries.set(key, e as CachedFold);
    return e;
  }

  /**
   * After `folded` more events went into `e`: re-estimates its size (walking the state only when it
   * grew by a quarter since the last walk, so the cost per event stays constant) and evicts the least
   * recently used states until the budget holds.
   */
  folded(key: string, e: CachedFold, folded: number): void {
    if (folded === 0 || this.entries.get(key) !== e) return;
    const before = e.bytes;
    e.events += folded;
    if (e.measuredAt === 0 || e.events >= e.measuredAt * 1.25 + 4) {
      e.bytes = estimateBytes(e.state);
      e.measuredAt = e.events;
    } else e.bytes += Math.round((e.bytes / Math.max(1, e.measuredAt)) * folded);
    this.total += e.bytes - before;
    this.evict();
  }

  private evict(): void {
    if (this.total <= this.maxBytes) return;
    for (const [k, x] of this.entries) {
      if (this.total <= this.maxBytes || this.entries.size <= 1) break;
      this.entries.delete(k);
      this.total -= x.bytes;
      this.evictions++;
    }
  }

  /** Drops every entry whose key starts with `prefix` (a closed workspace's states). */
  dropPrefix(prefix: string): void {
    for (const [k, x] of this.entries) {
      if (!k.startsWith(prefix)) continue;
      this.entries.delete(k);
      this.total -= x.bytes;
    }
  }
}

const budget = Number(process.env.REVIEW_LEDGER_FOLD_CACHE_BYTES);
/** The process's cache of folded stream states (src/workspaces/load-stream.ts). */
export const foldCache = new FoldCache(Number.isFinite(budget) && budget > 0 ? budget : DEFAULT_FOLD_CACHE_BYTES);
