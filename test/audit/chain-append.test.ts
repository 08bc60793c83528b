import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { PostgresBackend } from '../../src/stores/postgres/backend';
import { PostgresEventStore } from '../../src/stores/postgres/postgres-event-store';
import { SqliteEventStore } from '../../src/stores/sqlite/sqlite-event-store';
import { DATABASE_URL, dropSchema, uniqueSchema, whenPostgres } from '../scale/pg-support';
import { chainAppendSuite } from './chain-append-cases';

const dirs: string[] = [];
const files = new Map<unknown, string>();
chainAppendSuite(
  'sqlite',
  async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-chain-'));
    dirs.push(dir);
    const store = new SqliteEventStore({ file: path.join(dir, 'workspace.db'), workspaceId: 'chain' });
    files.set(store, path.join(dir, 'workspace.db'));
    return store;
  },
  async (first) => new SqliteEventStore({ file: files.get(first)!, workspaceId: 'chain' }),
);
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

whenPostgres('postgres hash chain', () => {
  const schema = uniqueSchema('rl_chain');
  let backend: Promise<PostgresBackend> | null = null;
  let second: Promise<PostgresBackend> | null = null;
  let n = 0;
  chainAppendSuite(
    'postgres',
    async () => {
      backend ??= PostgresBackend.open({ connectionString: DATABASE_URL, schema, poolSize: 4 });
      return new PostgresEventStore({ backend: await backend, workspaceId: `chain-${++n}` });
    },
    // A second backend = a second process on the same database.
    async (first) => {
      second ??= PostgresBackend.open({ connectionString: DATABASE_URL, schema, poolSize: 4 });
      return new PostgresEventStore({ backend: await second, workspaceId: first.workspaceId });
    },
  );
  afterAll(async () => {
    for (const b of [backend, second]) if (b) await (await b).close();
    await dropSchema(schema);
  });
});
