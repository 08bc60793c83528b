import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from 'pg';
import { newUuidV7 } from '../../src/events/ids';
import type { NewEvent } from '../../src/events/envelope';
import { migrationSql, migrationSteps, SCHEMA_VERSION, schemaVersionSql } from '../../src/stores/postgres/schema';
import { PostgresBackend } from '../../src/stores/postgres/backend';
import { PostgresEventStore } from '../../src/stores/postgres/postgres-event-store';
import { chainHash, genesisHash } from '../../src/events/chain';
import { PostgresCatalogue } from '../../src/workspaces/postgres-catalogue';
import { postgresStoreFactory } from '../../src/workspaces/store-factories';
import { WorkspaceRegistry } from '../../src/workspaces/registry';
import { readModelHost } from '../../src/readmodels/stored/registry';
import { DATABASE_URL, dropSchema, uniqueSchema, whenPostgres } from './pg-support';

const ROOT = path.resolve(__dirname, '../..');

const ev = (workspaceId: string, i: number): NewEvent => ({
  eventId: newUuidV7(),
  type: 'ReviewLevelSet',
  schemaVersion: 1,
  data: { level: 'light', i },
  metadata: { principal: 'agent:mig', workspaceId, correlationId: 'c', causationId: null, occurredAt: '2026-01-01T00:00:00.000Z' },
});

async function sql<T extends Record<string, unknown>>(text: string, params: unknown[] = [], url = DATABASE_URL): Promise<T[]> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<T>(text, params)).rows;
  } finally {
    await c.end();
  }
}

/**
 * The digest of each migration step. A step changed in place would be skipped by every database already
 * past it: a change is a new step (SCHEMA_VERSION is the number of steps), pinned here.
 */
const STEP_DIGESTS: Record<number, string> = {
  // Version 1 is the first versioned script main shipped (with the noop_keys table and claim_noop of issue 34).
  1: '9a434768a0c3ae4d3b59167ab75ff5436ad0f7c8ee3e21703fcd3cf116fb4849',
  // Version 2: append_batch reads the tables once per batch (issue 35).
  2: '0da294a464c51d2413df9e434b010f5645f27aca835c8c46346cf3c51e0fb667',
  // Version 3: append_commit, the group commit that names the streams others moved and announces itself (issue 35).
  3: '43f66c25671f9ec6473e296ff37c821298a2a5b6378e8ca72c8f1873398f3881',
  // Version 4: append_guarded, the group commit with a guard per item (issue 35: the token check without a read).
  4: '3b8bc9d39978a13751a36059a0b261358604056793fd5c58fae018c8367d7005',
  // Version 5: chain_hash in PL/pgSQL (an SQL function was planned again in every transaction: issue 35).
  5: '35400d6809a2e37a5b77602af0e578c106c5cacba9d5f9fb089c0ce5447c373b',
  // Version 6: append_commit announces every row of a commit of up to 64 rows, in payload-sized chunks (issue 35).
  6: '3e099c68b7253ca37b0911db4e774f63da9d57103829cc1a5b438e534c8d3c67',
  // Version 7: append_fused, steps 4, 6 and 2 as one function (the same answers, PostgreSQL's CPU per group commit: issue 35).
  7: '2525fe8882f1b95819f45a78eca75677d9684df89791cc72a8d3ef6192aecc8b',
};

test('each migration step is pinned to its version (a changed step needs a new one) and step 1 is the v1 script', () => {
  const steps = migrationSteps('review_ledger');
  expect(steps.map((step, i) => [i + 1, createHash('sha256').update(step).digest('hex')])).toEqual(Object.entries(STEP_DIGESTS).map(([v, d]) => [Number(v), d]));
  expect(SCHEMA_VERSION).toBe(steps.length);
  expect(steps[0]).toBe(migrationSql('review_ledger'));
});

test('no step after the first alters or locks a table: the steps that run beside live appends only (re)define functions', () => {
  for (const step of migrationSteps('review_ledger').slice(1)) {
    const statements = step.replace(/\$fn\$[\s\S]*?\$fn\$/g, '').split(';').map((x) => x.trim()).filter(Boolean);
    expect(statements.map((x) => x.split('(')[0].replace(/\s+/g, ' '))).toEqual(statements.map(() => expect.stringMatching(/^CREATE OR REPLACE FUNCTION "review_ledger"\.\w+$/)));
  }
});

