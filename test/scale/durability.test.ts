import { loadConfig } from '../../src/config';
import { PostgresBackend } from '../../src/stores/postgres/backend';
import { storeFactoryFor } from '../../src/ledger';
import { DATABASE_URL, dropSchema, uniqueSchema, whenPostgres } from './pg-support';

/**
 * `--synchronous` on PostgreSQL (README, docs/stores.md): FULL (default) makes every commit wait for
 * its WAL flush; NORMAL and OFF run this process's sessions with synchronous_commit = off.
 */
whenPostgres('postgres durability setting', () => {
  const schema = uniqueSchema('rl_sync');
  afterAll(() => dropSchema(schema));

  const setting = async (b: PostgresBackend) => (await b.pool.query<{ synchronous_commit: string }>('SHOW synchronous_commit')).rows[0].synchronous_commit;

  test('a backend waits for the WAL flush unless told otherwise', async () => {
    const full = await PostgresBackend.open({ connectionString: DATABASE_URL, schema, poolSize: 1 });
    const normal = await PostgresBackend.open({ connectionString: DATABASE_URL, schema, poolSize: 1, synchronousCommit: false });
    try {
      expect([await setting(full), await setting(normal)]).toEqual(['on', 'off']);
    } finally {
      await full.close();
      await normal.close();
    }
  });

  test.each([
    ['FULL', 'on'],
    ['EXTRA', 'on'],
    ['NORMAL', 'off'],
    ['OFF', 'off'],
  ] as const)('--synchronous %s → synchronous_commit %s', async (mode, expected) => {
    const factory = storeFactoryFor(loadConfig({ store: 'postgres', databaseUrl: DATABASE_URL, synchronous: mode }, {}));
    try {
      const store = (await factory('sync-ws', '/nonexistent')) as unknown as { backend: PostgresBackend };
      expect(await setting(store.backend)).toBe(expected);
    } finally {
      await factory.close?.();
    }
  });
});
