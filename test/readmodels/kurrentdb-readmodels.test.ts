import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Pool } from 'pg';
import { newUuidV7 } from '../../src/events/ids';
import { KurrentDbConnection, KurrentDbEventStore } from '../../src/stores/kurrentdb/kurrentdb-event-store';
import { DATABASE_URL, dropSchema, uniqueSchema } from '../scale/pg-support';
import { readModelConformance, Workspace } from './conformance';
import { SlotMap } from '../../src/slots';

// KurrentDB has no tables: its read models live in the catalogue's PostgreSQL database. Both servers
// are needed; this machine has no KurrentDB (docs/stores.md), so without KURRENTDB_URL the suite is not run.
const url = process.env.KURRENTDB_URL;

if (url && process.env.DATABASE_URL) {
  const run = newUuidV7().slice(-12);
  let n = 0;
  const schemas: string[] = [];
  const pools: Pool[] = [];
  const open = (workspaceId: string, schema: string, dir: string): Workspace & { schema: string } => {
    const pool = new Pool({ connectionString: DATABASE_URL, max: 4 });
    pools.push(pool);
    const store = new KurrentDbEventStore({ connection: new KurrentDbConnection(url), workspaceId, ownsConnection: true, readModels: { pool, schema } });
    return { id: workspaceId, dir, store, cache: new SlotMap(), schema, close: () => store.close() };
  };
  readModelConformance('kurrentdb', {
    // A fresh workspace prefix per test (KurrentDB keeps earlier runs' streams) and a schema for its rows.
    fresh: async () => {
      const schema = uniqueSchema('rl_rm_kdb');
      schemas.push(schema);
      return open(`kdb-rm-${run}-${++n}`, schema, fs.mkdtempSync(path.join(os.tmpdir(), 'rl-readmodels-kdb-')));
    },
    childArgs: (ws) => ['kurrentdb', url, DATABASE_URL, (ws as unknown as { schema: string }).schema, ws.dir, ws.id],
    reopen: async (ws) => open(ws.id, (ws as unknown as { schema: string }).schema, ws.dir),
    // The catalogue database holds no log: every build folds in JS.
    setBased: false,
  });
  afterAll(async () => {
    for (const p of pools) await p.end().catch(() => undefined);
    for (const s of schemas) await dropSchema(s);
  });
} else {
  console.log('kurrentdb read models: KURRENTDB_URL (and DATABASE_URL for the catalogue database) not set, so the read-model conformance suite is not run against KurrentDB (no server on this machine)');
  test('kurrentdb read-model conformance is not run: KURRENTDB_URL or DATABASE_URL is not set', () => {
    expect(process.env.KURRENTDB_URL === undefined || process.env.DATABASE_URL === undefined).toBe(true);
  });
}
