import { Client } from 'pg';
import { newUuidV7 } from '../../src/events/ids';
import type { NewEvent, RecordedEvent } from '../../src/events/envelope';
import { collect } from '../../src/events/store/port';
import { PostgresBackend } from '../../src/stores/postgres/backend';
import { PostgresEventStore } from '../../src/stores/postgres/postgres-event-store';
import { DATABASE_URL, dropSchema, uniqueSchema, whenPostgres } from './pg-support';

const ev = (workspaceId: string, writer: number): NewEvent => ({
  eventId: newUuidV7(),
  type: 'ReviewLevelSet',
  schemaVersion: 1,
  data: { level: 'light', writer },
  metadata: { principal: 'agent:gap', workspaceId, correlationId: 'c', causationId: null, occurredAt: '2026-01-01T00:00:00.000Z' },
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

whenPostgres('sequence-gap', () => {
  const schema = uniqueSchema('rl_gap');
  const backends: PostgresBackend[] = [];
  // Each writer gets its own backend (pool + LISTEN connection), as a separate process would.
  const openBackend = async () => {
    const b = await PostgresBackend.open({ connectionString: DATABASE_URL, schema, poolSize: 2 });
    backends.push(b);
    return b;
  };
  afterAll(async () => {
    for (const b of backends) await b.close();
    await dropSchema(schema);
  });

  test('8 writers with random sleeps inside their transactions: a live subscriber and a polling reader see exactly the final table order, nothing missed', async () => {
    const ws = 'gap-ws';
    const writers = 8;
    const perWriter = 30;
    const total = writers * perWriter;
    const stores = await Promise.all(
      Array.from({ length: writers }, async () =>
        new PostgresEventStore({
          backend: await openBackend(),
          workspaceId: ws,
          // Rows written, positions assigned, head locked — and the commit is late by a random amount.
          beforeCommit: async (client) => {
            await client.query('SELECT pg_sleep($1)', [Math.random() * 0.015]);
          },
        }),
      ),
    );
    const reader = await PostgresEventStore.open({ backend: await openBackend(), workspaceId: ws });

    const live: RecordedEvent[] = [];
    const sub = reader.subscribeAll();
    const liveDone = (async () => {
      for await (const e of sub) {
        live.push(e);
        if (live.length === total) break;
      }
    })();

    // A projection that polls `after: checkpoint` is exactly the reader a gap would fool.
    const polled: RecordedEvent[] = [];
    // Single appends plus the group-committed pairs: the poller reads until it has every row, so a
    // read that ran just before the last commit is followed by one that sees it.
    const expectedTotal = total + writers * Math.ceil(perWriter / 5) * 2;
    let writing = true;
    const poller = (async () => {
      let checkpoint = 0;
      while (writing || polled.length < expectedTotal) {
        for await (const e of reader.readAll({ after: checkpoint })) {
          polled.push(e);
          checkpoint = e.globalPosition;
        }
        await sleep(Math.random() * 3);
      }
    })();

    await Promise.all(
      stores.map(async (store, w) => {
        for (let i = 0; i < perWriter; i++) {
          // Two appends in flight per writer: some transactions also carry a group-committed batch.
          await Promise.all([store.append(`s-${w}-${i % 3}`, 'any', [ev(ws, w)]), i % 5 === 0 ? store.append(`s-${w}-x`, 'any', [ev(ws, w), ev(ws, w)]) : null]);
          await sleep(Math.random() * 4);
        }
      }),
    );
    writing = false;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([liveDone, new Promise((r) => (timer = setTimeout(r, 20_000)))]);
    clearTimeout(timer);
    sub.close();
    await poller;

    const c = new Client({ connectionString: DATABASE_URL });
    await c.connect();
    const table = (await c.query(`SELECT event_id, global_position::int AS p FROM "${schema}".events WHERE workspace_id = $1 ORDER BY global_position`, [ws])).rows as Array<{ event_id: string; p: number }>;
    await c.end();

    expect(table).toHaveLength(expectedTotal);
    expect(table.map((r) => r.p)).toEqual(Array.from({ length: expectedTotal }, (_, i) => i + 1));
    expect(live.map((e) => e.eventId)).toEqual(table.slice(0, total).map((r) => r.event_id));
    expect(polled.map((e) => e.eventId)).toEqual(table.map((r) => r.event_id));
    for (const s of stores) await s.close();
    await reader.close();
  }, 60_000);

  test('an append that commits late holds back the next position: a reader never sees N+1 before N', async () => {
    const ws = 'late-ws';
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let entered!: () => void;
    const inside = new Promise<void>((r) => (entered = r));
    const slow = new PostgresEventStore({
      backend: await openBackend(),
      workspaceId: ws,
      beforeCommit: async () => {
        entered();
        await held;
      },
    });
    const fast = await PostgresEventStore.open({ backend: await openBackend(), workspaceId: ws });
    const first = ev(ws, 1);
    const second = ev(ws, 2);
    const slowAppend = slow.append('a', 'any', [first]);
    await inside;
    let fastDone = false;
    const fastAppend = fast.append('b', 'any', [second]).then((r) => ((fastDone = true), r));
    await sleep(300);
    // While the first transaction is open, nothing is visible and the second writer waits for it.
    expect(fastDone).toBe(false);
    expect(await collect(fast.readAll())).toEqual([]);
    release();
    const [r1, r2] = await Promise.all([slowAppend, fastAppend]);
    expect([r1.firstPosition, r2.firstPosition]).toEqual([1, 2]);
    expect((await collect(fast.readAll())).map((e) => e.eventId)).toEqual([first.eventId, second.eventId]);
    await slow.close();
    await fast.close();
  });

  test('control: positions from a sequence (no serialization) DO let a polling reader skip a late commit', async () => {
    // Proves the scenario above is a real hazard: the naive design fails it deterministically.
    const table = `"${schema}".naive`;
    const a = new Client({ connectionString: DATABASE_URL });
    const b = new Client({ connectionString: DATABASE_URL });
    await a.connect();
    await b.connect();
    await a.query(`CREATE TABLE ${table} (position bigserial PRIMARY KEY, payload text NOT NULL)`);
    await a.query('BEGIN');
    await a.query(`INSERT INTO ${table} (payload) VALUES ('late')`); // takes position 1, commits later
    await b.query(`INSERT INTO ${table} (payload) VALUES ('early')`); // position 2, autocommit
    const poll = async (after: number) => (await b.query(`SELECT position::int AS p, payload FROM ${table} WHERE position > $1 ORDER BY position`, [after])).rows as Array<{ p: number; payload: string }>;
    const seen = await poll(0);
    const checkpoint = seen[seen.length - 1].p;
    await a.query('COMMIT');
    seen.push(...(await poll(checkpoint)));
    expect(seen.map((r) => r.payload)).toEqual(['early']); // 'late' is never seen by this reader
    expect((await poll(0)).map((r) => r.payload)).toEqual(['late', 'early']);
    await a.end();
    await b.end();
  });

  test('a subscriber on one process sees appends made through another (LISTEN/NOTIFY + catch-up), in order', async () => {
    const ws = 'xproc-ws';
    const producer = await PostgresEventStore.open({ backend: await openBackend(), workspaceId: ws });
    const consumer = await PostgresEventStore.open({ backend: await openBackend(), workspaceId: ws });
    const other = await PostgresEventStore.open({ backend: await openBackend(), workspaceId: 'another-ws' });
    const sub = consumer.subscribeAll();
    const got: string[] = [];
    const loop = (async () => {
      for await (const e of sub) got.push(e.eventId);
    })();
    const sent: string[] = [];
    for (let i = 0; i < 20; i++) {
      const e = ev(ws, 0);
      sent.push(e.eventId);
      await producer.append('s', 'any', [e]);
      await other.append('s', 'any', [ev('another-ws', 0)]);
      if (i % 7 === 0) await sleep(20); // some arrive while the subscriber idles, some in bursts
    }
    for (let i = 0; i < 1000 && got.length < 20; i++) await sleep(10); // bound, not a target: loaded CI machines are slow
    sub.close();
    await loop;
    expect(got).toEqual(sent);
    // Workspaces share the table but never each other's rows or positions.
    expect((await collect(other.readAll())).map((e) => e.globalPosition)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(await consumer.headPosition()).toBe(20);
    await Promise.all([producer.close(), consumer.close(), other.close()]);
  });

  test('a commit whose NOTIFY never came (the writer died in between) still reaches subscribers through the heads poll', async () => {
    const ws = 'silent-ws';
    const consumer = await PostgresEventStore.open({ backend: await openBackend(), workspaceId: ws });
    const sub = consumer.subscribeAll();
    const got: string[] = [];
    const loop = (async () => {
      for await (const e of sub) got.push(e.eventId);
    })();
    await sleep(1500); // the poller has seen the empty head
    // The append function alone, as a writer that committed and then died before announcing it.
    const e = ev(ws, 0);
    const c = new Client({ connectionString: DATABASE_URL });
    await c.connect();
    await c.query(`SELECT * FROM "${schema}".append_batch($1, $2::text[], $3::bigint[], $4::int[], $5::text[], $6::text[], $7::int[], $8::text[], $9::text[])`, [
      ws, ['s'], [-3], [1], [e.eventId], [e.type], [1], [JSON.stringify(e.data)], [JSON.stringify(e.metadata)],
    ]);
    await c.end();
    for (let i = 0; i < 150 && got.length === 0; i++) await sleep(100); // bound, not a target
    expect(got).toEqual([e.eventId]);
    sub.close();
    await loop;
    await consumer.close();
  });

  test('migrations are idempotent and safe when several processes start at once', async () => {
    const fresh = uniqueSchema('rl_mig');
    try {
      const opened = await Promise.all(Array.from({ length: 4 }, () => PostgresBackend.open({ connectionString: DATABASE_URL, schema: fresh, poolSize: 1 })));
      const again = await PostgresBackend.open({ connectionString: DATABASE_URL, schema: fresh, poolSize: 1 });
      const store = new PostgresEventStore({ backend: again, workspaceId: 'm' });
      await store.append('s', 'no_stream', [ev('m', 0)]);
      expect(await store.streamRevision('s')).toBe(0);
      for (const b of [...opened, again]) await b.close();
    } finally {
      await dropSchema(fresh);
    }
  });
});
