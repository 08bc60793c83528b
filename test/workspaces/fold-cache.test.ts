import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as v8 from 'node:v8';
import * as vm from 'node:vm';
import { SqliteEventStore } from '../../src/stores/sqlite/sqlite-event-store';
import { prFold } from '../../src/review/pr-state';
import { estimateBytes, foldCache, FoldCache } from '../../src/workspaces/fold-cache';
import { loadStream } from '../../src/workspaces/load-stream';
import type { WorkspaceHandle } from '../../src/workspaces/registry';
import { appendLog, generateLog } from '../readmodels/generate';
import { SlotMap } from '../../src/slots';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;
const heapMiB = (): number => {
  gc();
  gc();
  return process.memoryUsage().heapUsed / 1048576;
};
/**
 * The live heap once the collector has settled: a full collection leaves sweeping to background threads,
 * and on a loaded machine heapUsed right after gc() still counts pages of garbage not yet swept (the
 * folds leave megabytes of event objects behind). Collect, yield to let the sweepers run, and take the
 * lowest of several readings.
 */
const settledHeapMiB = async (): Promise<number> => {
  let low = Infinity;
  for (let round = 0; round < 5; round++) {
    low = Math.min(low, heapMiB());
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return low;
};

const PRS = 100_000;
const REPOS = 4;
const streamsOf = (prs: number) => Array.from({ length: prs }, (_, i) => `pr-repo${i % REPOS}-${1 + Math.floor(i / REPOS)}`);

describe('the fold cache: least recently used states out, bounded by bytes', () => {
  jest.setTimeout(300_000);
  let dir: string;
  let store: SqliteEventStore;
  let ws: WorkspaceHandle;
  const saved = foldCache.maxBytes;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-fold-cache-'));
    store = new SqliteEventStore({ file: path.join(dir, 'workspace.db'), workspaceId: 'fc', synchronous: 'OFF' });
    // ~100k PR streams with a request, findings and decisions each (the generator spreads acts over PRs at random).
    await appendLog(store, generateLog({ seed: 17, prs: PRS, principals: 20, repos: REPOS, events: 3 * PRS }), 500);
    ws = { id: 'fc', dir, store, cache: new SlotMap() };
  });
  afterAll(async () => {
    foldCache.maxBytes = saved;
    foldCache.dropPrefix('');
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('the byte estimate is within a factor of three of the heap the states really take', async () => {
    const states: unknown[] = [];
    const streams = streamsOf(4000);
    for (const s of streams) {
      let state = prFold.initialState();
      for await (const e of store.readStream(s)) state = prFold.evolve(state, e);
      states.push(state);
    }
    const estimated = states.reduce((n: number, s) => n + estimateBytes(s), 0);
    // The heap the states hold: with them, then without them (a "before" taken ahead of the folds also
    // counted whatever else became garbage meanwhile, and once came out negative).
    const withStates = await settledHeapMiB();
    states.length = 0;
    const heap = (withStates - (await settledHeapMiB())) * 1048576;
    expect(estimated / heap).toBeGreaterThan(1 / 3);
    expect(estimated / heap).toBeLessThan(3);
  });

  test('100k PR states loaded one after the other keep the cache within its budget and the heap bounded', async () => {
    foldCache.dropPrefix('');
    foldCache.maxBytes = 16 * 1024 * 1024;
    const streams = streamsOf(PRS);
    const half = Math.floor(PRS / 2);
    let loaded = 0;
    let peakBytes = 0;
    const loadRange = async (from: number, to: number) => {
      for (let i = from; i < to; i++) {
        const { revision } = await loadStream(prFold, ws, streams[i]);
        if (revision >= 0) loaded++;
        peakBytes = Math.max(peakBytes, foldCache.bytes);
      }
    };
    // Settled readings (see settledHeapMiB), as above: at the end of a full run (this suite last, 145 s) a
    // plain reading after gc() once gave 103 MiB of growth over the first half; run alone it is ~22 MiB.
    const before = await settledHeapMiB();
    await loadRange(0, half);
    const atHalf = await settledHeapMiB();
    const loadedAtHalf = loaded;
    await loadRange(half, PRS);
    const atEnd = await settledHeapMiB();
    expect(loaded).toBeGreaterThan(0.9 * PRS);
    // The budget holds after every load (one state over it at most, evicted on the next load).
    expect(peakBytes).toBeLessThan(foldCache.maxBytes + 64 * 1024);
    expect(foldCache.evictions).toBeGreaterThan(PRS / 2);
    // Bounded means the heap stops growing with the number of PRs: the second 50k states cost what the
    // cache already held after the first 50k. Unbounded, they would add their own size (estimated here,
    // > 40 MiB). An absolute bound on the whole growth is not asserted: the estimate may be off by the
    // factor of three the test above allows, and the first half also warms code and statement caches.
    const secondHalfUnbounded = (foldCache.bytes / foldCache.size) * (loaded - loadedAtHalf) / 1048576;
    expect(secondHalfUnbounded).toBeGreaterThan(40);
    expect(atEnd - atHalf).toBeLessThan(secondHalfUnbounded / 4);
    expect(atHalf - before).toBeLessThan(3 * 16 + 16);
  });

  test('an evicted state is folded again, identically, including events appended while it was out', async () => {
    const cache = foldCache;
    cache.dropPrefix('');
    cache.maxBytes = 256 * 1024;
    const [first, ...others] = streamsOf(2000);
    const warm = structuredClone((await loadStream(prFold, ws, first)).state);
    for (const s of others) await loadStream(prFold, ws, s);
    expect(cache.size).toBeLessThan(1000);
    // Evicted: the next load folds the stream again from its first event.
    const again = await loadStream(prFold, ws, first);
    expect(again.state).toEqual(warm);
    // Appended to while out of the cache: the refold equals a fold from scratch.
    for (const s of others) await loadStream(prFold, ws, s);
    const more = [...generateLog({ seed: 5, prs: 1, principals: 3, repos: 1, events: 30 })].filter((a) => a.streamId === 'pr-repo0-1').slice(1);
    for (const a of more) await store.append(first, 'any', a.events);
    const refolded = await loadStream(prFold, ws, first);
    let scratch = prFold.initialState();
    for await (const e of store.readStream(first)) scratch = prFold.evolve(scratch, e);
    expect(refolded.state).toEqual(scratch);
    expect(refolded.revision).toBeGreaterThan(again.revision);
  });

  test('states used round-robin a little past the budget are mostly kept (strict LRU evicted each just before its next use)', () => {
    // 100 PRs filed on in turn, the budget holding ~95 of their states: under LRU every load missed and
    // folded its PR again (HTTP addReviewNode fell from ~3,600 to ~100 commands/s).
    const state = () => ({ body: 'z'.repeat(1000) });
    const size = estimateBytes(state());
    const c = new FoldCache(95 * size);
    let hits = 0;
    let loads = 0;
    let misses = 0;
    for (let round = 0; round < 30; round++) {
      for (let pr = 0; pr < 100; pr++) {
        const key = `1\0pr-${pr}`;
        let fresh = false;
        const e = c.entry(key, () => ((fresh = true), state()));
        if (fresh) c.folded(key, e, 1);
        if (fresh) misses++;
        if (round >= 10) {
          loads++;
          if (!fresh) hits++;
        }
        expect(c.bytes).toBeLessThanOrEqual(95 * size);
      }
    }
    expect(hits / loads).toBeGreaterThan(0.6);
    // What /health reports of it: every load that found no state is a miss, every state pushed out an eviction.
    const stats = c.stats();
    expect(stats.misses).toBe(misses);
    expect(stats.evictions).toBe(stats.misses - stats.states);
    expect([stats.budgetBytes, stats.bytes <= stats.budgetBytes]).toEqual([95 * size, true]);
    // Recently used states are kept under skewed use: the last five used are all still there.
    for (let pr = 0; pr < 5; pr++) c.entry(`1\0pr-${pr}`, state);
    for (let i = 0; i < 200; i++) {
      const key = `1\0other-${i}`;
      c.folded(key, c.entry(key, state), 1);
      for (let pr = 0; pr < 5; pr++) expect(c.entry(`1\0pr-${pr}`, () => ({ evicted: true }))).not.toEqual({ evicted: true });
    }
  });

  test('the most recently used state stays even when it alone is over the budget; a closed workspace drops its states', () => {
    const c = new FoldCache(100);
    const a = c.entry('1\0a', () => ({ big: 'x'.repeat(1000) }));
    c.folded('1\0a', a, 1);
    expect(c.size).toBe(1);
    const b = c.entry('2\0b', () => ({ big: 'y'.repeat(1000) }));
    c.folded('2\0b', b, 1);
    expect(c.size).toBe(1);
    expect(c.entry('2\0b', () => ({ big: '' }))).toBe(b);
    c.dropPrefix('2\0');
    expect([c.size, c.bytes]).toEqual([0, 0]);
  });
});
