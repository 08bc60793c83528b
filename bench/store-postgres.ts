// npm run bench:store -- --store postgres [--events 10000 --streams 1000 --runs 3]   (DATABASE_URL, default the local test db)
// Our PostgreSQL store vs raw `pg` inserts of the same rows into a minimal table, same server, same run.
// npm run bench:store -- --store postgres --grow 1m [--slice 100k --adapters sqlite,postgres]
// The append phase of bench:scale (its generated workspace log, 500 appends in flight, group commit) on
// SQLite and PostgreSQL, both at NORMAL, to a table growing to N events: the rate per slice (is it flat?),
// CPU per event of this process and of PostgreSQL's processes, and PostgreSQL/SQLite.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client, Pool } from 'pg';
import { PostgresBackend } from '../src/stores/postgres/backend';
import { PostgresEventStore } from '../src/stores/postgres/postgres-event-store';
import type { NewEvent } from '../src/events/envelope';
import { newUuidV7 } from '../src/events/ids';
import { SqliteEventStore } from '../src/stores/sqlite/sqlite-event-store';
import type { EventStore } from '../src/events/store/port';
import { generateLog } from '../test/readmodels/generate';
import { argValue, median, round, table } from './support/report';
import { postgresDelta, postgresTicks } from './support/server-child';

const PAYLOAD = { fingerprint: 'f'.repeat(40), nodeId: 'node-0000000000', reason: 'r'.repeat(180), confidence: 'low' };
const META = { principal: 'agent:bench', workspaceId: 'bench', correlationId: 'c', causationId: null, occurredAt: '2026-01-01T00:00:00.000Z' } as const;
const makeEvent = (): NewEvent => ({ eventId: newUuidV7(), type: 'SuppressionFactRecorded', schemaVersion: 1, data: PAYLOAD, metadata: { ...META } });
const rate = (n: number, ms: number) => Math.round((n / ms) * 1000);

const WRITERS = 8;
const PRODUCERS = 50;

async function ours(url: string, schema: string, run: number, n: number, streams: number) {
  const out: Record<string, number> = {};
  const backend = await PostgresBackend.open({ connectionString: url, schema, poolSize: 4 });
  const open = (name: string) => new PostgresEventStore({ backend, workspaceId: `ours-${run}-${name}` });

  // (a) one event per append, sequential, exact expected revision (what an idempotent command does)
  let store = open('a');
  const rev = new Int32Array(streams).fill(-1);
  let t = performance.now();
  for (let i = 0; i < n; i++) {
    const s = i % streams;
    await store.append(`s-${s}`, rev[s] < 0 ? 'no_stream' : rev[s], [makeEvent()]);
    rev[s]++;
  }
  out.a = rate(n, performance.now() - t);

  // (c) read-all in global order, payloads decoded (on the (a) store)
  t = performance.now();
  let count = 0;
  let check = 0;
  for await (const e of store.readAll()) {
    count++;
    check += (e.data as { reason: string }).reason.length;
  }
  out.c = rate(count, performance.now() - t);
  if (count !== n || check !== n * 180) throw new Error(`read ${count} events`);

  // (b) batches of 10 events per append
  store = open('b');
  rev.fill(-1);
  t = performance.now();
  for (let i = 0; i < n; i += 10) {
    const s = (i / 10) % streams;
    await store.append(`s-${s}`, rev[s] < 0 ? 'no_stream' : rev[s], Array.from({ length: 10 }, makeEvent));
    rev[s] += 10;
  }
  out.b = rate(n, performance.now() - t);

  // (d) group commit: 50 concurrent producers in one process, single-event appends, each acknowledged after its commit
  store = open('d');
  const per = Math.ceil(n / PRODUCERS);
  t = performance.now();
  await Promise.all(
    Array.from({ length: PRODUCERS }, async (_, p) => {
      for (let i = 0; i < per; i++) await store.append(`p-${p}-${i % Math.max(1, streams / PRODUCERS)}`, 'any', [makeEvent()]);
    }),
  );
  out.d = rate(per * PRODUCERS, performance.now() - t);
  await backend.close();

  // (e) 8 concurrent writers on ONE workspace, each with its own pool and connection (as 8 processes
  // would be): every append takes the workspace's head lock, so this is the serialized worst case.
  const backends = await Promise.all(Array.from({ length: WRITERS }, () => PostgresBackend.open({ connectionString: url, schema, poolSize: 1 })));
  const writers = backends.map((b) => new PostgresEventStore({ backend: b, workspaceId: `ours-${run}-e` }));
  const perWriter = Math.ceil(n / WRITERS);
  t = performance.now();
  await Promise.all(writers.map(async (w, k) => {
    for (let i = 0; i < perWriter; i++) await w.append(`w-${k}-${i % 10}`, 'any', [makeEvent()]);
  }));
  out.e = rate(perWriter * WRITERS, performance.now() - t);

  // (f) the same 8 writers, each on its OWN workspace: head locks do not contend, commits overlap.
  const spread = backends.map((b, k) => new PostgresEventStore({ backend: b, workspaceId: `ours-${run}-f-${k}` }));
  t = performance.now();
  await Promise.all(spread.map(async (w, k) => {
    for (let i = 0; i < perWriter; i++) await w.append(`w-${k}-${i % 10}`, 'any', [makeEvent()]);
  }));
  out.f = rate(perWriter * WRITERS, performance.now() - t);
  for (const b of backends) await b.close();
  return out;
}

