import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { newUuidV7 } from '../../src/events/ids';
import type { AppendResult } from '../../src/events/store/port';
import type { NewEvent, RecordedEvent } from '../../src/events/envelope';
import { chainHash, genesisHash } from '../../src/events/chain';
import { SqliteEventStore } from '../../src/stores/sqlite/sqlite-event-store';

const event = (n: number): NewEvent => ({
  eventId: newUuidV7(),
  type: 'ReviewLevelSet',
  schemaVersion: 1,
  data: { level: n % 2 ? 'light' : 'thorough' },
  metadata: { principal: 'user:test', workspaceId: 'ws', correlationId: 'c', causationId: null, occurredAt: '2026-12-05T00:00:00Z' },
});

async function all(store: SqliteEventStore): Promise<RecordedEvent[]> {
  const out: RecordedEvent[] = [];
  for await (const e of store.readAll()) out.push(e);
  return out;
}

/** Every stored hash recomputed from the one before it (the genesis for position 1). */
async function chainHolds(store: SqliteEventStore): Promise<number> {
  let prev = genesisHash('ws');
  let n = 0;
  for (const row of await store.readChainPage(0, 10_000)) {
    expect(row.position).toBe(++n);
    expect(row.hash).toBe(chainHash(prev, row));
    prev = row.hash as string;
  }
  return n;
}

describe('SQLite store: a lone appender flushes without waiting a turn, callers of one turn still get exact answers', () => {
  let dir: string;
  let store: SqliteEventStore;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-lone-flush-'));
    store = new SqliteEventStore({ file: path.join(dir, 'workspace.db'), workspaceId: 'ws', synchronous: 'NORMAL' });
  });
  afterEach(async () => {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('80 sequential appends (past the lone-flush switch), then five callbacks of one turn, one of them refused', async () => {
    for (let i = 0; i < 80; i++) {
      const r = await store.append('s-seq', i === 0 ? 'no_stream' : i - 1, [event(i)]);
      expect(r).toEqual({ streamId: 's-seq', nextExpectedRevision: i, firstPosition: i + 1, lastPosition: i + 1, duplicate: false });
    }
    // Five separate callbacks of the same turn (as an HTTP server's requests): whether they share one
    // transaction or not, they are applied in order, each answered as it would be alone.
    // Each caller handles its answer at once (as a request handler awaiting it does).
    const settle = (p: Promise<AppendResult>) => Promise.allSettled([p]).then(([o]) => o);
    const outcomes = await new Promise<Array<PromiseSettledResult<AppendResult>>>((resolve) => {
      const calls: Array<Promise<PromiseSettledResult<AppendResult>>> = [];
      const appends: Array<() => Promise<AppendResult>> = [
        () => store.append('s-a', 'no_stream', [event(1)]),
        () => store.append('s-seq', 79, [event(2), event(3)]),
        () => store.append('s-seq', 79, [event(4)]), // the revision moved in the callback before: refused
        () => store.append('s-b', 'no_stream', [event(5)]),
        () => store.append('s-a', 0, [event(6)]),
      ];
      for (const a of appends) setImmediate(() => calls.push(settle(a())));
      setImmediate(() => void Promise.all(calls).then(resolve));
    });
    expect(outcomes.map((o) => (o.status === 'fulfilled' ? o.value : (o.reason as { code?: string }).code))).toEqual([
      { streamId: 's-a', nextExpectedRevision: 0, firstPosition: 81, lastPosition: 81, duplicate: false },
      { streamId: 's-seq', nextExpectedRevision: 81, firstPosition: 82, lastPosition: 83, duplicate: false },
      'wrong_expected_revision',
      { streamId: 's-b', nextExpectedRevision: 0, firstPosition: 84, lastPosition: 84, duplicate: false },
      { streamId: 's-a', nextExpectedRevision: 1, firstPosition: 85, lastPosition: 85, duplicate: false },
    ]);
    const log = await all(store);
    expect(log.map((e) => `${e.globalPosition}:${e.streamId}@${e.streamRevision}`).slice(78)).toEqual([
      '79:s-seq@78',
      '80:s-seq@79',
      '81:s-a@0',
      '82:s-seq@80',
      '83:s-seq@81',
      '84:s-b@0',
      '85:s-a@1',
    ]);
    expect(await chainHolds(store)).toBe(85);
  });

  test('a lone retry of a landed append answers as the original did; findEvent finds an event by any hint or none', async () => {
    const x = event(1);
    const first = await store.append('s-x', 'no_stream', [x]);
    await store.append('s-y', 'no_stream', [event(2)]);
    expect(await store.append('s-x', 'no_stream', [x])).toEqual({ ...first, duplicate: true });
    expect((await store.findEvent(x.eventId, 's-x'))?.streamRevision).toBe(0);
    expect((await store.findEvent(x.eventId, 's-y'))?.streamId).toBe('s-x');
    expect((await store.findEvent(x.eventId))?.globalPosition).toBe(1);
    expect(await store.findEvent(newUuidV7(), 's-x')).toBeNull();
    expect(await store.keyUnused(x.eventId)).toBe(false);
    expect(await store.keyUnused(newUuidV7())).toBe(true);
    // Another connection's commit drops this one's caches; the look-ups answer the same from the table.
    const other = new SqliteEventStore({ file: path.join(dir, 'workspace.db'), workspaceId: 'ws', synchronous: 'NORMAL' });
    await other.append('s-x', 0, [event(3)]);
    await other.close();
    expect((await store.findEvent(x.eventId, 's-x'))?.streamRevision).toBe(0);
    expect(await store.append('s-x', 1, [event(4)])).toEqual({ streamId: 's-x', nextExpectedRevision: 2, firstPosition: 4, lastPosition: 4, duplicate: false });
    expect(await chainHolds(store)).toBe(4);
  });
});
