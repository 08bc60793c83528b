/**
 * Folded stream states kept warm between loads (the command executor and the readers at the edge),
 * bounded by an estimate of their bytes — one budget for the whole process, so a server holding 100k PR
 * states (or many workspaces) keeps bounded memory. An evicted state is simply folded again from its
 * stream on the next load: same events, same fold, same state.
 *
 * Which state goes: one picked at random among the less recently used half, not the least recently used
 * one. Strict LRU misses on every load once the states in use round-robin past the budget (each load
 * evicts the state the next one needs): measured, `addReviewNode` over HTTP on 100 PRs fell from ~3,600
 * to ~100 commands/s once their states passed 128 MiB, every command folding its PR again. Random among
 * the older half keeps most of such a working set (a simulation: 82 % of loads hit where LRU hit 0 %)
 * and nearly LRU's hits under skewed use (96 vs 97 %); the state in use is never the one evicted. The
 * choice is a fixed pseudo-random sequence, so a process's evictions are reproducible.
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
  /** The cache's use clock at this entry's last use, and its place in the cache's array of entries. */
  used?: number;
  slot?: number;
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
  /** The entries' keys in no order, for picking one at random (entry.slot is its index). */
  private readonly keys: string[] = [];
  private total = 0;
  /** Counts uses: an entry used fewer than size/2 uses ago is in the more recently used half (roughly). */
  private clock = 0;
  private seed = 0x9e3779b9;
  evictions = 0;
  /** Loads that found no state for their stream (its first use in this process, or evicted since). */
  misses = 0;

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
      e.used = ++this.clock;
      return e;
    }
    this.misses++;
    e = { revision: -1, state: initial(), lock: Promise.resolve(), bytes: 0, events: 0, measuredAt: 0, used: ++this.clock, slot: this.keys.length };
    this.entries.set(key, e as CachedFold);
    this.keys.push(key);
    return e;
  }

  /**
   * After `folded` more events went into `e`: re-estimates its size (walking the state only when it
   * doubled in events since the last walk, so the cost per event stays constant: ~one walk of a node per
   * event folded; between walks the size grows by the bytes per event last measured) and evicts states of the
   * less recently used half until the budget holds.
   */
  folded(key: string, e: CachedFold, folded: number): void {
    if (folded === 0 || this.entries.get(key) !== e) return;
    const before = e.bytes;
    e.events += folded;
    if (e.measuredAt === 0 || e.events >= e.measuredAt * 2 + 4) {
      e.bytes = estimateBytes(e.state);
      e.measuredAt = e.events;
    } else e.bytes += Math.round((e.bytes / Math.max(1, e.measuredAt)) * folded);
    this.total += e.bytes - before;
    this.evict();
  }

  private evict(): void {
    while (this.total > this.maxBytes && this.entries.size > 1) {
      const key = this.pickVictim();
      const x = this.entries.get(key)!;
      this.remove(key, x);
      this.evictions++;
    }
  }

  /**
   * A key of the less recently used half: random slots are tried until one was last used at least size/2
   * uses ago (a few tries: half the slots qualify, give or take); after eight tries, the least recently
   * used of those tried. Never the entry used last (the state being loaded), while there are others.
   */
  private pickVictim(): string {
    const n = this.keys.length;
    let best: string | undefined;
    let bestUsed = Infinity;
    for (let tries = 0; tries < 8; tries++) {
      const key = this.keys[this.random() % n];
      const used = this.entries.get(key)!.used ?? 0;
      if (used === this.clock) continue;
      if (this.clock - used >= n / 2) return key;
      if (used < bestUsed) {
        best = key;
        bestUsed = used;
      }
    }
    if (best !== undefined) return best;
    // Eight draws all hit the entry in use (a cache of two or three): any other.
    return this.keys.find((k) => this.entries.get(k)!.used !== this.clock)!;
  }

  /** xorshift32: a fixed sequence, so evictions are reproducible run to run. */
  private random(): number {
    let x = this.seed;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.seed = x >>> 0;
    return this.seed;
  }

  private remove(key: string, x: CachedFold): void {
    this.entries.delete(key);
    this.total -= x.bytes;
    // Swap-remove from the key array: O(1).
    const slot = x.slot!;
    const last = this.keys.pop()!;
    if (last !== key) {
      this.keys[slot] = last;
      this.entries.get(last)!.slot = slot;
    }
  }

  /** Counts for /health: states held, their estimated bytes against the budget, evictions and misses so far. */
  stats(): { states: number; bytes: number; budgetBytes: number; evictions: number; misses: number } {
    return { states: this.entries.size, bytes: this.total, budgetBytes: this.maxBytes, evictions: this.evictions, misses: this.misses };
  }

  /** Drops every entry whose key starts with `prefix` (a closed workspace's states). */
  dropPrefix(prefix: string): void {
    for (const [k, x] of [...this.entries]) if (k.startsWith(prefix)) this.remove(k, x);
  }

}

const budget = Number(process.env.REVIEW_LEDGER_FOLD_CACHE_BYTES);
/** The process's cache of folded stream states (src/workspaces/load-stream.ts). */
export const foldCache = new FoldCache(Number.isFinite(budget) && budget > 0 ? budget : DEFAULT_FOLD_CACHE_BYTES);