/** The limit: the same rows into `(id bigserial, stream, rev, payload)`, autocommit, nothing else. */
async function raw(url: string, schema: string, run: number, n: number, streams: number) {
  const out: Record<string, number> = {};
  const tableName = `"${schema}".raw_${run}`;
  const c = new Client({ connectionString: url });
  await c.connect();
  await c.query(`CREATE TABLE ${tableName} (id bigserial PRIMARY KEY, stream text NOT NULL, rev bigint NOT NULL, payload text NOT NULL)`);
  const payload = () => JSON.stringify({ id: newUuidV7(), ...PAYLOAD });
  const insert = { name: `raw-ins-${run}`, text: `INSERT INTO ${tableName} (stream, rev, payload) VALUES ($1, $2, $3)` };
  let t = performance.now();
  for (let i = 0; i < n; i++) await c.query({ ...insert, values: [`s-${i % streams}`, i, payload()] });
  out.a = rate(n, performance.now() - t);

  t = performance.now();
  let check = 0;
  for (const row of (await c.query({ text: `SELECT payload FROM ${tableName} ORDER BY id`, rowMode: 'array' })).rows as Array<[string]>) check += JSON.parse(row[0]).reason.length;
  out.c = rate(n, performance.now() - t);
  if (check !== n * 180) throw new Error('raw read mismatch');

  await c.query(`TRUNCATE ${tableName}`);
  t = performance.now();
  for (let i = 0; i < n; i += 10) {
    await c.query('BEGIN');
    for (let k = 0; k < 10; k++) await c.query({ ...insert, values: [`s-${(i / 10) % streams}`, i + k, payload()] });
    await c.query('COMMIT');
  }
  out.b = rate(n, performance.now() - t);

  // 8 concurrent clients, single-row autocommit inserts: what the server gives 8 writers with no ordering at all.
  await c.query(`TRUNCATE ${tableName}`);
  const pool = new Pool({ connectionString: url, max: WRITERS });
  const perWriter = Math.ceil(n / WRITERS);
  t = performance.now();
  await Promise.all(Array.from({ length: WRITERS }, async (_, k) => {
    const wc = await pool.connect();
    try {
      for (let i = 0; i < perWriter; i++) await wc.query({ ...insert, values: [`w-${k}`, i, payload()] });
    } finally {
      wc.release();
    }
  }));
  out.e = rate(perWriter * WRITERS, performance.now() - t);
  await pool.end();
  await c.end();
  return out;
}

