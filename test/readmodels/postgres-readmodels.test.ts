import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { PostgresBackend, PostgresEventStore } from '../../src/events/store/postgres';
import { DATABASE_URL, dropSchema, uniqueSchema, whenPostgres } from '../scale/pg-support';
import { readModelConformance, Workspace } from './conformance';

whenPostgres('postgres read models', () => {
  const schemas: string[] = [];
  const open = async (schema: string, dir: string): Promise<Workspace & { schema: string }> => {
    const backend = await PostgresBackend.open({ connectionString: DATABASE_URL, schema, poolSize: 4 });
    const store = await PostgresEventStore.open({ backend, workspaceId: 'rm' });
    return {
      id: 'rm',
      dir,
      store,
      cache: new Map(),
      schema,
      close: async () => {
        await store.close();
        await backend.close();
      },
    };
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
  afterAll(async () => {
    for (const s of schemas) await dropSchema(s);
  });
});
