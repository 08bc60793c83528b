import { PostgresBackend } from '../../src/stores/postgres/backend';
import { DATABASE_URL, dropSchema, uniqueSchema, whenPostgres } from '../scale/pg-support';
import { postgresBackdoor } from './support';
import { tamperSuite } from './tamper-cases';

whenPostgres('postgres tamper evidence', () => {
  const schema = uniqueSchema('rl_tamper');
  let backend: Promise<PostgresBackend> | null = null;
  let n = 0;
  // Every case in its own workspace of one shared table: the other workspaces' rows must not matter.
  tamperSuite('postgres tables', async () => {
    backend ??= PostgresBackend.open({ connectionString: DATABASE_URL, schema, poolSize: 4 });
    return postgresBackdoor(await backend, `tamper-${++n}`);
  });
  afterAll(async () => {
    if (backend) await (await backend).close();
    await dropSchema(schema);
  });
});