const parseSize = (v: string): number => {
  const m = /^(\d+(?:\.\d+)?)([km]?)$/i.exec(v.trim());
  if (!m) throw new Error(`not a size: ${v}`);
  return Math.round(Number(m[1]) * (m[2].toLowerCase() === 'm' ? 1e6 : m[2].toLowerCase() === 'k' ? 1e3 : 1));
};

/** bench:scale's append phase to a growing table, rate per slice. */
async function grow(args: string[]): Promise<void> {
  const total = parseSize(argValue(args, '--grow')!);
  const slice = parseSize(argValue(args, '--slice') ?? String(Math.max(1, Math.round(total / 10))));
  const adapters = (argValue(args, '--adapters') ?? 'sqlite,postgres').split(',');
  const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const inFlight = 500;
  const load = () => os.loadavg().map((x) => x.toFixed(1)).join(' ');
  console.log(`bench:store --grow — ${total.toLocaleString('en-US')} events of bench:scale's generated log, ${inFlight} appends in flight, slices of ${slice.toLocaleString('en-US')}, NORMAL on both; ${os.cpus().length} cores, load ${load()}, Node ${process.version}`);
  const json: Record<string, unknown> = { bench: 'store-grow', events: total, slice };
  for (const adapter of adapters) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-bench-grow-'));
    const schema = `rl_grow_${process.pid}`;
    let store: EventStore;
    let close: () => Promise<void>;
    if (adapter === 'sqlite') {
      const s = new SqliteEventStore({ file: path.join(dir, 'workspace.db'), workspaceId: 'scale', synchronous: 'NORMAL' });
      store = s;
      close = () => s.close();
    } else {
      const backend = await PostgresBackend.open({ connectionString: url, schema, poolSize: 8, synchronousCommit: false });
      const s = new PostgresEventStore({ backend, workspaceId: 'scale' });
      store = s;
      close = async () => {
        await s.close();
        await backend.close();
        const c = new Client({ connectionString: url });
        await c.connect();
        await c.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await c.end();
      };
    }
    const slices: Array<{ upTo: number; eventsPerSecond: number; cpuUsPerEvent: number; postgresCpuUsPerEvent?: number }> = [];
    try {
      const gen = generateLog({ seed: 2026, prs: 50_000, principals: 200, events: total, repos: 20, workspaceId: 'scale', startAt: '2025-01-01T00:00:00.000Z' });
      let n = 0;
      let mark = slice;
      let t = performance.now();
      const t0 = t;
      let cpu = process.cpuUsage();
      let pg = adapter === 'postgres' ? postgresTicks() : null;
      let batch: Promise<unknown>[] = [];
      for (const a of gen) {
        batch.push(store.append(a.streamId, 'any', a.events));
        n += a.events.length;
        if (batch.length >= inFlight || n >= mark) {
          await Promise.all(batch);
          batch = [];
        }
        if (n >= mark) {
          const now = performance.now();
          const c = process.cpuUsage(cpu);
          const events = n - (slices.length ? slices[slices.length - 1].upTo : 0);
          const row = { upTo: n, eventsPerSecond: Math.round(events / ((now - t) / 1000)), cpuUsPerEvent: round((c.user + c.system) / events, 1), ...(pg ? { postgresCpuUsPerEvent: round((postgresDelta(pg) * 1000) / events, 1) } : {}) };
          slices.push(row);
          console.log(`  ${adapter}: ${n.toLocaleString('en-US')} events, ${row.eventsPerSecond.toLocaleString('en-US')} ev/s this slice, this process ${row.cpuUsPerEvent} µs CPU/event${pg ? `, PostgreSQL ${row.postgresCpuUsPerEvent} µs` : ''}, load ${load()}`);
          mark += slice;
          t = performance.now();
          cpu = process.cpuUsage();
          if (pg) pg = postgresTicks();
        }
      }
      await Promise.all(batch);
      const seconds = (performance.now() - t0) / 1000;
      const rates = slices.map((x) => x.eventsPerSecond);
      json[adapter] = { eventsPerSecond: Math.round(n / seconds), seconds: round(seconds, 1), lastOverFirstSlice: round(rates[rates.length - 1] / rates[0], 2), slices };
      console.log(`  ${adapter}: ${n.toLocaleString('en-US')} events in ${seconds.toFixed(1)} s = ${Math.round(n / seconds).toLocaleString('en-US')} ev/s; last/first slice ${round(rates[rates.length - 1] / rates[0], 2)}`);
    } finally {
      await close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
  const rate = (a: string) => (json[a] as { eventsPerSecond: number } | undefined)?.eventsPerSecond;
  if (rate('sqlite') && rate('postgres')) json.postgresOverSqlite = round(rate('postgres')! / rate('sqlite')!, 3);
  json.load = load();
  console.log('targets: PostgreSQL ≥ 0.25 × SQLite (NORMAL), last slice within ±20 % of the first');
  console.log(JSON.stringify(json));
}

export async function main(args: string[]) {
  if (argValue(args, '--grow') !== undefined) return grow(args);
  const n = Number(argValue(args, '--events') ?? 10_000);
  const streams = Number(argValue(args, '--streams') ?? 1000);
  const runs = Number(argValue(args, '--runs') ?? 3);
  const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const schema = `rl_bench_${process.pid}`;
  const admin = new Client({ connectionString: url });
  await admin.connect();
  const server = (await admin.query('SHOW server_version')).rows[0].server_version as string;
  const sync = (await admin.query('SHOW synchronous_commit')).rows[0].synchronous_commit as string;
  await admin.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
  console.log(`bench:store --store postgres — ${n.toLocaleString('en-US')} events of ~300 bytes over ${streams} streams, ${runs} runs (medians), PostgreSQL ${server} (synchronous_commit=${sync}), ${os.cpus().length} cores, Node ${process.version}`);
  const samples: Record<string, { ours: number[]; raw: number[] }> = {};
  try {
    for (let run = 0; run < runs; run++) {
      // Alternate the order so neither side always runs on a warmer server.
      const r = run % 2 ? await raw(url, schema, run, n, streams) : null;
      const o = await ours(url, schema, run, n, streams);
      const rr = r ?? (await raw(url, schema, run, n, streams));
      for (const k of ['a', 'b', 'c', 'd', 'e', 'f']) {
        samples[k] ??= { ours: [], raw: [] };
        samples[k].ours.push(o[k]);
        samples[k].raw.push(k === 'd' ? rr.a : k === 'f' ? rr.e : rr[k]);
      }
    }
  } finally {
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end();
  }
  const label: Record<string, string> = {
    a: '(a) 1 event/append, sequential',
    b: '(b) 10 events/append',
    c: '(c) read all, decoded',
    d: `(d) group commit, ${PRODUCERS} producers`,
    e: `(e) ${WRITERS} concurrent writers, 1 workspace`,
    f: `(f) ${WRITERS} concurrent writers, ${WRITERS} workspaces`,
  };
  const rows: Array<Record<string, string | number>> = [];
  const json: Record<string, unknown> = { bench: 'store', store: 'postgres', events: n, streams, runs };
  for (const k of ['a', 'b', 'c', 'd', 'e', 'f']) {
    const o = median(samples[k].ours);
    const r = median(samples[k].raw);
    rows.push({ operation: label[k], 'ours ev/s': o, 'raw pg ev/s': r, 'ours/raw': round(o / r, 2) });
    json[`${k}_ours`] = o;
    json[`${k}_raw`] = r;
    json[`${k}_ratio`] = round(o / r, 2);
  }
  console.log(table(rows));
  console.log(
    'raw = the same rows into a minimal bigserial table: (a)/(d) autocommit single-row inserts, (b) 10 inserts per transaction, (c) SELECT + JSON.parse, (e)/(f) 8 connections inserting concurrently with no ordering guarantee.',
  );
  console.log(JSON.stringify(json));
}
