import type { Statement, Database } from 'better-sqlite3';
import { registerReviewFunctions } from './review-stream-sql';

/** The checkpoint table of the read models (SQLite and PostgreSQL). */
export const CHECKPOINTS = 'rm_checkpoints';

/**
 * One table's writes of a batch, flattened: `ups` holds the upserted rows one after another
 * (`cols.length` values each, in `cols` order), `dels` the deleted keys (`keyCols.length` values each).
 * Plain arrays of strings, numbers and nulls: cheap to post to the writer thread (sqlite-writer.ts).
 */
export interface FlatTableWrites {
  table: string;
  cols: string[];
  keyCols: string[];
  ups: unknown[];
  dels: unknown[];
}

/** One commit of a slot: its writes, then its checkpoint moved from `from` to `to` (see ReadModelStorage.commit). */
export interface CommitJob {
  workspaceId: string;
  name: string;
  version: number;
  generation: number;
  writes: FlatTableWrites[];
  from: number;
  to: number;
  ready: boolean;
  /**
   * A set-based build's statements (src/readmodels/stored/bulk.ts): `prepare` before the transaction (temporary
   * tables only: no write lock held while they compute), `statements` after the writes, before the
   * checkpoint moves.
   */
  prepare?: Array<{ sql: string; params: unknown[] }>;
  statements?: Array<{ sql: string; params: unknown[] }>;
  /** The attached database holding the slot's tables and checkpoint on the committing connection (default `main`). */
  schema?: string;
  /** `prepare` already ran on this connection as SqliteCommitter.prepare(`preparedAs`) (unless that failed: then it runs here). */
  preparedAs?: number;
}

/**
 * The one definition of a read-model commit on SQLite, run by the storage's own connection (live
 * updates) and by the writer thread's (a build's batches): the same statements, in one transaction
 * with the checkpoint move, so rows and checkpoint commit together on either connection.
 */
export class SqliteCommitter {
  private readonly stmts = new Map<string, Statement>();
  /** The token of the `prepare` run last on this connection, until a commit takes it. */
  private prepared: number | undefined;

  constructor(private readonly db: Database) {}

  private stmt(sql: string): Statement {
    let s = this.stmts.get(sql);
    if (!s) this.stmts.set(sql, (s = this.db.prepare(sql)));
    return s;
  }

  /** Statements of dropped tables are prepared again on next use. */
  forget(): void {
    this.stmts.clear();
  }

  /** A chunk's `prepare` (temporary tables, outside any transaction), run before its commit job arrives (which names `token`). */
  prepare(token: number, statements: Array<{ sql: string; params: unknown[] }>): void {
    this.prepared = undefined;
    for (const st of statements) this.stmt(st.sql).run(st.params);
    this.prepared = token;
  }

  commit(job: CommitJob): boolean {
    const prepared = job.preparedAs !== undefined && job.preparedAs === this.prepared;
    this.prepared = undefined;
    if (!prepared) for (const st of job.prepare ?? []) this.stmt(st.sql).run(st.params);
    const schema = job.schema ?? 'main';
    // A deferred transaction whose first statement writes the slot's own file: it takes that file's
    // write lock and no other. BEGIN IMMEDIATE took the write lock of every database attached to the
    // connection — the workspace log (rm_log) too, so each commit, a build's chunk of statements
    // included, held back the log's appends; and the models' files (one per model) could not be
    // written side by side. The checkpoint moves first: unchanged (another process moved it, or the
    // slot was dropped), nothing is written.
    return this.db.transaction(() => {
      const moved = this.stmt(`UPDATE ${schema}.${CHECKPOINTS} SET position = ?, ready = max(ready, ?) WHERE workspace_id = ? AND name = ? AND version = ? AND generation = ? AND position = ?`).run(job.to, job.ready ? 1 : 0, job.workspaceId, job.name, job.version, job.generation, job.from);
      if (moved.changes !== 1) return false;
      for (const w of job.writes) {
        const n = w.cols.length;
        const k = w.keyCols.length;
        if (w.ups.length) {
          // One row per statement: multi-row INSERTs of 8 and 64 rows measured no faster at 200k events.
          const upsert = this.stmt(`INSERT OR REPLACE INTO ${schema}.${w.table} (workspace_id, ${w.cols.join(', ')}) VALUES (?${', ?'.repeat(n)})`);
          const values: unknown[] = new Array(n + 1);
          values[0] = job.workspaceId;
          for (let at = 0; at < w.ups.length; at += n) {
            for (let i = 0; i < n; i++) values[i + 1] = w.ups[at + i];
            upsert.run(values);
          }
        }
        if (w.dels.length) {
          const del = this.stmt(`DELETE FROM ${schema}.${w.table} WHERE workspace_id = ? AND ${w.keyCols.map((c) => `${c} = ?`).join(' AND ')}`);
          const values: unknown[] = new Array(k + 1);
          values[0] = job.workspaceId;
          for (let at = 0; at < w.dels.length; at += k) {
            for (let i = 0; i < k; i++) values[i + 1] = w.dels[at + i];
            del.run(values);
          }
        }
      }
      for (const st of job.statements ?? []) this.stmt(st.sql).run(st.params);
      return true;
    })();
  }
}

/** The connection settings of readmodels.db, on every connection that writes it. */
export function configureReadModelDb(db: Database, logFile?: string): void {
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  // 32 MiB of page cache: a build's primary-key inserts stay in memory between commits.
  db.pragma('cache_size = -32768');
  // ANALYZE samples 1,000 rows per index (see SqliteReadModelStorage): on the writer threads too, which
  // run a build's promotion (unbounded, the audit's and history's statistics of a 200k-event build took
  // ~230 ms of CPU instead of ~14 ms).
  db.pragma('analysis_limit = 1000');
  // The workspace log, for a set-based build's INSERT … SELECT (read only: nothing here writes it).
  if (logFile) db.prepare('ATTACH DATABASE ? AS rm_log').run(logFile);
  registerReviewFunctions(db);
}
