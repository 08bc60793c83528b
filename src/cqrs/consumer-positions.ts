import * as path from 'node:path';
import type { Pool } from 'pg';
import type { WorkspaceHandle } from '../workspaces/registry';
import { openSideDatabase } from '../stores/sqlite/side-database';
import { ensureSideTable } from '../stores/postgres/side-table';

/**
 * Where each checkpointed events handler or saga (a "consumer") of the EventBus got to in one
 * workspace's log: the global position up to which everything it was given has been handled. The
 * feed resumes a workspace from the lowest position of its consumers instead of replaying the log.
 * Committed after handling, never before: a crash re-delivers, it never skips.
 */
export interface ConsumerPositions {
  read(consumers: readonly string[]): Promise<Map<string, number>>;
  /** Only moves forward: a lower position than the stored one is ignored. */
  commit(positions: ReadonlyMap<string, number>): Promise<void>;
  close(): Promise<void>;
}

const TABLE = 'consumer_positions';

/** SQLite beside the workspace's log (also for KurrentDB, whose log is on the server): `<ws.dir>/consumers.db`. */
class SqliteConsumerPositions implements ConsumerPositions {
  private readonly db: import('better-sqlite3').Database;

  constructor(dir: string) {
    // Damaged: replaced, and each consumer starts again from the start of the log (re-delivery, never a skip).
    this.db = openSideDatabase(path.join(dir, 'consumers.db'), { replaceWhenDamaged: 'consumers are given the log again from its start (they handle re-delivery)' });
    this.db.exec(`CREATE TABLE IF NOT EXISTS ${TABLE} (consumer TEXT PRIMARY KEY, position INTEGER NOT NULL)`);
  }

  async read(consumers: readonly string[]): Promise<Map<string, number>> {
    const get = this.db.prepare(`SELECT position FROM ${TABLE} WHERE consumer = ?`);
    return new Map(consumers.map((c) => [c, (get.get(c) as { position: number } | undefined)?.position ?? 0]));
  }

  async commit(positions: ReadonlyMap<string, number>): Promise<void> {
    const put = this.db.prepare(`INSERT INTO ${TABLE} (consumer, position) VALUES (?, ?) ON CONFLICT (consumer) DO UPDATE SET position = excluded.position WHERE excluded.position > ${TABLE}.position`);
    this.db.transaction(() => {
      for (const [c, p] of positions) put.run(c, p);
    })();
  }

  async close(): Promise<void> {
    this.db.close();
  }
}

/** PostgreSQL: a table in the store's schema, one row per (workspace, consumer). */
class PostgresConsumerPositions implements ConsumerPositions {
  private ready: Promise<void> | null = null;
  private readonly t: string;
  private readonly schema: string;

  constructor(private readonly workspaceId: string, private readonly pool: Pool, schema: string) {
    this.schema = schema;
    this.t = `"${schema}".${TABLE}`;
  }

  private init(): Promise<void> {
    this.ready ??= ensureSideTable(this.pool, this.schema, TABLE, [`CREATE TABLE IF NOT EXISTS ${this.t} (workspace_id text NOT NULL, consumer text NOT NULL, position bigint NOT NULL, PRIMARY KEY (workspace_id, consumer))`]).catch((err) => {
      this.ready = null;
      throw err;
    });
    return this.ready;
  }

  async read(consumers: readonly string[]): Promise<Map<string, number>> {
    await this.init();
    const { rows } = await this.pool.query<{ consumer: string; position: string }>(`SELECT consumer, position FROM ${this.t} WHERE workspace_id = $1 AND consumer = ANY($2)`, [this.workspaceId, consumers]);
    const stored = new Map(rows.map((r) => [r.consumer, Number(r.position)]));
    return new Map(consumers.map((c) => [c, stored.get(c) ?? 0]));
  }

  async commit(positions: ReadonlyMap<string, number>): Promise<void> {
    if (positions.size === 0) return;
    await this.init();
    await this.pool.query(
      `INSERT INTO ${this.t} (workspace_id, consumer, position) SELECT $1, c, p FROM unnest($2::text[], $3::bigint[]) AS x(c, p)
       ON CONFLICT (workspace_id, consumer) DO UPDATE SET position = excluded.position WHERE excluded.position > ${this.t}.position`,
      [this.workspaceId, [...positions.keys()], [...positions.values()]],
    );
  }

  async close(): Promise<void> {
    // The pool is the store's.
  }
}

/** The store's own technology: PostgreSQL in its schema, else SQLite beside the log. */
export function consumerPositionsFor(ws: WorkspaceHandle): ConsumerPositions {
  const store = ws.store as { adapter: string; backend?: { pool: Pool; schema: string } };
  if (store.adapter === 'postgres' && store.backend) return new PostgresConsumerPositions(ws.id, store.backend.pool, store.backend.schema);
  return new SqliteConsumerPositions(ws.dir);
}
