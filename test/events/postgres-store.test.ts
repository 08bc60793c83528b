import { PostgresBackend } from '../../src/stores/postgres/backend';
import { PostgresEventStore } from '../../src/stores/postgres/postgres-event-store';
import { DATABASE_URL, dropSchema, uniqueSchema, whenPostgres } from '../scale/pg-support';
import { eventStoreConformance } from './store-conformance';

whenPostgres('postgres store', () => {
  const schema = uniqueSchema('rl_conf');
  let backend: Promise<PostgresBackend> | null = null;
  let n = 0;
  eventStoreConformance('postgres', async () => {
    backend ??= PostgresBackend.open({ connectionString: DATABASE_URL, schema, poolSize: 4 });
    // A fresh workspace per test: the rows of other workspaces in the same table must stay invisible.
    return PostgresEventStore.open({ backend: await backend, workspaceId: `ws-${++n}` });
  });
  afterAll(async () => {
    if (backend) await (await backend).close();
    await dropSchema(schema);
  });
});
