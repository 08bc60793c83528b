import { PostgresBackend } from '../../src/stores/postgres/backend';
import { PostgresEventStore } from '../../src/stores/postgres/postgres-event-store';
import { openSidePool } from '../../src/stores/postgres/side-pool';
import { PostgresCatalogue } from '../../src/workspaces/postgres-catalogue';
import { adminQuery, levelSetEvent, ownDatabase, whenPostgres } from './pg-support';

/**
 * PostgreSQL ending idle sessions (`idle_session_timeout`, which operators and hosted services set to
 * reclaim connections). Before: /health flapped `degraded` ("PostgreSQL unreachable: terminating
 * connection due to idle-session timeout") a moment after every quiet spell, the LISTEN connection was
 * ended and re-made every timeout (degraded again), and an exclusive section's advisory lock — held by
 * a session that idles while its holder talks to GitHub — was released by the server mid-section, so a
 * second server could enter. Now pooled connections are closed by the pool before the server ends
 * them, and the connections that idle on purpose are pinged at half the timeout.
 */

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const IDLE_MS = 1000;

whenPostgres('idle_session_timeout', () => {
  const db = ownDatabase('idle');
  const backends: PostgresBackend[] = [];
  const open = async () => {
    const b = await PostgresBackend.open({ connectionString: db.url });
    backends.push(b);
    return b;
  };

  beforeAll(async () => {
    await db.create();
    await adminQuery(`ALTER DATABASE "${db.name}" SET idle_session_timeout = '${IDLE_MS}ms'`);
  }, 60_000);

  afterAll(async () => {
    for (const b of backends) await b.close();
    await db.drop();
  }, 60_000);

  test('health stays ok through quiet spells longer than the timeout, with a LISTEN in place, and commands go on', async () => {
    const backend = await open();
    const store = new PostgresEventStore({ backend, workspaceId: 'idle-ws' });
    const { ready, unlisten } = backend.listen('idle-ws', () => undefined);
    await ready;
    try {
      for (let spell = 0; spell < 2; spell++) {
        await store.append('s', 'any', [levelSetEvent('idle-ws')]);
        const seen = new Set<string>();
        const until = Date.now() + 3 * IDLE_MS;
        while (Date.now() < until) {
          const h = backend.health();
          seen.add(h.status === 'ok' ? 'ok' : `${h.status}: ${h.reason}`);
          await sleep(50);
        }
        expect([...seen]).toEqual(['ok']);
        expect(backend.hearing).toBe(true);
      }
    } finally {
      unlisten();
    }
  }, 60_000);

  test('an exclusive section longer than the timeout keeps its lock: a second server enters only after it', async () => {
    const a = new PostgresEventStore({ backend: await open(), workspaceId: 'idle-ws' });
    const b = new PostgresEventStore({ backend: await open(), workspaceId: 'idle-ws' });
    const trace: string[] = [];
    const first = a.exclusive('publish', async () => {
      trace.push('a in');
      await sleep(3 * IDLE_MS); // the section talks to GitHub; its lock's session idles meanwhile
      trace.push('a out');
    });
    await sleep(200);
    const second = b.exclusive('publish', async () => void trace.push('b in'));
    await Promise.all([first, second]);
    expect(trace).toEqual(['a in', 'a out', 'b in']);
  }, 60_000);

  test('the catalogue answers every lookup across quiet spells (its connection, ended for idling, is re-made on the next call, never counted as an outage)', async () => {
    const catalogue = new PostgresCatalogue(db.url);
    try {
      expect(catalogue.register('idle-cat', 'Idle', '2026-01-01T00:00:00.000Z')).toBe(true);
      const refusals: string[] = [];
      for (let spell = 0; spell < 3; spell++) {
        await sleep(1.2 * IDLE_MS); // idle past the timeout: the server ends the connection
        try {
          // A miss goes to PostgreSQL every time (hits are cached).
          expect(catalogue.get('never-registered')).toBeUndefined();
        } catch (err) {
          refusals.push((err as Error).message);
        }
      }
      expect(refusals).toEqual([]);
    } finally {
      await catalogue.close();
    }
  }, 60_000);

  test('an idle connection of a side pool (KurrentDB\'s read models) ended by the server does not end the process', async () => {
    const pool = openSidePool(db.url, 2);
    try {
      await pool.query('SELECT 1');
      await sleep(2 * IDLE_MS); // its idle connection is ended: an 'error' nobody heard would throw here
      expect((await pool.query<{ one: number }>('SELECT 1 AS one')).rows[0].one).toBe(1);
    } finally {
      await pool.end();
    }
  }, 60_000);
});
