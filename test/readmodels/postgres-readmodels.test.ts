import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawn } from 'node:child_process';
import { PostgresBackend } from '../../src/stores/postgres/backend';
import { PostgresEventStore } from '../../src/stores/postgres/postgres-event-store';
import { DATABASE_URL, dropSchema, uniqueSchema, whenPostgres } from '../scale/pg-support';
import { auditQuery } from '../../src/readmodels/queries/audit';
import { foldQuery } from '../../src/readmodels/queries/run-query';
import { auditFromRows, auditSql } from '../../src/readmodels/stored/audit-read-model';
import { readModelHost } from '../../src/readmodels/stored/registry';
import { readModelConformance, Workspace } from './conformance';
import { appendLog, generateLog } from './generate';
import { withReadModels } from '../support/ledger-fixture';
import { SlotMap } from '../../src/slots';
import { Pool } from 'pg';
import { PostgresReadModelStorage } from '../../src/readmodels/stored/storage';

const root = path.join(__dirname, '..', '..');

whenPostgres('postgres read models', () => {
  const schemas: string[] = [];
  const open = async (schema: string, dir: string): Promise<Workspace & { schema: string }> => {
    const backend = await PostgresBackend.open({ connectionString: DATABASE_URL, schema, poolSize: 4 });
    const store = await PostgresEventStore.open({ backend, workspaceId: 'rm' });
    return withReadModels({
      id: 'rm',
      dir,
      store,
      cache: new SlotMap(),
      schema,
      close: async () => {
        await store.close();
        await backend.close();
      },
    });
  };
  readModelConformance('postgres', {
    // A schema per test: its events, heads and read-model tables, dropped after the file.
    fresh: async () => {
      const schema = uniqueSchema('rl_rm');
      schemas.push(schema);
      return open(schema, fs.mkdtempSync(path.join(os.tmpdir(), 'rl-readmodels-pg-')));
    },
    childArgs: (ws) => ['postgres', DATABASE_URL, (ws as unknown as { schema: string }).schema, ws.dir],
    reopen: async (ws) => open((ws as unknown as { schema: string }).schema, ws.dir),
  });
  test('an audit page over a time range reads the range through its index, not the primary key walked back until the page fills', async () => {
    const schema = uniqueSchema('rl_rm_plan');
    schemas.push(schema);
    const ws = await open(schema, fs.mkdtempSync(path.join(os.tmpdir(), 'rl-readmodels-pg-plan-')));
    try {
      await appendLog(ws.store, generateLog({ seed: 17, prs: 10, principals: 10, events: 1500 }), 20);
      const host = readModelHost(ws)!;
      await host.settle();
      const slot = host.slot('audit')!;
      const head = await ws.store.headPosition();
      // An early window, newest first: walking the primary key back from the head reads nearly every row.
      for (const f of [{ since: '2025-01-01T00:02:00.000Z', until: '2025-01-01T00:03:00.000Z' }, { action: 'confirm', since: '2025-01-01T00:02:00.000Z', until: '2025-01-01T00:04:00.000Z' }]) {
        const parsed = auditQuery.input.parse({ ...f, order: 'desc', limit: 5 });
        const { sql, params } = auditSql(host.storage, slot, parsed, head);
        const plan = (await host.storage.query(`EXPLAIN ${sql}`, params)).map((r) => String(r['QUERY PLAN'])).join('\n');
        expect({ f, plan }).not.toEqual({ f, plan: expect.stringMatching(/Backward using \w+_pkey/) });
        expect(await auditFromRows(host.storage, slot, parsed, head)).toEqual((await foldQuery(auditQuery, ws, parsed)).value);
      }
      await host.close();
    } finally {
      await ws.close();
    }
  });
  test('sixteen processes opening the read models of a fresh schema at once all succeed: the checkpoint table is made once, under a lock (concurrent CREATE TABLE IF NOT EXISTS fails the loser with 42P07, 42710 or 23505)', async () => {
    // Four fresh schemas, sixteen pools ("processes", a CLI read each) asking for their slots together on each.
    const pools = Array.from({ length: 16 }, () => new Pool({ connectionString: DATABASE_URL, max: 1 }));
    try {
      for (let round = 0; round < 4; round++) {
        const schema = uniqueSchema('rl_rm_race');
        schemas.push(schema);
        await pools[0].query(`CREATE SCHEMA "${schema}"`);
        const outcomes = await Promise.allSettled(pools.map((pool, i) => new PostgresReadModelStorage(`ws-${i}`, pool, schema).slots('audit')));
        expect(outcomes.map((o) => (o.status === 'fulfilled' ? o.value : String(o.reason)))).toEqual(pools.map(() => []));
        const tables = await pools[0].query(`SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = $1 AND tablename = 'rm_checkpoints'`, [schema]);
        expect(tables.rows[0].n).toBe(1);
      }
    } finally {
      await Promise.all(pools.map((p) => p.end()));
    }
  });
  test('two processes on one schema: one folds each model under its lease while the other follows its checkpoint and answers the same; when the folder closes, the other folds', async () => {
    const schema = uniqueSchema('rl_rm_lease');
    schemas.push(schema);
    const a = await open(schema, fs.mkdtempSync(path.join(os.tmpdir(), 'rl-readmodels-pg-lease-a-')));
    const b = await open(schema, fs.mkdtempSync(path.join(os.tmpdir(), 'rl-readmodels-pg-lease-b-')));
    let aOpen = true;
    try {
      const log = [...generateLog({ seed: 23, prs: 8, principals: 6, events: 1200 })];
      await appendLog(a.store, log.slice(0, 600), 20);
      // Leases and patience longer than the test: which process folds never depends on how fast this machine is.
      const longer = { leaseMs: 600_000, patienceMs: 600_000 };
      const hostA = readModelHost(a, undefined, longer)!;
      await hostA.settle();
      const leases = async () => {
        // The table is made with the first lease taken.
        if ((await hostA.storage.query(`SELECT 1 FROM pg_tables WHERE schemaname = ? AND tablename = 'rm_leases'`, [schema])).length === 0) return [];
        return (await hostA.storage.query(`SELECT name, count(*)::int AS n FROM rm_leases WHERE workspace_id = ? GROUP BY name ORDER BY name`, ['rm'])).map((r) => `${r.name}:${r.n}`);
      };
      // A takes each lease on its first round over an active slot (right after it promoted its first build).
      while ((await leases()).length < 3) await new Promise((r) => setTimeout(r, 10));
      const hostB = readModelHost(b, undefined, longer)!;
      const commitsOfB = jest.spyOn(hostB.storage, 'commit');
      const input = auditQuery.input.parse({ order: 'desc', limit: 1000 });
      /** B's audit answer from its read model at B's head, and the fold's. */
      const answersOfB = async () => {
        const head = await b.store.headPosition();
        return { model: await auditFromRows(hostB.storage, (await hostB.readySlot('audit', head))!, input, head), fold: (await foldQuery(auditQuery, b, input)).value };
      };
      // B answers at A's checkpoint without folding anything itself.
      await hostB.settle();
      const first = await answersOfB();
      expect(first.model).toEqual(first.fold);
      expect(commitsOfB).not.toHaveBeenCalled();
      // Appends through B (another server's commands): A folds them, B's queries wait for A's checkpoint.
      await appendLog(b.store, log.slice(600, 900), 20);
      const later = await answersOfB();
      expect(later.model).toEqual(later.fold);
      expect(commitsOfB).not.toHaveBeenCalled();
      // A closes and gives up its leases (B could not fold before they ran out): B folds what comes next itself, exactly.
      expect(await leases()).toEqual(['audit:1', 'history:1', 'reviewFacts:1']);
      await hostA.close();
      expect(await leases()).toEqual([]);
      await a.close();
      aOpen = false;
      await appendLog(b.store, log.slice(900), 20);
      const last = await answersOfB();
      expect(last.model).toEqual(last.fold);
      expect(commitsOfB).toHaveBeenCalled();
      await hostB.close();
    } finally {
      if (aOpen) await a.close();
      await b.close();
    }
  });
  test('two processes that start the read models of a fresh schema together: each model is built by one of them, under the build\'s lease; the other waits for its promotion and answers the same', async () => {
    const schema = uniqueSchema('rl_rm_build_lease');
    schemas.push(schema);
    const a = await open(schema, fs.mkdtempSync(path.join(os.tmpdir(), 'rl-readmodels-pg-build-a-')));
    const b = await open(schema, fs.mkdtempSync(path.join(os.tmpdir(), 'rl-readmodels-pg-build-b-')));
    try {
      await appendLog(a.store, generateLog({ seed: 29, prs: 8, principals: 6, events: 1500 }), 20);
      // Leases longer than the test: which process builds never depends on how fast this machine is.
      const longer = { leaseMs: 600_000, patienceMs: 600_000 };
      const hosts = [readModelHost(a, undefined, longer)!, readModelHost(b, undefined, longer)!];
      const commits = hosts.map((h) => jest.spyOn(h.storage, 'commit'));
      await Promise.all(hosts.map((h) => h.settle()));
      // Per model, the processes that committed into its first slot (generation 1): one, every time.
      const builders = (name: string) => commits.map((c, i) => (c.mock.calls.some((call) => call[0].name === name && call[0].generation === 1) ? i : -1)).filter((i) => i >= 0);
      for (const name of hosts[0].names) expect({ name, builders: builders(name).length }).toEqual({ name, builders: 1 });
      const input = auditQuery.input.parse({ order: 'desc', limit: 1000 });
      const head = await a.store.headPosition();
      const fold = (await foldQuery(auditQuery, a, input)).value;
      for (const h of hosts) expect(await auditFromRows(h.storage, (await h.readySlot('audit', head))!, input, head)).toEqual(fold);
      await Promise.all(hosts.map((h) => h.close()));
    } finally {
      await a.close();
      await b.close();
    }
  });
  test('a process killed (-9) while it builds a model under the build\'s lease: once its lease runs out, another process builds on from the slot\'s stored checkpoint, to the rows a fold gives', async () => {
    const schema = uniqueSchema('rl_rm_build_kill');
    schemas.push(schema);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-readmodels-pg-build-kill-'));
    const ws = await open(schema, dir);
    let child: ReturnType<typeof spawn> | null = null;
    try {
      await appendLog(ws.store, generateLog({ seed: 31, prs: 10, principals: 8, events: 12_000 }), 50);
      child = spawn(process.execPath, ['-r', path.join(root, 'tools/ts-register.js'), path.join(__dirname, 'build-crash-child.ts'), DATABASE_URL, schema, dir], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
      const exited = new Promise<NodeJS.Signals | null>((resolve) => child!.on('exit', (_code, signal) => resolve(signal)));
      const started = child;
      await new Promise<void>((resolve) => started.stdout!.on('data', (d: Buffer) => d.toString().includes('building') && resolve()));
      // Killed once the audit's first slot has a stored checkpoint part way through the log, not yet promoted.
      const pool = new Pool({ connectionString: DATABASE_URL, max: 1 });
      let stored = 0;
      try {
        for (;;) {
          const r = await pool.query(`SELECT position, ready FROM "${schema}".rm_checkpoints WHERE workspace_id = 'rm' AND name = 'audit' AND generation = 1`).catch(() => ({ rows: [] as Array<{ position: string; ready: number }> }));
          const row = r.rows[0];
          if (row && Number(row.ready) === 1) throw new Error('the child promoted the audit before it could be killed mid-build (make the log longer)');
          if (row && Number(row.position) > 0) {
            started.kill('SIGKILL');
            break;
          }
          await new Promise((res) => setTimeout(res, 2));
        }
        expect(await exited).toBe('SIGKILL');
        stored = Number((await pool.query(`SELECT position FROM "${schema}".rm_checkpoints WHERE workspace_id = 'rm' AND name = 'audit' AND generation = 1`)).rows[0].position);
        // Its lease is still there (it died holding it): nobody else built meanwhile.
        expect((await pool.query(`SELECT count(*)::int AS n FROM "${schema}".rm_leases WHERE name LIKE 'audit@%'`)).rows[0].n).toBe(1);
      } finally {
        await pool.end();
      }
      expect(stored).toBeGreaterThan(0);
      const host = readModelHost(ws, undefined, { batch: 1000 })!;
      const commits = jest.spyOn(host.storage, 'commit');
      await host.settle();
      const audits = commits.mock.calls.filter((c) => c[0].name === 'audit' && c[0].generation === 1);
      // Built on from where the killed process stopped, not from 0 (a commit it had sent may still have landed after the kill).
      expect(audits[0][3]).toBeGreaterThanOrEqual(stored);
      const input = auditQuery.input.parse({ order: 'desc', limit: 1000 });
      const head = await ws.store.headPosition();
      expect(await auditFromRows(host.storage, (await host.readySlot('audit', head))!, input, head)).toEqual((await foldQuery(auditQuery, ws, input)).value);
      await host.close();
    } finally {
      if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await ws.close();
    }
  });
  afterAll(async () => {
    for (const s of schemas) await dropSchema(s);
  });
});
