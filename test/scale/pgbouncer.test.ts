import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DomainError } from '../../src/domain-error';
import { newUuidV7 } from '../../src/events/ids';
import { startServer, type RunningServer } from '../../src/server/bootstrap';
import { PostgresBackend } from '../../src/stores/postgres/backend';
import { PgBouncer, pgbouncerBinary } from '../support/pgbouncer';
import { adminQuery, DATABASE_URL, dropSchema, ownDatabase, uniqueSchema, whenPostgres } from './pg-support';

/**
 * PgBouncer between the servers and PostgreSQL, as operators deploy it. Before: with its default
 * (pool_mode = session) no server could connect — "unsupported startup parameter: options", the statement
 * bound was sent in the startup packet; with pool_mode = transaction the server failed at start with
 * `internal` "prepared statement … already exists" (and had it got further, its advisory locks and LISTEN
 * would have held nothing). Now session pooling serves with the statement bound in place, and a
 * transaction or statement pooler is refused at open, before anything is migrated, saying what to change.
 */

whenPostgres('behind PgBouncer', () => {
  if (!pgbouncerBinary() && !process.env.CI) {
    console.log('behind PgBouncer: pgbouncer is not installed (apt-get install pgbouncer; .ci/run installs it); these suites are not run');
    test('behind PgBouncer: not run, pgbouncer is not installed', () => expect(pgbouncerBinary()).toBeNull());
    return;
  }

  describe.each(['transaction', 'statement'] as const)('pool_mode = %s', (mode) => {
    let bouncer: PgBouncer;
    beforeAll(async () => {
      bouncer = await PgBouncer.start(DATABASE_URL, mode);
    }, 60_000);
    afterAll(async () => bouncer?.stop(), 30_000);

    test('is refused at open with invalid_config naming the fix, before any schema is created', async () => {
      const schema = uniqueSchema('rl_pgb');
      const url = bouncer.url(new URL(DATABASE_URL).pathname.slice(1), DATABASE_URL);
      try {
        const err = await PostgresBackend.open({ connectionString: url, schema }).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(DomainError);
        expect((err as DomainError).code).toBe('invalid_config');
        expect((err as Error).message).toMatch(/transaction- or statement-pooling proxy .*pool_mode = session/);
        const rows = await adminQuery<{ n: string }>(`SELECT count(*) AS n FROM information_schema.schemata WHERE schema_name = '${schema}'`);
        expect(Number(rows[0].n)).toBe(0);
      } finally {
        await dropSchema(schema);
      }
    }, 60_000);
  });

  describe('pool_mode = session (PgBouncer\'s default)', () => {
    const db = ownDatabase('pgb');
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-pgbouncer-server-'));
    let bouncer: PgBouncer;
    let server: RunningServer;

    beforeAll(async () => {
      await db.create();
      bouncer = await PgBouncer.start(DATABASE_URL, 'session');
    }, 60_000);

    afterAll(async () => {
      await server?.close().catch(() => undefined);
      await bouncer?.stop();
      await db.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }, 60_000);

    test('connections carry the statement bound (set after connecting, not in the startup packet): a statement past it is cancelled', async () => {
      const schema = uniqueSchema('rl_pgb_bound');
      const backend = await PostgresBackend.open({ connectionString: bouncer.url(db.name, DATABASE_URL), schema, queryTimeoutMs: 700 });
      try {
        const shown = await backend.pool.query<{ statement_timeout: string }>('SHOW statement_timeout');
        expect(shown.rows[0].statement_timeout).toBe('700ms');
        const err = await backend.pool.query('SELECT pg_sleep(5)').then(
          () => undefined,
          (e: unknown) => e as { code?: string },
        );
        expect(err?.code).toBe('57014'); // canceling statement due to statement timeout
      } finally {
        await backend.close();
        await adminQuery(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`, db.url);
      }
    }, 60_000);

    test('a server starts through it and acknowledges concurrent commands, each stored once', async () => {
      server = await startServer({ dataDir, port: 0, store: 'postgres', databaseUrl: bouncer.url(db.name, DATABASE_URL) });
      const owner = fs.readFileSync(path.join(dataDir, 'owner-token'), 'utf8').trim();
      const keys = Array.from({ length: 24 }, () => newUuidV7());
      const answers = await Promise.all(
        keys.map(async (key, i) => {
          const res = await fetch(`${server.url}/rpc`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${owner}` },
            body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'addMember', params: { workspace_id: 'default', idempotencyKey: key, principal: `agent:pgb-${i}`, role: 'member' } }),
          });
          return ((await res.json()) as { result?: unknown; error?: unknown }).error ?? 'ack';
        }),
      );
      expect(answers).toEqual(keys.map(() => 'ack'));
      const rows = await adminQuery<{ n: string }>(`SELECT count(*) AS n FROM review_ledger.events WHERE workspace_id = 'default' AND type = 'MemberAdded' AND data::jsonb->>'principal' LIKE 'agent:pgb-%'`, db.url);
      expect(Number(rows[0].n)).toBe(keys.length);
    }, 120_000);
  });
});
