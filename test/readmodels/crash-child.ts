// Maintains every read model of an existing workspace while appending, then dies by SIGKILL:
// `self`: right after an append was acknowledged, before the model could see it (the model's update
// runs on a later turn of the event loop); `parent`: keeps appending until the parent kills it.
// Prints "live" once the model is caught up, then "ack <position>" per acknowledged append.
import type { EventStore } from '../../src/events/store/port';
import { SqliteEventStore } from '../../src/stores/sqlite/sqlite-event-store';
import { PostgresBackend } from '../../src/stores/postgres/backend';
import { PostgresEventStore } from '../../src/stores/postgres/postgres-event-store';
import { KurrentDbConnection, KurrentDbEventStore } from '../../src/stores/kurrentdb/kurrentdb-event-store';
import { Pool } from 'pg';
import { readModelHost } from '../../src/readmodels/stored/registry';
import { appendLog, generateLog } from './generate';
import { SlotMap } from '../../src/slots';

async function open(args: string[]): Promise<{ store: EventStore; dir: string; id: string }> {
  if (args[0] === 'sqlite') {
    return { store: new SqliteEventStore({ file: `${args[1]}/workspace.db`, workspaceId: 'rm' }), dir: args[1], id: 'rm' };
  }
  if (args[0] === 'kurrentdb') {
    // kurrentdb <KURRENTDB_URL> <DATABASE_URL> <schema> <dir> <workspaceId>: read models in the catalogue database.
    const store = new KurrentDbEventStore({ connection: new KurrentDbConnection(args[1]), workspaceId: args[5], ownsConnection: true, readModels: { pool: new Pool({ connectionString: args[2], max: 4 }), schema: args[3] } });
    return { store, dir: args[4], id: args[5] };
  }
  const backend = await PostgresBackend.open({ connectionString: args[1], schema: args[2], poolSize: 4 });
  return { store: await PostgresEventStore.open({ backend, workspaceId: 'rm' }), dir: args[3], id: 'rm' };
}

async function main(): Promise<void> {
  const [killOn, ...rest] = process.argv.slice(2);
  const { store, dir, id } = await open(rest);
  const host = readModelHost({ id, dir, store, cache: new SlotMap() })!;
  await host.settle();
  process.stdout.write('live\n');
  const appends = generateLog({ seed: 99, prs: 5, principals: 12, events: 1_000_000, startAt: '2025-06-01T00:00:00.000Z' });
  if (killOn === 'self') {
    for (let i = 0; i < 50; i++) {
      const a = appends.next().value!;
      const r = await store.append(a.streamId, 'any', a.events);
      if (i < 49) {
        await host.settle();
        continue;
      }
      process.stdout.write(`ack ${r.lastPosition}\n`);
      process.kill(process.pid, 'SIGKILL');
    }
  }
  for (;;) {
    const chunk: Array<{ streamId: string; events: any[] }> = [];
    for (let i = 0; i < 20; i++) chunk.push(appends.next().value!);
    await appendLog(store, chunk, 20);
    process.stdout.write(`ack ${await store.headPosition()}\n`);
  }
}
void main();
