import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadConfig } from '../../src/config';
import { newUuidV7 } from '../../src/events/ids';
import { LOCAL_OPERATOR, Ledger, storeFactoryFor } from '../../src/ledger';
import { PostgresCatalogue } from '../../src/workspaces/postgres-catalogue';
import { PostgresBackend } from '../../src/stores/postgres/backend';
import { DATABASE_URL, dropSchema, uniqueSchema, whenPostgres } from './pg-support';
import { postgresStoreFactory } from '../../src/workspaces/store-factories';

whenPostgres('postgres catalogue', () => {
  const schema = uniqueSchema('rl_cat');
  const dirs: string[] = [];
  const tmp = () => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-cat-'));
    dirs.push(d);
    return d;
  };
  afterAll(async () => {
    await dropSchema(schema);
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  test('two catalogues on one database: a workspace registered through one is known to the other at once', async () => {
    const a = new PostgresCatalogue(DATABASE_URL, schema);
    const b = new PostgresCatalogue(DATABASE_URL, schema);
    expect(b.get('team-x')).toBeUndefined();
    expect(a.register('team-x', 'Team X', '2026-01-01T00:00:00.000Z')).toBe(true);
    expect(b.get('team-x')).toEqual({ workspaceId: 'team-x', name: 'Team X', createdAt: '2026-01-01T00:00:00.000Z' });
    expect(b.register('team-x', 'Other name', '2027-01-01T00:00:00.000Z')).toBe(false);
    expect(a.list()).toEqual([{ workspaceId: 'team-x', name: 'Team X', createdAt: '2026-01-01T00:00:00.000Z' }]);
    await a.close();
    await b.close();
  });

  test('the owner a workspace counts against (maxWorkspacesPerOwner) is shared by every catalogue on the database', async () => {
    const a = new PostgresCatalogue(DATABASE_URL, schema);
    const b = new PostgresCatalogue(DATABASE_URL, schema);
    expect(a.register('quota-a', 'A', '2026-01-01T00:00:00.000Z', 'team-x/user:ann')).toBe(true);
    expect(a.register('quota-b', 'B', '2026-01-01T00:00:00.000Z', 'team-x/user:ann')).toBe(true);
    expect([b.countCreatedBy('team-x/user:ann'), b.createdBy('quota-a'), b.createdBy('team-x'), b.countCreatedBy('team-x/user:bob')]).toEqual([2, 'team-x/user:ann', undefined, 0]);
    await a.close();
    await b.close();
  });

  test('two ledgers with separate data dirs on one PostgreSQL store share workspaces and events', async () => {
    const factoryA = postgresStoreFactory(DATABASE_URL, schema);
    const factoryB = postgresStoreFactory(DATABASE_URL, schema);
    const a = new Ledger(loadConfig({ dataDir: tmp(), store: 'postgres', databaseUrl: DATABASE_URL }, {}), { storeFactory: factoryA });
    const b = new Ledger(loadConfig({ dataDir: tmp(), store: 'postgres', databaseUrl: DATABASE_URL }, {}), { storeFactory: factoryB });
    await a.createWorkspace({ ...LOCAL_OPERATOR, idempotencyKey: newUuidV7() }, { workspaceId: 'shared-ws', name: 'Shared' });
    expect(b.workspaces.get('shared-ws')?.name).toBe('Shared');
    const wa = await a.workspace('shared-ws');
    const wb = await b.workspace('shared-ws');
    expect(wb.store.adapter).toBe('postgres');
    expect(await wb.store.headPosition()).toBe(await wa.store.headPosition());
    expect(await wb.store.headPosition()).toBeGreaterThan(0);
    await expect(b.workspace('never-registered')).rejects.toMatchObject({ code: 'unknown_workspace' });
    await a.close();
    await b.close();
  });

  test('storeFactoryFor picks the adapter from the configuration and names the missing connection string', () => {
    expect(() => storeFactoryFor(loadConfig({ store: 'postgres' }, {}))).toThrow(/--database-url: required with --store postgres \(or set DATABASE_URL\)/);
    expect(() => storeFactoryFor(loadConfig({ store: 'kurrentdb' }, {}))).toThrow(/--kurrentdb-url: required with --store kurrentdb \(or set KURRENTDB_URL\)/);
    const pg = storeFactoryFor(loadConfig({}, { REVIEW_LEDGER_STORE: 'postgres', DATABASE_URL }));
    expect(typeof pg.catalogue).toBe('function');
    expect(storeFactoryFor(loadConfig({}, {})).catalogue).toBeUndefined();
  });
});

test('an unreachable PostgreSQL is reported as store_unavailable, by the store and by the catalogue', async () => {
  // Port 1 on loopback: nothing listens there, the connection is refused at once.
  const url = 'postgres://postgres@127.0.0.1:1/test';
  await expect(PostgresBackend.open({ connectionString: url })).rejects.toMatchObject({ code: 'store_unavailable' });
  const catalogue = new PostgresCatalogue(url);
  expect(() => catalogue.get('any-ws')).toThrow(expect.objectContaining({ code: 'store_unavailable' }));
  await catalogue.close();
});