whenPostgres('postgres migrations', () => {
  const schemas: string[] = [];
  const fresh = () => {
    const s = uniqueSchema('rl_mig');
    schemas.push(s);
    return s;
  };
  const databases: string[] = [];
  afterAll(async () => {
    for (const s of schemas) await dropSchema(s);
    for (const d of databases) await sql(`DROP DATABASE IF EXISTS "${d}" WITH (FORCE)`);
  });
  /**
   * A database of the test's own: pg_stat_database counts deadlocks per database, so in its own one the
   * count is this test's alone (in the shared one, any other suite's deadlock would fail it).
   */
  const ownDatabase = async (tag: string): Promise<string> => {
    const name = `rl_${tag}_${process.pid}_${Date.now().toString(36)}`;
    await sql(`CREATE DATABASE "${name}"`);
    databases.push(name);
    const url = new URL(DATABASE_URL);
    url.pathname = `/${name}`;
    return url.toString();
  };
  const deadlocks = async (url: string): Promise<number> => Number((await sql<{ n: string }>(`SELECT deadlocks AS n FROM pg_stat_database WHERE datname = current_database()`, [], url))[0].n);

  test('migrate is idempotent and runs once when several processes start together; the version is recorded', async () => {
    const schema = fresh();
    const opened = await Promise.all(Array.from({ length: 4 }, () => PostgresBackend.open({ connectionString: DATABASE_URL, schema, poolSize: 1 })));
    try {
      expect(opened.map((b) => b.migration!.ran).filter(Boolean)).toHaveLength(1);
      expect(opened.map((b) => b.migration!.to)).toEqual([SCHEMA_VERSION, SCHEMA_VERSION, SCHEMA_VERSION, SCHEMA_VERSION]);
      expect(await opened[0].migrate()).toEqual({ from: SCHEMA_VERSION, to: SCHEMA_VERSION, ran: false });
      expect(await sql(`SELECT id, version FROM "${schema}".schema_version`)).toEqual([{ id: 1, version: SCHEMA_VERSION }]);
    } finally {
      for (const b of opened) await b.close();
    }
  });

  test('chain_hash after step 5 (PL/pgSQL) gives the bytes of chainHash() in src/events/chain.ts, as the SQL function of step 1 did', async () => {
    const schema = fresh();
    const b = await PostgresBackend.open({ connectionString: DATABASE_URL, schema, poolSize: 1 });
    try {
      expect(await sql(`SELECT l.lanname FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1 AND p.proname = 'chain_hash'`, [schema])).toEqual([{ lanname: 'plpgsql' }]);
      const cases = [
        { prev: genesisHash('w'), position: 1, streamId: 'workspace', streamRevision: 0, type: 'WorkspaceCreated', schemaVersion: 1, data: '{"name":"w"}', metadata: '{}', eventId: newUuidV7() },
        { prev: 'f'.repeat(64), position: 2 ** 40, streamId: 'pr-ü-1', streamRevision: 12345, type: 'ReviewNodeFiled', schemaVersion: 3, data: JSON.stringify({ title: 'naïve — ✓ 😀', body: 'x'.repeat(20_000) }), metadata: '{"principal":"agent:é"}', eventId: 'ключ' },
      ];
      for (const c of cases) {
        const [row] = await sql<{ h: string }>(`SELECT "${schema}".chain_hash($1, $2, $3, $4, $5, $6, $7, $8, $9) AS h`, [c.prev, c.position, c.streamId, c.streamRevision, c.type, c.schemaVersion, c.data, c.metadata, c.eventId]);
        expect(row.h).toBe(chainHash(c.prev, c));
      }
    } finally {
      await b.close();
    }
  });

  test('a v1 database is brought to the current version by the later steps alone while v1 appends run: 0 failed appends, 0 deadlocks, the chain intact; a second migrate is a no-op', async () => {
    const schema = 'review_ledger';
    const url = await ownDatabase('migup');
    // The database as v1's code left it: the v1 script and version 1.
    const v = schemaVersionSql(schema);
    await sql(`${migrationSql(schema)}; ${v.create}; INSERT INTO "${schema}".schema_version (id, version) VALUES (1, 1)`, [], url);
    const v1Function = (await sql<{ src: string }>(`SELECT prosrc AS src FROM pg_proc WHERE oid = '"${schema}".append_batch'::regproc`, [], url))[0].src;
    const deadlocksBefore = await deadlocks(url);
    // Four processes still on v1's code: they call append_batch themselves, one event per call.
    let stop = false;
    const failures: string[] = [];
    let appended = 0;
    const writers = Array.from({ length: 4 }, async (_, w) => {
      const c = new Client({ connectionString: url });
      await c.connect();
      try {
        // Ten more each after the upgrade: v1's callers of the replaced function.
        for (let i = 0, after = 0; !stop || after++ < 10; i++) {
          const e = ev('up', i);
          try {
            const { rows } = await c.query(`SELECT status FROM "${schema}".append_batch($1, $2, $3, $4, $5, $6, $7, $8, $9)`, ['up', [`w${w}`], [-3], [1], [e.eventId], [e.type], [1], [JSON.stringify(e.data)], [JSON.stringify(e.metadata)]]);
            if (rows[0].status === 'ok') appended++;
            else failures.push(rows[0].status);
          } catch (err) {
            failures.push((err as Error).message);
          }
        }
      } finally {
        await c.end();
      }
    });
    // Let them get going, then upgrade (twice at once: one runs the step, the other finds it done).
    while (appended < 40 && failures.length === 0) await new Promise((r) => setTimeout(r, 5));
    const upgraders = await Promise.all([0, 1].map(() => PostgresBackend.open({ connectionString: url, schema, poolSize: 1 })));
    const countAtUpgrade = appended;
    stop = true;
    await Promise.all(writers);
    try {
      expect(upgraders.map((b) => b.migration).sort((x, y) => Number(y!.ran) - Number(x!.ran))).toEqual([
        { from: 1, to: SCHEMA_VERSION, ran: true },
        { from: SCHEMA_VERSION, to: SCHEMA_VERSION, ran: false },
      ]);
      expect(await upgraders[0].migrate()).toEqual({ from: SCHEMA_VERSION, to: SCHEMA_VERSION, ran: false });
      // The current code appends on the upgraded schema, after the v1 writers' rows.
      const store = new PostgresEventStore({ backend: upgraders[0], workspaceId: 'up' });
      await Promise.all(Array.from({ length: 10 }, (_, i) => store.append(`n${i % 3}`, 'any', [ev('up', i)])));
      await store.close();
    } finally {
      for (const b of upgraders) await b.close();
    }
    const deadlocksAfter = await deadlocks(url);
    expect({ failures, deadlocks: deadlocksAfter - deadlocksBefore }).toEqual({ failures: [], deadlocks: 0 });
    expect(countAtUpgrade).toBeGreaterThanOrEqual(40);
    expect(await sql(`SELECT id, version FROM "${schema}".schema_version`, [], url)).toEqual([{ id: 1, version: SCHEMA_VERSION }]);
    expect((await sql<{ src: string }>(`SELECT prosrc AS src FROM pg_proc WHERE oid = '"${schema}".append_batch'::regproc`, [], url))[0].src).not.toBe(v1Function);
    // Every row, v1's and v2's, in one gap-free chain that verifies from genesis.
    const rows = await sql<{ position: string; eventId: string; streamId: string; streamRevision: string; type: string; schemaVersion: number; data: string; metadata: string; hash: string }>(
      `SELECT global_position AS position, event_id AS "eventId", stream_id AS "streamId", stream_revision AS "streamRevision", type, schema_version AS "schemaVersion", data, metadata, encode(hash, 'hex') AS hash FROM "${schema}".events WHERE workspace_id = 'up' ORDER BY global_position`,
      [],
      url,
    );
    expect(rows).toHaveLength(appended + 10);
    let prev = genesisHash('up');
    const broken: number[] = [];
    rows.forEach((r, i) => {
      const expected = chainHash(prev, { ...r, position: Number(r.position), streamRevision: Number(r.streamRevision) });
      if (Number(r.position) !== i + 1 || r.hash !== expected) broken.push(i + 1);
      prev = r.hash;
    });
    expect(broken).toEqual([]);
    const revisions = await sql<{ s: string; n: string; top: string }>(`SELECT stream_id AS s, count(*) AS n, max(stream_revision) AS top FROM "${schema}".events WHERE workspace_id = 'up' GROUP BY 1`, [], url);
    expect(revisions.filter((r) => Number(r.top) !== Number(r.n) - 1)).toEqual([]);
  }, 120_000);

  test('a process that may not migrate refuses an unmigrated or older schema with schema_outdated, naming `review-ledger migrate` (store and catalogue)', async () => {
    const schema = fresh();
    await expect(PostgresBackend.open({ connectionString: DATABASE_URL, schema, migrate: false })).rejects.toMatchObject({
      code: 'schema_outdated',
      message: expect.stringContaining('run `review-ledger migrate`'),
      details: { schema, found: null, needed: SCHEMA_VERSION },
    });
    const catalogue = new PostgresCatalogue(DATABASE_URL, schema, false);
    try {
      expect(() => catalogue.list()).toThrow(expect.objectContaining({ code: 'schema_outdated' }));
    } finally {
      await catalogue.close();
    }
    // Nothing was created by the refusals.
    expect(await sql(`SELECT 1 FROM information_schema.schemata WHERE schema_name = $1`, [schema])).toEqual([]);
    // An older version is refused the same way.
    const b = await PostgresBackend.open({ connectionString: DATABASE_URL, schema });
    await b.close();
    await sql(`UPDATE "${schema}".schema_version SET version = 0`);
    await expect(PostgresBackend.open({ connectionString: DATABASE_URL, schema, migrate: false })).rejects.toMatchObject({ code: 'schema_outdated', details: { found: 0 } });
  });

  test('at the current version, opening (migrating or not) takes no lock on a live table: it completes while an append holds its transaction open', async () => {
    const schema = fresh();
    const writer = await PostgresBackend.open({ connectionString: DATABASE_URL, schema, poolSize: 2 });
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let inside!: () => void;
    const entered = new Promise<void>((r) => (inside = r));
    const store = new PostgresEventStore({
      backend: writer,
      workspaceId: 'w',
      beforeCommit: async () => {
        inside();
        await held;
      },
    });
    const append = store.append('s', 'no_stream', [ev('w', 0)]);
    await entered; // rows written, the heads row locked, not committed
    try {
      const again = await PostgresBackend.open({ connectionString: DATABASE_URL, schema, poolSize: 1 });
      expect(again.migration).toEqual({ from: SCHEMA_VERSION, to: SCHEMA_VERSION, ran: false });
      await again.close();
      const reader = await PostgresBackend.open({ connectionString: DATABASE_URL, schema, poolSize: 1, migrate: false });
      await reader.close();
    } finally {
      release();
    }
    expect(await append).toMatchObject({ firstPosition: 1, duplicate: false });
    await store.close();
    await writer.close();
  });

  test('20 CLI-style reads (the read-only open path, as `read-models status`) during concurrent appends from 4 processes: 0 failed appends, 0 failed reads, 0 deadlocks', async () => {
    const schema = 'review_ledger';
    const url = await ownDatabase('migcli');
    const setup = await PostgresBackend.open({ connectionString: url, schema, poolSize: 1 });
    await setup.pool.query(`INSERT INTO "${schema}".workspaces VALUES ('load', 'load', '2026-01-01T00:00:00Z')`);
    await setup.close();
    const deadlocksBefore = await deadlocks(url);
    let stop = false;
    const appendFailures: string[] = [];
    let appended = 0;
    const writers = await Promise.all(Array.from({ length: 4 }, () => PostgresBackend.open({ connectionString: url, schema, poolSize: 2 })));
    const loops = writers.map(async (backend, w) => {
      const store = new PostgresEventStore({ backend, workspaceId: 'load' });
      for (let i = 0; !stop; i++) {
        try {
          await store.append(`w${w}`, 'any', [ev('load', i)]);
          appended++;
        } catch (err) {
          appendFailures.push(`${(err as { code?: string }).code ?? ''} ${(err as Error).message}`);
        }
      }
      await store.close();
    });
    const readFailures: string[] = [];
    const heads: number[] = [];
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-mig-'));
    try {
      // Five rounds of four reads at once, each a fresh "CLI process": its own pool, catalogue and version check.
      for (let round = 0; round < 5; round++) {
        await Promise.all(
          Array.from({ length: 4 }, async () => {
            const registry = new WorkspaceRegistry(dataDir, postgresStoreFactory(url, schema, { migrate: false }));
            try {
              const ws = await registry.open('load');
              heads.push(await ws.store.headPosition());
              const host = readModelHost(ws);
              for (const name of host?.names ?? []) await host!.storage.slots(name);
            } catch (err) {
              readFailures.push(`${(err as { code?: string }).code ?? ''} ${(err as Error).message}`);
            } finally {
              await registry.close();
            }
          }),
        );
      }
    } finally {
      stop = true;
      await Promise.all(loops);
      for (const b of writers) await b.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
    const deadlocksAfter = await deadlocks(url);
    expect({ reads: heads.length, readFailures, appendFailures }).toEqual({ reads: 20, readFailures: [], appendFailures: [] });
    expect(appended).toBeGreaterThan(0);
    // Counted in this test's own database: no other suite's deadlock is in it.
    expect(deadlocksAfter - deadlocksBefore).toBe(0);
  }, 120_000);

  test('`review-ledger migrate` migrates once and says so; `workspace list` on an unmigrated database refuses with schema_outdated and migrates nothing', () => {
    const dbName = `rl_migcli_${process.pid}_${Date.now().toString(36)}`;
    const url = new URL(DATABASE_URL);
    url.pathname = `/${dbName}`;
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-migcli-'));
    const cli = (...args: string[]) =>
      spawnSync(process.execPath, ['-r', './tools/ts-register.js', 'src/cli/main.ts', '--store', 'postgres', '--database-url', url.toString(), '--data-dir', dataDir, ...args], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });
    const admin = spawnSync(process.execPath, ['-e', `const {Client}=require(${JSON.stringify(require.resolve('pg'))});(async()=>{const c=new Client({connectionString:process.argv[1]});await c.connect();await c.query(process.argv[2]);await c.end()})().catch(e=>{console.error(e.message);process.exit(1)})`, DATABASE_URL, `CREATE DATABASE "${dbName}"`], { encoding: 'utf8' });
    expect(admin.status).toBe(0);
    try {
      const refused = cli('workspace', 'list');
      expect({ status: refused.status, stderr: refused.stderr.trim() }).toEqual({
        status: 1,
        stderr: `error [schema_outdated]: database: schema "review_ledger" is not migrated (no schema_version table), this server needs version ${SCHEMA_VERSION}: run \`review-ledger migrate\` (same --database-url) first`,
      });
      const first = cli('migrate');
      expect({ status: first.status, stdout: first.stdout }).toEqual({ status: 0, stdout: `schema review_ledger: migrated from no version to version ${SCHEMA_VERSION}\n` });
      const second = cli('migrate');
      expect({ status: second.status, stdout: second.stdout }).toEqual({ status: 0, stdout: `schema review_ledger: already at version ${SCHEMA_VERSION}, nothing to do\n` });
      const listed = cli('workspace', 'list', '--json');
      expect({ status: listed.status, stdout: listed.stdout }).toEqual({ status: 0, stdout: '[]\n' });
    } finally {
      spawnSync(process.execPath, ['-e', `const {Client}=require(${JSON.stringify(require.resolve('pg'))});(async()=>{const c=new Client({connectionString:process.argv[1]});await c.connect();await c.query(process.argv[2]);await c.end()})()`, DATABASE_URL, `DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`], { encoding: 'utf8' });
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 300_000);
});
