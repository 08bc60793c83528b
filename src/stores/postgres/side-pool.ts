import type { Pool } from 'pg';

/** A PostgreSQL pool for side tables that live outside the event store's own pool (KurrentDB's read models). */
export function openSidePool(connectionString: string, max = 4): Pool {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const pg = require('pg') as typeof import('pg');
  return new pg.Pool({ connectionString, max });
}
