// Profiling aid for the read models' rebuild (not an npm script): node bench/run.js readmodels-rebuild --dir D [--events N]
// Generates the log once into D (kept between runs), then rebuilds every model from 0 and prints events/s.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { SqliteEventStore } from '../src/events/store/sqlite';
import { readModelHost } from '../src/readmodels/registry';
import { appendLog, generateLog } from '../test/readmodels/generate';
import { argValue } from './support/report';

export async function main(args: string[]): Promise<void> {
  const dir = argValue(args, '--dir')!;
  const events = Number(argValue(args, '--events') ?? 100_000);
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'workspace.db');
  const fresh = !fs.existsSync(file);
  const store = new SqliteEventStore({ file, workspaceId: 'scale', synchronous: 'NORMAL' });
  if (fresh) await appendLog(store, generateLog({ seed: 2026, prs: events / 20, principals: 200, events, repos: 20, workspaceId: 'scale' }), 500);
  const host = readModelHost({ id: 'scale', dir, store, cache: new Map() })!;
  await host.settle();
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const slots = await host.rebuildAll(host.names);
  const s = (performance.now() - t0) / 1000;
  const c = process.cpuUsage(c0);
  const cpu = (c.user + c.system) / 1e6;
  console.log(JSON.stringify({ events: slots[0].position, models: host.names, seconds: Math.round(s * 100) / 100, eventsPerSecond: Math.round(slots[0].position / s), cpuSeconds: Math.round(cpu * 100) / 100, eventsPerCpuSecond: Math.round(slots[0].position / cpu) }));
  await host.close();
  await store.close();
}
