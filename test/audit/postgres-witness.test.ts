import { PostgresBackend } from '../../src/stores/postgres/backend';
import { DATABASE_URL, dropSchema, uniqueSchema, whenPostgres } from '../scale/pg-support';
import { postgresBackdoor } from './support';
import { witnessSuite } from './witness-cases';
import { auditRowsSuite } from './audit-rows-cases';

whenPostgres('postgres receipts and witness', () => {
  const schema = uniqueSchema('rl_witness');
  let backend: Promise<PostgresBackend> | null = null;
  let n = 0;
  // Every case in its own workspace of one shared table: the other workspaces' rows must not matter.
  witnessSuite('postgres tables', async () => {
    backend ??= PostgresBackend.open({ connectionString: DATABASE_URL, schema, poolSize: 4 });
    return postgresBackdoor(await backend, `witness-${++n}`);
  });
  auditRowsSuite('postgres tables', async () => {
    backend ??= PostgresBackend.open({ connectionString: DATABASE_URL, schema, poolSize: 4 });
    return postgresBackdoor(await backend, `rows-${++n}`);
  });
  afterAll(async () => {
    if (backend) await (await backend).close();
    await dropSchema(schema);
  });
});
