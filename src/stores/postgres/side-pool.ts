import type { Pool } from 'pg';

/** A PostgreSQL pool for side tables that live outside the event store's own pool (KurrentDB's read models). */
export function openSidePool(connectionString: string, max = 4): Pool {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const pg = require('pg') as typeof import('pg');
  const pool = new pg.Pool({ connectionString, max });
  // An idle connection ended by the server (a restart, pg_terminate_backend, idle_session_timeout) is
  // emitted as the pool's 'error': unheard, it would end the process. The pool drops it; the next query
  // connects afresh, and a query on a lost connection fails on its own.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}
