import { Client } from 'pg';
import { PostgresBackend } from '../../src/stores/postgres/backend';
import { PostgresEventStore } from '../../src/stores/postgres/postgres-event-store';
import { DATABASE_URL, dropSchema, levelSetEvent, uniqueSchema, until, whenPostgres } from './pg-support';
import { statementCounter } from './pg-statements';

/**
 * A server alone on the channel announces nothing (issue 35: announcing was most of what one PostgreSQL
 * server spent beyond its appends). "Alone": it has listened for `aloneAfterMs` and heard no other
 * process — every listening process says hello when its LISTEN starts and once a second. What users rely
 * on: a second server that starts listening is announced to again, and every commit reaches its
 * subscriptions, those made while the first one was silent included.
 */
whenPostgres('postgres: a lone server announces nothing', () => {
  const schema = uniqueSchema('rl_alone');
  const counter = statementCounter(schema);
  let n = 0;
  beforeAll(() => counter.install());
  afterAll(async () => {
    counter.restore();
    await dropSchema(schema);
  });

  const ev = (workspaceId: string) => levelSetEvent(workspaceId);
  /** A plain LISTEN on the channel (says no hello): every announcement sent, by workspace. */
  const eavesdrop = async (channel: string) => {
    const heard: string[] = [];
    const c = new Client({ connectionString: DATABASE_URL });
    await c.connect();
    c.on('notification', (m) => heard.push(m.payload ?? ''));
    await c.query(`LISTEN "${channel}"`);
    return { heard, close: () => c.end() };
  };

  for (const synchronousCommit of [false, true]) {
    it(`synchronous_commit ${synchronousCommit ? 'on' : 'off'}: silent while alone, announcing again once another server listens, and that server gets every commit`, async () => {
      // a's clock is the test's: it moves past aloneAfterMs when the test says so, never by itself.
      let now = 1_000_000;
      const a = await PostgresBackend.open({ connectionString: DATABASE_URL, schema, poolSize: 4, synchronousCommit, aloneAfterMs: 5000, clock: () => now });
      let b: PostgresBackend | null = null;
      const id = `alone-${++n}`;
      const ear = await eavesdrop(a.channel);
      const ofWorkspace = () => ear.heard.filter((p) => p.includes(`"${id}"`));
      try {
        const sa = await PostgresEventStore.open({ backend: a, workspaceId: id });
        await a.ensureListening();
        // Listening and not yet alone: it announces.
        expect(a.othersMayListen).toBe(true);
        await sa.append('s', 'no_stream', [ev(id)]);
        await until(() => ofWorkspace().length === 1, 1000);
        // Alone: nothing on the channel for its commits, and at FULL no statement after the commit.
        now += 5001;
        expect(a.othersMayListen).toBe(false);
        const sent = await counter.during(() => sa.append('s', 0, [ev(id)]), true);
        expect(sent).toEqual({ append: 1 });
        // b starts listening (its hello reaches a) and subscribes from the start: it gets both commits, the
        // one a made while silent included (b's catch-up read), and a announces to it again.
        b = await PostgresBackend.open({ connectionString: DATABASE_URL, schema, poolSize: 4, synchronousCommit });
        await b.ensureListening();
        await until(() => a.othersMayListen, 1000);
        const sb = await PostgresEventStore.open({ backend: b, workspaceId: id });
        const got: number[] = [];
        const sub = sb.subscribeAll({ after: 0 });
        const reading = (async () => {
          for await (const e of sub) {
            got.push(e.globalPosition);
            if (got.length === 3) break;
          }
        })();
        await sa.append('s', 1, [ev(id)]);
        await reading;
        sub.close();
        expect(got).toEqual([1, 2, 3]);
        await until(() => ofWorkspace().length === 2, 1000);
        expect(ofWorkspace().map((p) => JSON.parse(p)).map((x) => [x.f, x.l])).toEqual([
          [1, 1],
          [3, 3],
        ]);
        await sa.close();
        await sb.close();
      } finally {
        await ear.close();
        await a.close();
        await b?.close();
      }
    });
  }

  it('a process that does not listen cannot know who does: it always announces', async () => {
    const a = await PostgresBackend.open({ connectionString: DATABASE_URL, schema, poolSize: 4, synchronousCommit: false, aloneAfterMs: 0 });
    const id = `alone-${++n}`;
    const ear = await eavesdrop(a.channel);
    try {
      const sa = await PostgresEventStore.open({ backend: a, workspaceId: id });
      expect(a.othersMayListen).toBe(true);
      await sa.append('s', 'no_stream', [ev(id)]);
      await until(() => ear.heard.some((p) => p.includes(`"${id}"`)), 1000);
      await sa.close();
    } finally {
      await ear.close();
      await a.close();
    }
  });
});
