import type { Pool, PoolClient } from 'pg';
import { isConnectionError } from './connection-errors';

/**
 * Makes a side table (read-model checkpoints, consumer positions) once per schema, safely when several
 * processes open a fresh schema together. `CREATE TABLE IF NOT EXISTS` is not safe against a concurrent
 * creator: the loser fails with 42P07, or on pg_type with 42710 or 23505. So the usual case only looks the
 * table up (no DDL, no lock), and a creator works in a transaction under an advisory lock that the others
 * wait on, looking again once it holds it. The look-up reads pg_tables with the statement's snapshot:
 * to_regclass answers from the backend's catalog cache, which an advisory lock does not refresh, so a
 * waiter could still miss the table its predecessor just committed.
 */
export async function ensureSideTable(pool: Pool, schema: string, name: string, ddl: readonly string[]): Promise<void> {
  const table = `"${schema}".${name}`;
  const exists = async (c: Pool | PoolClient) => (await c.query('SELECT 1 FROM pg_tables WHERE schemaname = $1 AND tablename = $2', [schema, name])).rowCount! > 0;
  if (await exists(pool)) return;
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`side-table ${table}`]);
    if (!(await exists(client))) for (const statement of ddl) await client.query(statement);
    await client.query('COMMIT');
  } catch (err) {
    // A lost or timed-out connection goes back with its error: the pool drops it instead of reusing it.
    if (isConnectionError(err)) broken = err as Error;
    else await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release(broken);
  }
}
