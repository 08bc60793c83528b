import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { newUuidV7 } from '../../src/events/ids';
import { loadOperatorConfig } from '../../src/operator-config';
import { startServer, type RunningServer } from '../../src/server/bootstrap';
import { PostgresBackend } from '../../src/stores/postgres/backend';
import { PostgresEventStore } from '../../src/stores/postgres/postgres-event-store';
import { fillUntilQuota } from '../support/log-quota-scenario';
import { adminQuery, DATABASE_URL, dropSchema, ownDatabase, uniqueSchema, untilValue, whenPostgres } from './pg-support';

/**
 * logQuotaBytes on PostgreSQL. Before, it was enforced on SQLite only: one member sending 1 MiB findings
 * in a loop grew its workspace's rows without bound in the database every tenant (and every server)
 * shares. Now the PostgreSQL store sums its events' data and metadata in the background (incrementally,
 * by the primary key), counts its own appends as they commit and other servers' within a second, and past
 * the quota the workspace's member-level commands are refused `log_quota_exceeded` as on SQLite.
 */

whenPostgres('PostgresEventStore.logBytes', () => {
  const schema = uniqueSchema('rl_logq');
  let a: PostgresBackend;
  let b: PostgresBackend;

  beforeAll(async () => {
    a = await PostgresBackend.open({ connectionString: DATABASE_URL, schema, poolSize: 2 });
    b = await PostgresBackend.open({ connectionString: DATABASE_URL, schema, poolSize: 2 });
  }, 60_000);

  afterAll(async () => {
    await a?.close();
    await b?.close();
    await dropSchema(schema);
  }, 60_000);

  const event = (chars: number) => ({ eventId: newUuidV7(), type: 'MemberAdded', schemaVersion: 1, data: { pad: 'x'.repeat(chars) }, metadata: { principal: 'p', workspaceId: 'w', correlationId: 'c', causationId: null, occurredAt: '2026-01-01T00:00:00.000Z' } });
  const stored = async (ws: string) => Number((await adminQuery<{ n: string }>(`SELECT coalesce(sum(octet_length(data) + octet_length(metadata)), 0) AS n FROM "${schema}".events WHERE workspace_id = '${ws}'`))[0].n);

  test('the sum of the rows, own appends counted as they commit, another server’s within a second; other workspaces apart', async () => {
    const store = await PostgresEventStore.open({ backend: a, workspaceId: 'w' });
    const other = await PostgresEventStore.open({ backend: b, workspaceId: 'w' });
    const neighbour = await PostgresEventStore.open({ backend: b, workspaceId: 'n' });
    try {
      await store.append('s', 'any', [event(10)]);
      await neighbour.append('s', 'any', [event(500_000)]);
      // Unknown until the first sum is in: asking starts it.
      expect(store.logBytes()).toBeUndefined();
      const first = await untilValue('the first sum', 10_000, async () => store.logBytes());
      expect(first).toBe(await stored('w'));
      // Its own append counts at once, before any new sum.
      await store.append('s', 'any', [event(200_000)]);
      expect(store.logBytes()).toBe(await stored('w'));
      // Another server's append (another backend: another pool, another process's view) within a second or so.
      await other.append('t', 'any', [event(300_000)]);
      const total = await stored('w');
      expect(await untilValue('the other server’s append counted', 10_000, async () => (store.logBytes() === total ? total : undefined))).toBe(total);
      // The neighbour's 500 KB are not this workspace's.
      expect(total).toBeLessThan(600_000);
    } finally {
      await store.close();
      await other.close();
      await neighbour.close();
    }
  }, 60_000);
});

whenPostgres('a workspace on PostgreSQL whose log reaches logQuotaBytes', () => {
  const QUOTA = 2 * 1024 * 1024;
  const db = ownDatabase('logquota');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-logquota-pg-'));
  let server: RunningServer;
  let owner: string;

  beforeAll(async () => {
    await db.create();
    const configFile = path.join(dataDir, 'operator.json');
    fs.writeFileSync(configFile, JSON.stringify({ logQuotaBytes: QUOTA }));
    server = await startServer({ dataDir, port: 0, store: 'postgres', databaseUrl: db.url, operator: loadOperatorConfig(dataDir, { configFile }, {}) });
    owner = fs.readFileSync(path.join(dataDir, 'owner-token'), 'utf8').trim();
  }, 120_000);

  afterAll(async () => {
    await server?.close().catch(() => undefined);
    await db.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  test('member-level commands are refused once it is reached; reads and admin commands go on', async () => {
    const { accepted } = await fillUntilQuota(server.url, owner, QUOTA);
    // Refused near the quota, not long after it: ~52 findings of 40 KB fill 2 MiB.
    expect(accepted).toBeGreaterThan(40);
    expect(accepted).toBeLessThan(60);
  }, 120_000);
});
