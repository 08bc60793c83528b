import type { Client } from 'pg';
import type { StreamFold } from '../../src/events/kernel-types';
import type { EventStore } from '../../src/events/store/port';
import { SlotMap } from '../../src/slots';
import { PostgresBackend } from '../../src/stores/postgres/backend';
import { PostgresEventStore } from '../../src/stores/postgres/postgres-event-store';
import { loadStream } from '../../src/workspaces/load-stream';
import type { WorkspaceHandle } from '../../src/workspaces/registry';
import { DATABASE_URL, dropSchema, levelSetEvent, uniqueSchema, until, whenPostgres } from './pg-support';

/**
 * The PostgreSQL store's freshness (EventStore.freshness): a decision's load skips the read when nothing
 * can have been added that this process has not seen, and a subscription takes its own appends without
 * a read. What users rely on: a read for a client always sees another server's append; a decision on a
 * state that missed one is refused at append and the next decision reads it; subscriptions stay gap-free.
 */
whenPostgres('postgres freshness', () => {
  const schema = uniqueSchema('rl_fresh');
  let a: PostgresBackend;
  let b: PostgresBackend;
  let n = 0;
  const ws = () => `fresh-${++n}`;
  beforeAll(async () => {
    a = await PostgresBackend.open({ connectionString: DATABASE_URL, schema, poolSize: 4 });
    b = await PostgresBackend.open({ connectionString: DATABASE_URL, schema, poolSize: 4 });
    await a.ensureListening();
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await dropSchema(schema);
  });

  const ev = (workspaceId: string) => levelSetEvent(workspaceId);
  const ids: StreamFold<string[]> = { initialState: () => [], evolve: (s, e) => (s.push(e.eventId), s) };
  const handle = (store: EventStore): WorkspaceHandle => ({ id: store.workspaceId, dir: '/nonexistent', store, cache: new SlotMap() });

  it("folds its own appends without a read, and a client's read sees another server's append at once", async () => {
    const id = ws();
    const sa = await PostgresEventStore.open({ backend: a, workspaceId: id });
    const sb = await PostgresEventStore.open({ backend: b, workspaceId: id });
    const h = handle(sa);
    const mine = ev(id);
    await sa.append('s', 'no_stream', [mine]);
    expect(sa.freshness()!.ownRevision('s')).toBe(0);
    expect((await loadStream(ids, h, 's', { forDecision: true })).state).toEqual([mine.eventId]);
    const theirs = ev(id);
    await sb.append('s', 0, [theirs]);
    // A read that answers a client never relies on announcements.
    expect((await loadStream(ids, h, 's')).state).toEqual([mine.eventId, theirs.eventId]);
    await sa.close();
    await sb.close();
  });

  it('a decision on a state that missed another server\'s append is refused, and the next one reads it', async () => {
    const id = ws();
    const sa = await PostgresEventStore.open({ backend: a, workspaceId: id });
    const sb = await PostgresEventStore.open({ backend: b, workspaceId: id });
    const h = handle(sa);
    const first = ev(id);
    await sa.append('s', 'no_stream', [first]);
    const { revision } = await loadStream(ids, h, 's', { forDecision: true });
    const theirs = ev(id);
    await sb.append('s', revision, [theirs]);
    // Decided on revision 0 whether or not the announcement has arrived: the store arbitrates.
    await expect(sa.append('s', revision, [ev(id)])).rejects.toMatchObject({ code: 'wrong_expected_revision' });
    expect((await loadStream(ids, h, 's', { forDecision: true })).state).toEqual([first.eventId, theirs.eventId]);
    await sa.close();
    await sb.close();
  });

  it("an announced append by another server is in the next decision's load (read, or folded from the rows the announcement carried)", async () => {
    const id = ws();
    const sa = await PostgresEventStore.open({ backend: a, workspaceId: id });
    const sb = await PostgresEventStore.open({ backend: b, workspaceId: id });
    const h = handle(sa);
    await sa.append('s', 'no_stream', [ev(id)]);
    await loadStream(ids, h, 's', { forDecision: true });
    const stamp = sa.freshness()!.stamp;
    const theirs = ev(id);
    await sb.append('s', 0, [theirs]);
    await until(() => sa.freshness()!.stamp !== stamp || sa.freshness()!.ownRevision('s') === 1);
    expect((await loadStream(ids, h, 's', { forDecision: true })).state.at(-1)).toBe(theirs.eventId);
    await sa.close();
    await sb.close();
  });

  /** Holds back the notifications `backend`'s LISTEN connection receives until `release` is called. */
  function holdAnnouncements(backend: PostgresBackend): { held: () => number; release: () => void } {
    const listener = (backend as unknown as { listener: Client }).listener;
    const emit = listener.emit;
    const queue: unknown[][] = [];
    listener.emit = function (this: Client, name: string | symbol, ...args: unknown[]) {
      if (name !== 'notification') return emit.call(this, name, ...args);
      queue.push(args);
      return true;
    } as typeof listener.emit;
    return {
      held: () => queue.length,
      release: () => {
        listener.emit = emit;
        for (const args of queue.splice(0)) emit.call(listener, 'notification', ...args);
      },
    };
  }

  /** A subscription on `store` collecting positions, and how often it read the log instead of taking known rows. */
  function watch(store: PostgresEventStore) {
    let reads = 0;
    const readPage = store.readPage.bind(store);
    store.readPage = (after, limit, until) => {
      reads++;
      return readPage(after, limit, until);
    };
    const got: number[] = [];
    const sub = store.subscribeAll({ after: 0 });
    const loop = (async () => {
      for await (const e of sub) got.push(e.globalPosition);
    })();
    return { got, reads: () => reads, close: async () => (sub.close(), await loop) };
  }

  it("a subscription waits at another server's commit learned of from its own append's answer, and takes its rows from the announcement, not from a read", async () => {
    const id = ws();
    // Waits as long as the test needs: what is checked is what it reads, not how fast the rows come.
    const sa = new PostgresEventStore({ backend: a, workspaceId: id, rowsOnTheirWayMs: 60_000 });
    const sb = await PostgresEventStore.open({ backend: b, workspaceId: id });
    const w = watch(sa);
    try {
      await sa.append('x', 'no_stream', [ev(id)]);
      await until(() => w.got.length === 1);
      const readsBefore = w.reads(); // its catch-up from 0
      const hold = holdAnnouncements(a);
      await sb.append('y', 'no_stream', [ev(id), ev(id)]);
      await until(() => hold.held() > 0);
      // Its own append's answer says positions 2 and 3 were appended by another server, whose announcement
      // is held back: the subscription gets nothing past 1 yet, and reads nothing.
      await sa.append('x', 0, [ev(id)]);
      await new Promise((r) => setTimeout(r, 200));
      expect(w.got).toEqual([1]);
      hold.release();
      await until(() => w.got.length === 4);
      expect(w.got).toEqual([1, 2, 3, 4]);
      expect(w.reads()).toBe(readsBefore);
    } finally {
      await w.close();
      await sa.close();
      await sb.close();
    }
  });

  it('an announcement that never comes: the subscription reads those positions once its wait runs out, in order, nothing missed', async () => {
    const id = ws();
    const sa = new PostgresEventStore({ backend: a, workspaceId: id, rowsOnTheirWayMs: 100 });
    const sb = await PostgresEventStore.open({ backend: b, workspaceId: id });
    const w = watch(sa);
    const hold = holdAnnouncements(a);
    try {
      await sa.append('x', 'no_stream', [ev(id)]);
      await until(() => w.got.length === 1);
      const readsBefore = w.reads();
      await sb.append('y', 'no_stream', [ev(id), ev(id)]);
      await sa.append('x', 0, [ev(id)]);
      await until(() => w.got.length === 4);
      expect(w.got).toEqual([1, 2, 3, 4]);
      expect(w.reads()).toBeGreaterThan(readsBefore);
    } finally {
      hold.release();
      await w.close();
      await sa.close();
      await sb.close();
    }
  });

  it('a subscription gets its own and other servers\' appends in order, without a gap', async () => {
    const id = ws();
    const sa = await PostgresEventStore.open({ backend: a, workspaceId: id });
    const sb = await PostgresEventStore.open({ backend: b, workspaceId: id });
    const got: number[] = [];
    const sub = sa.subscribeAll({ after: 0 });
    const reading = (async () => {
      for await (const e of sub) {
        got.push(e.globalPosition);
        if (got.length === 6) break;
      }
    })();
    await sa.append('x', 'no_stream', [ev(id)]);
    await sb.append('y', 'no_stream', [ev(id), ev(id)]);
    await sa.append('x', 0, [ev(id)]);
    await sb.append('y', 1, [ev(id)]);
    await sa.append('z', 'no_stream', [ev(id)]);
    await reading;
    sub.close();
    expect(got).toEqual([1, 2, 3, 4, 5, 6]);
    await sa.close();
    await sb.close();
  });
});
