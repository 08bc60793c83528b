// npm run bench:store [-- --events 100000 --streams 1000 --store sqlite|postgres]
// Our store API vs raw better-sqlite3 with a minimal schema, same machine, same run, FULL and NORMAL.
import Database from 'better-sqlite3';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SqliteEventStore, SynchronousMode } from '../src/events/store/sqlite';
import type { EventStore } from '../src/events/store/port';
import type { NewEvent } from '../src/events/envelope';
import { newUuidV7 } from '../src/events/ids';
import { argValue, round, table } from './support/report';

const PAYLOAD = { fingerprint: 'f'.repeat(40), nodeId: 'node-0000000000', reason: 'r'.repeat(180), confidence: 'low' };
const META = { principal: 'agent:bench', workspaceId: 'bench', correlationId: 'c', causationId: null, occurredAt: '2026-01-01T00:00:00.000Z' } as const;

function makeEvent(): NewEvent {
  return { eventId: newUuidV7(), type: 'SuppressionFactRecorded', schemaVersion: 1, data: PAYLOAD, metadata: { ...META } };
}

const rate = (n: number, ms: number) => Math.round((n / ms) * 1000);

async function ours(dir: string, sync: SynchronousMode, n: number, streams: number) {
  const out: Record<string, number> = {};
  const open = (name: string) => new SqliteEventStore({ file: path.join(dir, `ours-${sync}-${name}.db`), workspaceId: 'bench', synchronous: sync });

  // (a) one event per append, sequential, exact expected revision (what an idempotent command does)
  let store: EventStore = open('a');
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
  await store.close();

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
  await store.close();

  // (d) group commit: 50 concurrent producers, single-event appends, each acknowledged after its commit
  store = open('d');
  const producers = 50;
  const per = Math.ceil(n / producers);
  t = performance.now();
  await Promise.all(
    Array.from({ length: producers }, async (_, p) => {
      let r = -1;
      for (let i = 0; i < per; i++) {
        await store.append(`p-${p}-${i % (streams / producers)}`, 'any', [makeEvent()]);
        r++;
      }
    }),
  );
  out.d = rate(per * producers, performance.now() - t);
  await store.close();
  return out;
}

function raw(dir: string, sync: SynchronousMode, n: number, streams: number) {
  const out: Record<string, number> = {};
  const open = (name: string) => {
    const db = new Database(path.join(dir, `raw-${sync}-${name}.db`));
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${sync}`);
    db.exec('CREATE TABLE ev (id INTEGER PRIMARY KEY, stream TEXT NOT NULL, rev INTEGER NOT NULL, payload TEXT NOT NULL)');
    return db;
  };
  const payload = () => JSON.stringify({ id: newUuidV7(), ...PAYLOAD });
  let db = open('a');
  let ins = db.prepare('INSERT INTO ev (stream, rev, payload) VALUES (?, ?, ?)');
  let t = performance.now();
  for (let i = 0; i < n; i++) ins.run(`s-${i % streams}`, i, payload()); // autocommit: one transaction each
  out.a = rate(n, performance.now() - t);
  t = performance.now();
  let check = 0;
  for (const row of db.prepare('SELECT payload FROM ev ORDER BY id').all() as Array<{ payload: string }>) check += JSON.parse(row.payload).reason.length;
  out.c = rate(n, performance.now() - t);
  if (check !== n * 180) throw new Error('raw read mismatch');
  db.close();

  db = open('b');
  ins = db.prepare('INSERT INTO ev (stream, rev, payload) VALUES (?, ?, ?)');
  const tx = db.transaction((i: number) => {
    for (let k = 0; k < 10; k++) ins.run(`s-${(i / 10) % streams}`, i + k, payload());
  });
  t = performance.now();
  for (let i = 0; i < n; i += 10) tx(i);
  out.b = rate(n, performance.now() - t);
  db.close();
  return out;
}

export async function main(args: string[]) {
  const n = Number(argValue(args, '--events') ?? 100_000);
  const streams = Number(argValue(args, '--streams') ?? 1000);
  const storeKind = argValue(args, '--store') ?? 'sqlite';
  if (storeKind !== 'sqlite') {
    const pg = await import('./store-postgres').catch(() => null);
    if (!pg) throw new Error(`--store ${storeKind}: no benchmark for that adapter in this build`);
    return pg.main(args);
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-bench-store-'));
  console.log(`bench:store — ${n.toLocaleString('en-US')} events of ~300 bytes over ${streams} streams, ${os.cpus().length} cores, Node ${process.version}`);
  const rows: Array<Record<string, string | number>> = [];
  const json: Record<string, unknown> = { bench: 'store', events: n, streams };
  try {
    for (const sync of ['FULL', 'NORMAL'] as SynchronousMode[]) {
      const r = raw(dir, sync, n, streams);
      const o = await ours(dir, sync, n, streams);
      const label: Record<string, string> = { a: '(a) 1 event/append, sequential', b: '(b) 10 events/append', c: '(c) read all, decoded', d: '(d) group commit, 50 producers' };
      for (const k of ['a', 'b', 'c', 'd']) {
        const limit = k === 'd' ? r.a : r[k];
        rows.push({ sync, operation: label[k], 'ours ev/s': o[k], 'raw ev/s': limit, 'ours/raw': round(o[k] / limit, 2) });
        json[`${sync}_${k}_ours`] = o[k];
        json[`${sync}_${k}_raw`] = limit;
        json[`${sync}_${k}_ratio`] = round(o[k] / limit, 2);
      }
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  console.log(table(rows));
  console.log('targets: (a),(b) ≥ 0.5 of raw; (c) ≥ 0.7 of raw; (d) ≥ 5× raw single-event transactions at FULL (raw column of (d) = raw (a))');
  console.log(JSON.stringify(json));
}
