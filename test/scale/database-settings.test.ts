import { DomainError } from '../../src/domain-error';
import { isTransientConflict, unavailable } from '../../src/stores/postgres/connection-errors';
import { PostgresBackend } from '../../src/stores/postgres/backend';
import { PostgresEventStore } from '../../src/stores/postgres/postgres-event-store';
import { adminQuery, levelSetEvent, ownDatabase, uniqueSchema, whenPostgres } from './pg-support';

/**
 * Settings a DBA may put on the database or role that the store's design does not allow for. Its appends
 * serialize on the workspace's head row (SELECT … FOR UPDATE) and wait for it, relying on READ COMMITTED.
 * Before: with `default_transaction_isolation = 'repeatable read'` two servers answered 15 % of commands
 * `internal` ("could not serialize access due to concurrent update"), with `lock_timeout = '2ms'` 4 %
 * ("canceling statement due to lock timeout"). Now every session of the store pins READ COMMITTED and
 * no lock timeout (its own statement bound covers a wait), and such a conflict, should one come anyway,
 * is a retryable store_unavailable.
 */

describe('a transient conflict (40001, 40P01, 55P03) is classified', () => {
  test.each([
    ['40001', 'could not serialize access due to concurrent update'],
    ['40P01', 'deadlock detected'],
    ['55P03', 'canceling statement due to lock timeout'],
  ])('%s as store_unavailable, retryable, nothing recorded', (code, message) => {
    const err = Object.assign(new Error(message), { code });
    expect(isTransientConflict(err)).toBe(true);
    const converted = unavailable(err) as DomainError;
    expect(converted).toBeInstanceOf(DomainError);
    expect(converted.code).toBe('store_unavailable');
    expect(converted.message).toMatch(/nothing was recorded; retry/);
    expect(converted.details).toMatchObject({ retryAfterMs: expect.any(Number) });
  });
});

whenPostgres('database-level settings the store pins for its own sessions', () => {
  const db = ownDatabase('settings');
  const backends: PostgresBackend[] = [];

  beforeAll(async () => {
    await db.create();
    await adminQuery(`ALTER DATABASE "${db.name}" SET default_transaction_isolation = 'repeatable read'`);
    await adminQuery(`ALTER DATABASE "${db.name}" SET lock_timeout = '1ms'`);
  }, 60_000);

  afterAll(async () => {
    for (const b of backends) await b.close();
    await db.drop();
  }, 60_000);

  test('three servers starting at once on a fresh schema: the lock_timeout does not cut the wait for the first one\'s migration', async () => {
    const schema = uniqueSchema('rl_settings_mig');
    const opened = await Promise.all(Array.from({ length: 3 }, () => PostgresBackend.open({ connectionString: db.url, schema })));
    backends.push(...opened);
    expect(opened.map((b) => b.migration?.ran).sort()).toEqual([false, false, true]);
  }, 120_000);

  test('two servers appending to one workspace at once: every append succeeds, positions 1..N without a gap', async () => {
    const open = async () => {
      const b = await PostgresBackend.open({ connectionString: db.url });
      backends.push(b);
      return new PostgresEventStore({ backend: b, workspaceId: 'settings-ws' });
    };
    const [a, b] = [await open(), await open()];
    const shown = await backends[0].pool.query<{ iso: string; lock: string }>(`SELECT current_setting('default_transaction_isolation') AS iso, current_setting('lock_timeout') AS lock`);
    expect(shown.rows[0]).toEqual({ iso: 'read committed', lock: '0' });
    const rounds = 10;
    const perServer = 12;
    const outcomes: string[] = [];
    for (let round = 0; round < rounds; round++) {
      const appends = [a, b].flatMap((store, s) =>
        Array.from({ length: perServer }, (_, i) =>
          store.append(`stream-${s}-${i}`, 'any', [levelSetEvent('settings-ws')]).then(
            () => 'ok',
            (err: unknown) => `${(err as { code?: string }).code ?? ''} ${(err as Error).message}`,
          ),
        ),
      );
      outcomes.push(...(await Promise.all(appends)));
    }
    expect(outcomes.filter((o) => o !== 'ok')).toEqual([]);
    const rows = await adminQuery<{ n: string; lo: string; hi: string }>(`SELECT count(*) AS n, min(global_position) AS lo, max(global_position) AS hi FROM review_ledger.events WHERE workspace_id = 'settings-ws'`, db.url);
    expect(rows[0]).toEqual({ n: String(2 * rounds * perServer), lo: '1', hi: String(2 * rounds * perServer) });
  }, 120_000);
});
