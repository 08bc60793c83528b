import { newUuidV7 } from '../../src/events/ids';
import type { NewEvent, RecordedEvent } from '../../src/events/envelope';
import { EventStore, ExpectedRevision, collect } from '../../src/events/store/port';

/**
 * The one conformance suite every event-store adapter runs (sqlite, postgres, kurrentdb).
 * `factory` returns a fresh, empty store for one workspace; `cleanup` is called after each test.
 */
export function eventStoreConformance(name: string, factory: () => Promise<EventStore>, cleanup: (s: EventStore) => Promise<void> = (s) => s.close()): void {
  describe(`event store conformance: ${name}`, () => {
    let store: EventStore;
    beforeEach(async () => {
      store = await factory();
    });
    afterEach(async () => {
      await cleanup(store);
    });

    const ev = (type = 'ReviewLevelSet', data: unknown = { level: 'light' }): NewEvent => ({
      eventId: newUuidV7(),
      type,
      schemaVersion: 1,
      data,
      metadata: { principal: 'user:alice', workspaceId: store.workspaceId, correlationId: 'c', causationId: null, occurredAt: '2026-01-01T00:00:00.000Z' },
    });

    test('appends keep stream order and consecutive revisions from 0', async () => {
      const a = [ev(), ev(), ev()];
      const r = await store.append('s-1', 'no_stream', a);
      expect(r.nextExpectedRevision).toBe(2);
      const read = await collect(store.readStream('s-1'));
      expect(read.map((e) => e.eventId)).toEqual(a.map((e) => e.eventId));
      expect(read.map((e) => e.streamRevision)).toEqual([0, 1, 2]);
      expect(read[0].data).toEqual({ level: 'light' });
      expect(read[0].metadata.principal).toBe('user:alice');
    });

    test('a lean read (ids and metadata left for later) yields the same events as a full read, paged, both ways, upcast', async () => {
      // 1,100 events in one stream (past a 1,000-row page), interleaved with another stream, and an old
      // schema version (WorkspaceCreated v1 is upcast to v2 on read, with the metadata it is read with).
      await store.append('other', 'no_stream', [ev('ReviewLevelSet', { level: 'deep' })]);
      await store.append('s-lean', 'no_stream', Array.from({ length: 1100 }, (_, i) => ev('ReviewLevelSet', { level: i % 2 ? 'light' : 'deep' })));
      await store.append('other', 'any', [{ ...ev('WorkspaceCreated', { id: 'w', title: 'Old' }), schemaVersion: 1 }]);
      const plain = (e: RecordedEvent) => ({ eventId: e.eventId, streamId: e.streamId, streamRevision: e.streamRevision, globalPosition: e.globalPosition, type: e.type, schemaVersion: e.schemaVersion, data: e.data, metadata: e.metadata });
      const same = async (full: AsyncIterable<RecordedEvent>, lean: AsyncIterable<RecordedEvent>) => {
        const [a, b] = [(await collect(full)).map(plain), (await collect(lean)).map(plain)];
        expect(b.length).toBe(a.length);
        expect(JSON.stringify(b) === JSON.stringify(a)).toBe(true);
        return a.length;
      };
      expect(await same(store.readAll(), store.readAll({ lean: true }))).toBe(1102);
      expect(await same(store.readAll({ after: 300, maxCount: 700 }), store.readAll({ after: 300, maxCount: 700, lean: true }))).toBe(700);
      expect(await same(store.readStream('s-lean'), store.readStream('s-lean', { lean: true }))).toBe(1100);
      expect(await same(store.readStream('s-lean', { fromRevision: 37 }), store.readStream('s-lean', { fromRevision: 37, lean: true }))).toBe(1063);
      expect(await same(store.readStream('s-lean', { direction: 'backward' }), store.readStream('s-lean', { direction: 'backward', lean: true }))).toBe(1100);
      expect(await same(store.readStream('s-lean', { direction: 'backward', fromRevision: 1050, maxCount: 1010 }), store.readStream('s-lean', { direction: 'backward', fromRevision: 1050, maxCount: 1010, lean: true }))).toBe(1010);
      const [, upcast] = await collect(store.readStream('other', { lean: true }));
      expect(upcast.schemaVersion).toBe(2);
      expect(upcast.data).toEqual({ workspaceId: 'w', name: 'Old', defaultLevel: 'balanced' });
      expect(upcast.metadata.principal).toBe('user:alice');
    });

    test('keyUnused: true for a new key, false once an event or a no-op command holds it', async () => {
      if (!store.keyUnused) return; // optional: the kernel then looks both up (findEvent, findNoopKey)
      const e = ev();
      const spare = newUuidV7();
      expect(await store.keyUnused(e.eventId)).toBe(true);
      await store.append('s-1', 'no_stream', [e]);
      expect(await store.keyUnused(e.eventId)).toBe(false);
      expect(await store.keyUnused(spare)).toBe(true);
      if (store.claimNoopKey) {
        await store.claimNoopKey(spare, { principal: 'user:alice', command: 'setReviewLevel', digest: 'd', json: '{}' });
        expect(await store.keyUnused(spare)).toBe(false);
      }
      expect(await store.keyUnused(newUuidV7())).toBe(true);
    });

    test('readStream backward and from a revision', async () => {
      const a = [ev(), ev(), ev(), ev()];
      await store.append('s-1', 'no_stream', a);
      expect((await collect(store.readStream('s-1', { direction: 'backward' }))).map((e) => e.streamRevision)).toEqual([3, 2, 1, 0]);
      expect((await collect(store.readStream('s-1', { fromRevision: 2 }))).map((e) => e.streamRevision)).toEqual([2, 3]);
      expect((await collect(store.readStream('s-1', { direction: 'backward', fromRevision: 1 }))).map((e) => e.streamRevision)).toEqual([1, 0]);
      expect((await collect(store.readStream('s-1', { maxCount: 2 }))).map((e) => e.streamRevision)).toEqual([0, 1]);
      expect(await collect(store.readStream('nope'))).toEqual([]);
    });

    test('expected revision: exact number, no_stream, stream_exists, any', async () => {
      await expect(store.append('s-1', 'stream_exists', [ev()])).rejects.toMatchObject({ code: 'wrong_expected_revision' });
      await store.append('s-1', 'no_stream', [ev()]);
      await expect(store.append('s-1', 'no_stream', [ev()])).rejects.toMatchObject({ code: 'wrong_expected_revision' });
      await expect(store.append('s-1', 5, [ev()])).rejects.toMatchObject({ code: 'wrong_expected_revision' });
      await store.append('s-1', 0, [ev()]);
      await store.append('s-1', 'stream_exists', [ev()]);
      await store.append('s-1', 'any', [ev()]);
      expect(await store.streamRevision('s-1')).toBe(3);
      expect(await store.streamRevision('s-2')).toBe(-1);
    });

    test('a refused append writes nothing', async () => {
      await store.append('s-1', 'no_stream', [ev()]);
      const before = await store.headPosition();
      await expect(store.append('s-1', 7, [ev(), ev()])).rejects.toMatchObject({ code: 'wrong_expected_revision' });
      expect(await store.headPosition()).toBe(before);
    });

    test('re-appending the same event ids is idempotent and writes nothing', async () => {
      const a = [ev(), ev()];
      const first = await store.append('s-1', 'no_stream', a);
      const again = await store.append('s-1', 'no_stream', a);
      expect(again.duplicate).toBe(true);
      expect(again.firstPosition).toBe(first.firstPosition);
      expect(again.lastPosition).toBe(first.lastPosition);
      expect((await collect(store.readAll())).length).toBe(2);
      await expect(store.append('s-2', 'no_stream', [a[0]])).rejects.toMatchObject({ code: 'duplicate_event_id' });
    });

    test('in one group commit each append stands alone: a retry of a landed append whose stream moved on, refusals before and after a row, new appends', async () => {
      const x = ev();
      const landed = await store.append('s-1', 'no_stream', [x]);
      const y = ev();
      await store.append('s-1', 0, [y]);
      const fresh = [ev(), ev()];
      // Not awaited one by one: the adapter may take them into one transaction (SQLite's group commit).
      const outcomes = await Promise.allSettled([
        store.append('s-1', 'no_stream', [x]), // the retry: answers as the original did
        store.append('s-1', 5, [ev()]), // refused before writing anything
        store.append('s-2', 'no_stream', [ev(), x]), // refused after its first row: x is stored in s-1
        store.append('s-3', 'no_stream', fresh),
      ]);
      expect(outcomes.map((o) => (o.status === 'fulfilled' ? (o.value.duplicate ? 'duplicate' : 'written') : (o.reason as { code?: string }).code))).toEqual(['duplicate', 'wrong_expected_revision', 'duplicate_event_id', 'written']);
      const retry = (outcomes[0] as PromiseFulfilledResult<Awaited<ReturnType<EventStore['append']>>>).value;
      expect(retry).toMatchObject({ firstPosition: landed.firstPosition, lastPosition: landed.lastPosition, nextExpectedRevision: 0 });
      const all = await collect(store.readAll());
      expect(all.map((e) => e.eventId)).toEqual([x.eventId, y.eventId, ...fresh.map((e) => e.eventId)]);
      expect(await store.streamRevision('s-2')).toBe(-1);
      expect(await store.streamRevision('s-3')).toBe(1);
      expect(await store.headPosition()).toBe(all[3].globalPosition);
    });

    test('in one group commit a later append sees the earlier ones: revisions follow, an id sent twice is refused the second time, rows after the refusal still land', async () => {
      const [a, b, c, d] = [ev(), ev(), ev(), ev()];
      const outcomes = await Promise.allSettled([
        store.append('s-1', 'no_stream', [a]),
        store.append('s-1', 0, [b]), // revision 0 was written by the append before it, in the same batch
        store.append('s-2', 'no_stream', [a]), // a again, to another stream: not a retry
        store.append('s-1', 1, [c]),
        store.append('s-1', 1, [d]), // the stream is at 2 by now
        store.append('s-2', 'no_stream', [d]), // d was refused above: free
      ]);
      expect(outcomes.map((o) => (o.status === 'fulfilled' ? (o.value.duplicate ? 'duplicate' : o.value.nextExpectedRevision) : (o.reason as { code?: string }).code))).toEqual([0, 1, 'duplicate_event_id', 2, 'wrong_expected_revision', 0]);
      const all = await collect(store.readAll());
      expect(all.map((e) => [e.eventId, e.streamId, e.streamRevision])).toEqual([
        [a.eventId, 's-1', 0],
        [b.eventId, 's-1', 1],
        [c.eventId, 's-1', 2],
        [d.eventId, 's-2', 0],
      ]);
    });

    test('a guarded append lands while its guard stream is at the guarded revision (-1: no such stream), and is refused with guard_moved, writing nothing, once it moved', async () => {
      if (!store.appendGuards) return; // optional: the kernel then checks a token on a read (KurrentDB)
      const [x, a, b, c] = [ev(), ev(), ev(), ev()];
      await store.append('workspace', 'no_stream', [x]);
      expect((await store.append('s-1', 'no_stream', [a], { guard: { streamId: 'workspace', revision: 0 } })).nextExpectedRevision).toBe(0);
      const refused = await store.append('s-1', 0, [b], { guard: { streamId: 'workspace', revision: -1 } }).then(
        () => null,
        (err: { code?: string; details?: unknown }) => ({ code: err.code, details: err.details }),
      );
      expect(refused).toEqual({ code: 'guard_moved', details: { streamId: 'workspace', guarded: -1, actual: 0 } });
      expect(await store.streamRevision('s-1')).toBe(0);
      expect(await store.findEvent(b.eventId, 's-1')).toBeNull();
      // The refused ids are free: the same append under a guard that holds lands.
      expect((await store.append('s-1', 0, [b], { guard: { streamId: 'other', revision: -1 } })).nextExpectedRevision).toBe(1);
      expect((await store.append('s-1', 1, [c], { guard: { streamId: 'workspace', revision: 0 } })).nextExpectedRevision).toBe(2);
      expect((await collect(store.readAll())).map((e) => e.eventId)).toEqual([x, a, b, c].map((e) => e.eventId));
    });

    test('in one group commit a guard sees an earlier append of the batch to its stream as a move; the others of the batch land as they would alone', async () => {
      if (!store.appendGuards) return;
      const [x, y, a, b, c] = [ev(), ev(), ev(), ev(), ev()];
      await store.append('workspace', 'no_stream', [x]);
      const outcomes = await Promise.allSettled([
        store.append('s-1', 'no_stream', [a], { guard: { streamId: 'workspace', revision: 0 } }), // before the move: lands
        store.append('workspace', 0, [y]), // a revocation, say
        store.append('s-2', 'no_stream', [b], { guard: { streamId: 'workspace', revision: 0 } }), // after it: refused
        store.append('s-1', 0, [c]), // unguarded, after the refusal
      ]);
      expect(outcomes.map((o) => (o.status === 'fulfilled' ? o.value.nextExpectedRevision : (o.reason as { code?: string }).code))).toEqual([0, 1, 'guard_moved', 1]);
      expect((await collect(store.readAll())).map((e) => [e.eventId, e.streamId, e.streamRevision])).toEqual([
        [x.eventId, 'workspace', 0],
        [a.eventId, 's-1', 0],
        [y.eventId, 'workspace', 1],
        [c.eventId, 's-1', 1],
      ]);
    });

    test('a group commit of 40 appends (60 events) with retries, conflicts and refusals among them answers each as it would alone, in order', async () => {
      const landed = [ev(), ev()];
      await store.append('old', 'no_stream', landed);
      const spent = ev();
      const noop = store.claimNoopKey ? await store.claimNoopKey(spent.eventId, { principal: 'user:a', command: 'c', digest: 'd', json: '{}' }) : null;
      const twice = ev();
      const calls: Array<[string, ExpectedRevision, NewEvent[]]> = [];
      const expected: Array<number | string> = [];
      const written: Array<[string, string, number]> = [];
      const revs = new Map<string, number>();
      const write = (stream: string, exp: ExpectedRevision, events: NewEvent[]) => {
        calls.push([stream, exp, events]);
        const next = (revs.get(stream) ?? -1) + events.length;
        for (const [i, e] of events.entries()) written.push([e.eventId, stream, next - events.length + 1 + i]);
        revs.set(stream, next);
        expected.push(next);
      };
      const refuse = (stream: string, exp: ExpectedRevision, events: NewEvent[], outcome: string) => {
        calls.push([stream, exp, events]);
        expected.push(outcome);
      };
      for (let i = 0; i < 40; i++) {
        const stream = `g-${i % 5}`;
        if (i === 3) refuse('old', 'no_stream', landed, 'duplicate'); // a retry of a landed append
        else if (i === 7) write(stream, 'any', [twice]);
        else if (i === 11) refuse('g-other', 'no_stream', [twice], 'duplicate_event_id'); // sent twice in the batch
        else if (i === 13) refuse(stream, 99, [ev()], 'wrong_expected_revision');
        else if (i === 17 && noop) refuse(stream, 'any', [spent], 'duplicate_event_id'); // a key a no-op spent
        else if (i === 19) refuse(stream, 'any', [ev(), landed[1]], 'duplicate_event_id'); // stored, second of two
        else if (i === 23) write(stream, revs.get(stream) ?? 'no_stream', [ev(), ev(), ev()]); // exact revision reached within the batch
        else if (i === 29) refuse('g-new', 'stream_exists', [ev()], 'wrong_expected_revision');
        else if (i % 2) write(stream, 'any', [ev(), ev()]);
        else write(stream, 'any', [ev()]);
      }
      const outcomes = await Promise.allSettled(calls.map(([s, e, events]) => store.append(s, e, events)));
      expect(outcomes.map((o) => (o.status === 'fulfilled' ? (o.value.duplicate ? 'duplicate' : o.value.nextExpectedRevision) : (o.reason as { code?: string }).code))).toEqual(expected);
      const all = await collect(store.readAll());
      expect(all.map((e) => [e.eventId, e.streamId, e.streamRevision])).toEqual([...landed.map((e, i) => [e.eventId, 'old', i]), ...written]);
      if (store.adapter !== 'kurrentdb') expect(all.map((e) => e.globalPosition)).toEqual(all.map((_, i) => all[0].globalPosition + i));
    });

    test('global positions are gap-free and increasing across streams', async () => {
      for (let i = 0; i < 20; i++) await store.append(`s-${i % 3}`, 'any', [ev(), ev()]);
      const all = await collect(store.readAll());
      expect(all).toHaveLength(40);
      const positions = all.map((e) => e.globalPosition);
      for (let i = 1; i < positions.length; i++) expect(positions[i]).toBeGreaterThan(positions[i - 1]);
      if (store.adapter !== 'kurrentdb') expect(positions).toEqual(Array.from({ length: 40 }, (_, i) => positions[0] + i));
      const tail = await collect(store.readAll({ after: positions[29] }));
      expect(tail.map((e) => e.globalPosition)).toEqual(positions.slice(30));
      expect(await store.headPosition()).toBe(positions[39]);
    });

    test('concurrent appends to one stream: exactly one wins per revision', async () => {
      await store.append('s-1', 'no_stream', [ev()]);
      const results = await Promise.allSettled(Array.from({ length: 10 }, () => store.append('s-1', 0, [ev()])));
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      expect(await store.streamRevision('s-1')).toBe(1);
    });

    test('findEvent returns a stored event by id', async () => {
      const a = ev();
      await store.append('s-1', 'no_stream', [a]);
      expect((await store.findEvent(a.eventId, 's-1'))?.eventId).toBe(a.eventId);
      expect(await store.findEvent(newUuidV7(), 's-1')).toBeNull();
    });

    test('subscribeAll catches up, then goes live, with no gap or duplicate for events appended during catch-up', async () => {
      for (let i = 0; i < 30; i++) await store.append(`s-${i % 4}`, 'any', [ev()]);
      const sub = store.subscribeAll();
      const seen: RecordedEvent[] = [];
      let appended = 30;
      const done = (async () => {
        for await (const e of sub) {
          seen.push(e);
          // Append while the subscriber is still catching up and after it went live.
          if (seen.length % 10 === 0 && appended < 60) {
            appended += 10;
            for (let j = 0; j < 10; j++) await store.append('s-live', 'any', [ev()]);
          }
          if (seen.length === 60) break;
        }
      })();
      await done;
      sub.close();
      const ids = seen.map((e) => e.globalPosition);
      expect(new Set(ids).size).toBe(60);
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
      const all = await collect(store.readAll());
      expect(ids).toEqual(all.map((e) => e.globalPosition));
    });

    test('subscribeAll resumes after a position', async () => {
      for (let i = 0; i < 10; i++) await store.append('s-1', 'any', [ev()]);
      const all = await collect(store.readAll());
      const sub = store.subscribeAll({ after: all[6].globalPosition });
      const got: number[] = [];
      for await (const e of sub) {
        got.push(e.globalPosition);
        if (got.length === 3) break;
      }
      expect(got).toEqual(all.slice(7).map((e) => e.globalPosition));
    });

    test('a live subscriber receives events appended later, and close() ends it', async () => {
      const sub = store.subscribeAll();
      const got: string[] = [];
      const loop = (async () => {
        for await (const e of sub) got.push(e.eventId);
      })();
      const a = ev();
      await store.append('s-1', 'any', [a]);
      for (let i = 0; i < 100 && got.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
      expect(got).toEqual([a.eventId]);
      sub.close();
      await loop;
    });
  });
}
