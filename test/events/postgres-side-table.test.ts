import { Pool } from 'pg';
import { ensureSideTable } from '../../src/stores/postgres/side-table';
import { DATABASE_URL, dropSchema, uniqueSchema, whenPostgres } from '../scale/pg-support';

whenPostgres('postgres side tables', () => {
  const schemas: string[] = [];
  afterAll(async () => {
    for (const s of schemas) await dropSchema(s);
  });

  test('sixteen processes making the same side table on a fresh schema at once: all succeed, one table, its DDL run once', async () => {
    const pools = Array.from({ length: 16 }, () => new Pool({ connectionString: DATABASE_URL, max: 1 }));
    try {
      for (let round = 0; round < 4; round++) {
        const schema = uniqueSchema('rl_side');
        schemas.push(schema);
        await pools[0].query(`CREATE SCHEMA "${schema}"`);
        const table = `"${schema}".consumer_positions`;
        // The second statement fails if it runs twice: the DDL of a table runs once, by the lock's holder.
        const ddl = [`CREATE TABLE IF NOT EXISTS ${table} (workspace_id text NOT NULL, consumer text NOT NULL, position bigint NOT NULL, PRIMARY KEY (workspace_id, consumer))`, `INSERT INTO ${table} VALUES ('made', 'once', 0)`];
        const outcomes = await Promise.allSettled(pools.map((pool) => ensureSideTable(pool, schema, 'consumer_positions', ddl)));
        expect(outcomes.map((o) => (o.status === 'fulfilled' ? 'ok' : String(o.reason)))).toEqual(pools.map(() => 'ok'));
        expect((await pools[0].query(`SELECT workspace_id, consumer FROM ${table}`)).rows).toEqual([{ workspace_id: 'made', consumer: 'once' }]);
      }
    } finally {
      await Promise.all(pools.map((p) => p.end()));
    }
  });

  test('an existing table is only looked up: no DDL runs', async () => {
    const schema = uniqueSchema('rl_side');
    schemas.push(schema);
    const pool = new Pool({ connectionString: DATABASE_URL, max: 1 });
    try {
      await pool.query(`CREATE SCHEMA "${schema}"`);
      await pool.query(`CREATE TABLE "${schema}".t (x int)`);
      await ensureSideTable(pool, schema, 't', ['SELECT this_statement_would_fail()']);
    } finally {
      await pool.end();
    }
  });
});
