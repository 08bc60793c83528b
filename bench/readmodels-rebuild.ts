// Profiling aid for the read models' rebuild (not an npm script):
//   node bench/run.js readmodels-rebuild --dir D [--events N] [--pg SCHEMA]
// Generates the log once into D (SQLite) or into the PostgreSQL schema SCHEMA (both kept between runs:
// drop the schema yourself), then rebuilds every model from 0 and prints events/s.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { SqliteEventStore } from '../src/stores/sqlite/sqlite-event-store';
import { PostgresBackend } from '../src/stores/postgres/backend';
import { PostgresEventStore } from '../src/stores/postgres/postgres-event-store';
import type { EventStore } from '../src/events/store/port';
import { readModelHost } from '../src/readmodels/stored/registry';
import { appendLog, generateLog } from '../test/readmodels/generate';
import { DATABASE_URL } from '../test/scale/pg-support';
import { argValue } from './support/report';
import { SlotMap } from '../src/slots';

/** CPU seconds of the main thread alone (Linux: /proc; null elsewhere): the fold's critical path, without the writer thread and GC helpers. */
function mainThreadCpu(): number | null {
  try {
    const f = fs.readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return null;
  }
}

export async function main(args: string[]): Promise<void> {
  const dir = argValue(args, '--dir')!;
  const events = Number(argValue(args, '--events') ?? 100_000);
  const schema = argValue(args, '--pg');
  fs.mkdirSync(dir, { recursive: true });
  let store: EventStore;
  let close: () => Promise<void>;
  if (schema) {
    const backend = await PostgresBackend.open({ connectionString: DATABASE_URL, schema, poolSize: 8 });
    const pg = await PostgresEventStore.open({ backend, workspaceId: 'scale' });
    store = pg;
    close = async () => {
      await pg.close();
      await backend.close();
    };
  } else {
    const sqlite = new SqliteEventStore({ file: path.join(dir, 'workspace.db'), workspaceId: 'scale', synchronous: 'NORMAL' });
    store = sqlite;
    close = () => sqlite.close();
  }
  if ((await store.headPosition()) === 0) await appendLog(store, generateLog({ seed: 2026, prs: events / 20, principals: 200, events, repos: 20, workspaceId: 'scale' }), 500);
  const host = readModelHost({ id: 'scale', dir, store, cache: new SlotMap() })!;
  await host.settle();
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const m0 = mainThreadCpu();
  const slots = await host.rebuildAll(host.names);
  const s = (performance.now() - t0) / 1000;
  const c = process.cpuUsage(c0);
  const m1 = mainThreadCpu();
  const cpu = (c.user + c.system) / 1e6;
  const r2 = (x: number): number => Math.round(x * 100) / 100;
  console.log(JSON.stringify({ adapter: store.adapter, events: slots[0].position, models: host.names, seconds: r2(s), eventsPerSecond: Math.round(slots[0].position / s), cpuSeconds: r2(cpu), userSeconds: r2(c.user / 1e6), systemSeconds: r2(c.system / 1e6), eventsPerCpuSecond: Math.round(slots[0].position / cpu), mainThreadCpuSeconds: m0 === null || m1 === null ? null : r2(m1 - m0) }));
  await host.close();
  await close();
}
