import { createHash } from 'node:crypto';
import * as path from 'node:path';
import type { Pool } from 'pg';
import { isStoreDamagedError, touchPrivate } from '../../stores/private-files';
import { unavailable } from '../../stores/postgres/connection-errors';
import { ensureSideTable } from '../../stores/postgres/side-table';
import type { ColumnType, Row, TableSpec } from './model';
import { CHECKPOINTS, configureReadModelDb, SqliteCommitter, type CommitJob, type FlatTableWrites } from './sqlite-commit';
import { SqliteWriter } from './sqlite-writer';
import { postgresDialect, sqliteDialect, type BulkDialect, type BulkStatements } from './bulk';
import { openSideDatabase, quarantineDamaged } from '../../stores/sqlite/side-database';

/** One table set of one model version: `rm_<name>_v<version>_g<generation>_<table>`. */
export interface Slot {
  name: string;
  version: number;
  generation: number;
  /** Last global position folded into the rows (committed with them). */
  position: number;
  /** Caught up with the head once: only a ready slot answers queries. */
  ready: boolean;
}

export const tableName = (slot: Pick<Slot, 'name' | 'version' | 'generation'>, table: string): string => `rm_${slot.name}_v${slot.version}_g${slot.generation}_${table}`;

/** Final state per table and primary key of one batch: a row to upsert, or null to delete. */
export type WriteSet = Map<string, Map<string, { key: Row; row: Row | null }>>;

/** A primary key as one Map key: the value itself for one-column keys (the common case, no allocation), else joined by NUL. */
export const keyString = (spec: TableSpec, row: Row): string => (spec.key.length === 1 ? `${row[spec.key[0]] ?? '\u0000null'}` : spec.key.map((k) => row[k] ?? '\u0000null').join('\u0000'));

/**
 * The SQL behind the read models of one workspace, on the store's own technology. Statements are
 * written once with `?` placeholders; every table leads with workspace_id.
 */
export interface ReadModelStorage {
  readonly kind: 'sqlite' | 'postgres';
  readonly workspaceId: string;
  slots(name: string): Promise<Slot[]>;
  /** Creates a slot's tables and its checkpoint row at position 0 (not ready). */
  createSlot(slot: Slot, specs: TableSpec[]): Promise<void>;
  /** Drops a slot's tables and checkpoint row. */
  dropSlot(slot: Pick<Slot, 'name' | 'version' | 'generation'>, specs: TableSpec[] | null): Promise<void>;
  getRow(slot: Slot, spec: TableSpec, key: Row): Promise<Row | undefined>;
  /** The stored rows of these keys (those that exist, in any order): one statement, not one per key. */
  getRows(slot: Slot, spec: TableSpec, keys: Row[]): Promise<Row[]>;
  /**
   * One transaction: the writes, then the checkpoint moved from `from` to `to` (and `ready` when set).
   * Returns false, writing nothing, when the stored checkpoint is not `from` (another process moved it).
   * `behind`: a building slot's batch, which the caller does not wait for before folding the next one
   * (SQLite commits it on a writer thread, so the fold and the inserts use both cores; it must not read
   * the slot's rows back before this resolves). The writes are copied before this returns. `'last'`:
   * such a batch that reached the head as last read (SQLite starts no writer thread for it alone).
   */
  commit(slot: Slot, specs: TableSpec[], writes: WriteSet, from: number, to: number, ready: boolean, behind?: boolean | 'last', statements?: BulkStatements): Promise<boolean>;
  /** The SQL of a set-based build of `slot` (src/readmodels/stored/bulk.ts); null when the log is not in reach of this storage's statements. */
  bulkDialect(slot: Slot): BulkDialect | null;
  /**
   * A building slot's next chunk, whose statements say `ahead`: its `prepare` may start now, while the
   * chunk before is still committing (SQLite: on a second writer thread of the slot's file, which then
   * commits it). Its commit() comes later, with the same statements, once the chunk before landed.
   */
  prepareAhead?(slot: Slot, statements: BulkStatements): void;
  /**
   * Storage shared by several processes (PostgreSQL): takes or renews, for `ms`, the lease on folding model
   * `name` of this workspace for `holder`; false while another holder's lease runs. Without it every server
   * that answers queries folds every event into the same tables and all but one of them find the
   * checkpoint moved at commit (measured with two servers: 2,511 such rounds beside 4,360 commits).
   */
  lead?(name: string, holder: string, ms: number): Promise<boolean>;
  /** Ends `holder`'s lease on model `name` (nothing when another holds it). */
  resign?(name: string, holder: string): Promise<void>;
  /** The stored checkpoint of `slot` (null: the slot is gone): how a process that does not fold follows the one that does. */
  position?(slot: Pick<Slot, 'name' | 'version' | 'generation'>): Promise<number | null>;
  /** Marks `winner` ready and drops `losers` in one transaction (blue/green flip). */
  promote(winner: Slot, specs: TableSpec[], losers: Array<{ slot: Slot; specs: TableSpec[] | null }>): Promise<void>;
  query(sql: string, params: unknown[]): Promise<Row[]>;
  close(): Promise<void>;
}

/** A batch's writes to `specs`' tables of `slot`, flattened (see FlatTableWrites). */
function flatten(slot: Slot, specs: TableSpec[], writes: WriteSet): FlatTableWrites[] {
  const out: FlatTableWrites[] = [];
  for (const spec of specs) {
    const w = writes.get(spec.name);
    if (!w || w.size === 0) continue;
    const cols = Object.keys(spec.columns);
    const ups: unknown[] = [];
    const dels: unknown[] = [];
    for (const { key, row } of w.values()) {
      if (row) for (const c of cols) ups.push(row[c] ?? null);
      else for (const k of spec.key) dels.push(key[k] ?? null);
    }
    out.push({ table: tableName(slot, spec.name), cols, keyCols: spec.key, ups, dels });
  }
  return out;
}

function createTableSql(slot: Slot, spec: TableSpec, kind: 'sqlite' | 'postgres', qualifier = ''): string[] {
  const t = qualifier + tableName(slot, spec.name);
  const type = (c: ColumnType): string => (kind === 'sqlite' ? (c === 'int' ? 'INTEGER' : 'TEXT') : c === 'int' ? 'bigint' : 'text COLLATE "C"');
  const cols = [`workspace_id ${type('text')} NOT NULL`, ...Object.entries(spec.columns).map(([n, c]) => `${n} ${type(c)}${spec.key.includes(n) ? ' NOT NULL' : ''}`)];
  // SQLite: WITHOUT ROWID when rows arrive in key order (the key leads with position: audit rows, the
  // history index) or are narrow (no text beside the key): a row then lives in its primary-key B-tree
  // only (one insert, not a rowid row plus a key index entry: measured ~40% of a build's commit time).
  // Wide rows keyed out of log order (history entries with their bodies, suppression facts with their
  // event) go to a rowid table, appended, with the key in its own narrow index: a build inserting them
  // into a WITHOUT ROWID B-tree split and rewrote its wide pages all over (measured 2× the CPU per row).
  const clustered = spec.key[0] === 'position' || Object.entries(spec.columns).every(([n, c]) => spec.key.includes(n) || c === 'int');
  return [`CREATE TABLE IF NOT EXISTS ${t} (${cols.join(', ')}, PRIMARY KEY (workspace_id, ${spec.key.join(', ')}))${kind === 'sqlite' && clustered ? ' WITHOUT ROWID' : ''}`];
}

/**
 * Secondary indexes are created when a slot is promoted, not when it is created: a build from 0 writes
 * rows into the primary key only, and each index is then sorted once (measured several times faster
 * than maintaining five indexes row by row).
 */
function createIndexSql(slot: Slot, spec: TableSpec, qualifier = '', kind: 'sqlite' | 'postgres' = 'postgres'): string[] {
  const name = tableName(slot, spec.name);
  // SQLite names the schema on the index (it is always the table's); PostgreSQL on the table.
  return (spec.indexes ?? []).map((ix, i) => (kind === 'sqlite' ? `CREATE INDEX IF NOT EXISTS ${qualifier}${name}_ix${i} ON ${name} (workspace_id, ${ix.join(', ')})` : `CREATE INDEX IF NOT EXISTS ${name}_ix${i} ON ${qualifier}${name} (workspace_id, ${ix.join(', ')})`));
}

const slotOf = (r: Row): Slot => ({ name: String(r.name), version: Number(r.version), generation: Number(r.generation), position: Number(r.position), ready: Number(r.ready) === 1 });

// ---------------------------------------------------------------------------------------------------
// SQLite: sibling files of the workspace log, so the log's write lock is never held by a model update:
// one file per model (`readmodels.<name>.db`, each with its own checkpoint table), attached to one
// connection (table names are unique across them, so queries name tables alone). A file per model
// lets the models' builds write side by side — one write lock per file, a writer thread per file —
// where one shared file serialized every model's statements behind one lock. `readmodels.db` is the
// connection's main database: it holds the slots created before models had their own files (still
// used, and dropped when a newer generation is promoted). Synchronous NORMAL: a power loss may roll a
// model back to an earlier checkpoint, but rows and checkpoint always commit together (in one file), so
// it only replays a little more.

interface TableStatements {
  keyCols: string[];
  get: import('better-sqlite3').Statement;
}

/** Model names become schema and file names: letters, digits and underscores only. */
const MODEL_NAME = /^[A-Za-z][A-Za-z0-9_]*$/;

export class SqliteReadModelStorage implements ReadModelStorage {
  readonly kind = 'sqlite';
  private readonly db: import('better-sqlite3').Database;
  private readonly stmts = new Map<string, import('better-sqlite3').Statement>();
  private readonly tables = new Map<string, TableStatements>();
  private readonly committer: SqliteCommitter;
  private readonly file: string;
  /** Each model's own file, attached as `rm_<name>` (attached on first use). */
  private readonly homes = new Map<string, { schema: string; file: string }>();
  /** The schema of each slot known to this storage (`main` for slots of the shared file). */
  private readonly slotSchemas = new Map<string, string>();
  /** A build's batches are committed on a writer thread per file (opened on a build's first batch, closed when its slot is promoted). */
  private readonly writers = new Map<string, SqliteWriter>();
  /** A second writer thread per file, for builds whose chunks prepare ahead (see prepareAhead). */
  private readonly asides = new Map<string, SqliteWriter>();
  /** The thread each file's last commit was posted to (it may still be running it). */
  private readonly lastWriter = new Map<string, SqliteWriter>();
  /** Chunks whose `prepare` was posted ahead: the thread (which commits them too) and the token. */
  private readonly preparedOn = new WeakMap<BulkStatements, { writer: SqliteWriter; token: number }>();
  private nextToken = 1;

  /** `logFile`: the workspace log, attached for set-based builds (none: every build folds in JS). */
  constructor(readonly workspaceId: string, private readonly dir: string, private readonly logFile?: string) {
    const file = path.join(dir, 'readmodels.db');
    this.db = openSideDatabase(file, { synchronous: 'NORMAL', replaceWhenDamaged: 'the read models are rebuilt from the log' });
    this.file = file;
    configureReadModelDb(this.db, logFile);
    this.committer = new SqliteCommitter(this.db);
    // Without statistics the planner reads a filtered, LIMITed audit page or a symbol's history along the
    // primary key (position order) instead of the filter's index: measured 30 ms → 0.08 ms per query at
    // 100k events. Slots are analyzed when promoted; slots promoted before that are analyzed here, once.
    // A sample of 1,000 rows per index is enough for that choice and keeps ANALYZE in milliseconds
    // (analysis_limit, set by configureReadModelDb on every read-model connection).
    this.prepareSchema('main');
  }

  /** The checkpoint table of `schema`, and statistics for the tables of slots promoted before ANALYZE ran at promotion. */
  private prepareSchema(schema: string): void {
    this.db.exec(`CREATE TABLE IF NOT EXISTS ${schema}.${CHECKPOINTS} (workspace_id TEXT NOT NULL, name TEXT NOT NULL, version INTEGER NOT NULL, generation INTEGER NOT NULL, position INTEGER NOT NULL, ready INTEGER NOT NULL, PRIMARY KEY (workspace_id, name, version, generation))`);
    const hasStats = this.db.prepare(`SELECT 1 FROM ${schema}.sqlite_master WHERE name = 'sqlite_stat1'`).get() !== undefined;
    const unanalyzed = this.db
      .prepare(`SELECT name FROM ${schema}.sqlite_master WHERE type = 'table' AND substr(name, 1, 3) = 'rm_' AND name <> '${CHECKPOINTS}'${hasStats ? ` AND name NOT IN (SELECT tbl FROM ${schema}.sqlite_stat1)` : ''}`)
      .pluck()
      .all() as string[];
    for (const t of unanalyzed) this.db.exec(`ANALYZE ${schema}.${t}`);
  }

  /** The model's own file, attached on first use (never inside a transaction: every caller is outside one). */
  private home(name: string): { schema: string; file: string } {
    let h = this.homes.get(name);
    if (h) return h;
    if (!MODEL_NAME.test(name)) throw new Error(`read model: name "${name}" is not usable as a file name (letters, digits, underscores)`);
    const file = path.join(this.dir, `readmodels.${name}.db`);
    const schema = `rm_${name}`;
    try {
      this.attachHome(file, schema);
    } catch (err) {
      // Damaged: the model's file holds nothing the log cannot give again. Moved aside, a fresh file has no
      // slot, so the model is built from position 0 like a new one.
      if (!isStoreDamagedError(err)) throw err;
      try {
        this.db.prepare(`DETACH DATABASE ${schema}`).run();
      } catch {
        // not attached
      }
      quarantineDamaged(file, err, `read model ${name} is rebuilt from the log`);
      this.attachHome(file, schema);
    }
    h = { schema, file };
    this.homes.set(name, h);
    return h;
  }

  private attachHome(file: string, schema: string): void {
    touchPrivate(file);
    this.db.prepare(`ATTACH DATABASE ? AS ${schema}`).run(file);
    // 16 KiB pages for a new file (an existing one keeps its own): a build writes wide rows in key order,
    // and four times fewer pages to split, write to the WAL and copy back cost less (the statements and
    // commits of a 200k-event build on one thread, four alternating pairs at load 6–7: 4,440 / 4,979 /
    // 4,540 / 3,695 → 4,159 / 3,430 / 3,444 / 3,491 ms of CPU, the commits ~300 → ~195 ms). Set before
    // the journal mode: a WAL file's page size is fixed.
    this.db.pragma(`${schema}.page_size = 16384`);
    // Per attached database: its journal, its durability, its page cache (see configureReadModelDb).
    this.db.pragma(`${schema}.journal_mode = WAL`);
    this.db.pragma(`${schema}.synchronous = NORMAL`);
    this.db.pragma(`${schema}.cache_size = -32768`);
    this.prepareSchema(schema);
  }

  private schemaOf(slot: Pick<Slot, 'name' | 'version' | 'generation'>): string {
    return this.slotSchemas.get(`${slot.name}/${slot.version}/${slot.generation}`) ?? this.home(slot.name).schema;
  }

  private stmt(sql: string): import('better-sqlite3').Statement {
    let s = this.stmts.get(sql);
    if (!s) this.stmts.set(sql, (s = this.db.prepare(sql)));
    return s;
  }

  async slots(name: string): Promise<Slot[]> {
    const { schema } = this.home(name);
    const out: Array<Slot & { schema: string }> = [];
    for (const sc of ['main', schema]) {
      for (const r of this.stmt(`SELECT * FROM ${sc}.${CHECKPOINTS} WHERE workspace_id = ? AND name = ?`).all(this.workspaceId, name) as Row[]) {
        const slot = slotOf(r);
        this.slotSchemas.set(`${slot.name}/${slot.version}/${slot.generation}`, sc);
        out.push({ ...slot, schema: sc });
      }
    }
    return out.sort((a, b) => a.version - b.version || a.generation - b.generation).map(({ schema: _, ...slot }) => slot);
  }

  async createSlot(slot: Slot, specs: TableSpec[]): Promise<void> {
    const { schema } = this.home(slot.name);
    this.slotSchemas.set(`${slot.name}/${slot.version}/${slot.generation}`, schema);
    // Deferred: the first statement writes the model's file, the only one this transaction locks.
    this.db.transaction(() => {
      for (const spec of specs) for (const sql of createTableSql(slot, spec, 'sqlite', `${schema}.`)) this.db.exec(sql);
      this.stmt(`INSERT OR IGNORE INTO ${schema}.${CHECKPOINTS} VALUES (?, ?, ?, ?, 0, 0)`).run(this.workspaceId, slot.name, slot.version, slot.generation);
    })();
  }

  private dropSync(slot: Pick<Slot, 'name' | 'version' | 'generation'>, specs: TableSpec[] | null): void {
    const schema = this.schemaOf(slot);
    // The write first: it takes the file's lock before anything of it is read.
    this.db.prepare(`DELETE FROM ${schema}.${CHECKPOINTS} WHERE workspace_id = ? AND name = ? AND version = ? AND generation = ?`).run(this.workspaceId, slot.name, slot.version, slot.generation);
    const prefix = tableName(slot, '');
    const tables = specs
      ? specs.map((s) => tableName(slot, s.name))
      : (this.db.prepare(`SELECT name FROM ${schema}.sqlite_master WHERE type = 'table' AND substr(name, 1, ?) = ?`).pluck().all(prefix.length, prefix) as string[]);
    for (const t of tables) this.db.exec(`DROP TABLE IF EXISTS ${schema}.${t}`);
    this.stmts.clear();
    this.tables.clear();
    this.committer.forget();
  }

  async dropSlot(slot: Pick<Slot, 'name' | 'version' | 'generation'>, specs: TableSpec[] | null): Promise<void> {
    this.db.transaction(() => this.dropSync(slot, specs))();
  }

  /** The statements of one slot's table, prepared once (not one SQL text built per row read or written). */
  private tableStmts(slot: Slot, spec: TableSpec): TableStatements {
    const t = tableName(slot, spec.name);
    let s = this.tables.get(t);
    if (s) return s;
    const where = spec.key.map((k) => `${k} = ?`).join(' AND ');
    s = { keyCols: spec.key, get: this.db.prepare(`SELECT * FROM ${this.schemaOf(slot)}.${t} WHERE workspace_id = ? AND ${where}`) };
    this.tables.set(t, s);
    return s;
  }

  private lookup(slot: Slot, spec: TableSpec, key: Row): Row | undefined {
    const s = this.tableStmts(slot, spec);
    return (s.keyCols.length === 1 ? s.get.get(this.workspaceId, key[s.keyCols[0]]) : s.get.get(this.workspaceId, ...s.keyCols.map((k) => key[k]))) as Row | undefined;
  }

  async getRow(slot: Slot, spec: TableSpec, key: Row): Promise<Row | undefined> {
    return this.lookup(slot, spec, key);
  }

  async getRows(slot: Slot, spec: TableSpec, keys: Row[]): Promise<Row[]> {
    // In-process: a lookup per key costs no round trip.
    const out: Row[] = [];
    for (const key of keys) {
      const row = this.lookup(slot, spec, key);
      if (row) out.push(row);
    }
    return out;
  }

  bulkDialect(slot: Slot): BulkDialect | null {
    return this.logFile ? sqliteDialect(this.workspaceId, (t) => tableName(slot, t)) : null;
  }

  /**
   * The history's chunks spend about half their thread's time in `prepare` (parsing the chunk's acts into
   * a temporary table, no lock held): posted to the file's other writer thread — the one not running the
   * last commit — it runs there while the chunk before commits, and that thread commits it next (its
   * temporary table is its connection's). The threads take the file's chunks in turn; its write lock is
   * never wanted by both at once (a chunk commits only once the one before landed).
   */
  prepareAhead(slot: Slot, statements: BulkStatements): void {
    if (!statements.ahead || statements.prepare.length === 0) return;
    const schema = this.schemaOf(slot);
    const primary = this.writers.get(schema);
    // Not before the build's first commit started a thread (a small log's only batch commits here).
    if (schema === 'main' || !primary?.usable) return;
    let aside = this.asides.get(schema);
    if (!aside) this.asides.set(schema, (aside = new SqliteWriter(this.home(slot.name).file, this.logFile)));
    const writer = this.lastWriter.get(schema) === aside ? primary : aside;
    if (!writer.usable) return;
    const token = this.nextToken++;
    this.preparedOn.set(statements, { writer, token });
    // A failed prepare is run again by its commit (the job carries the statements).
    writer.prepare(token, statements.prepare).catch(() => undefined);
  }

  async commit(slot: Slot, specs: TableSpec[], writes: WriteSet, from: number, to: number, ready: boolean, behind: boolean | 'last' = false, statements?: BulkStatements): Promise<boolean> {
    const schema = this.schemaOf(slot);
    const job: CommitJob = { workspaceId: this.workspaceId, name: slot.name, version: slot.version, generation: slot.generation, writes: flatten(slot, specs, writes), from, to, ready, prepare: statements?.prepare, statements: statements?.apply };
    const ahead = statements ? this.preparedOn.get(statements) : undefined;
    if (ahead?.writer.usable) {
      this.lastWriter.set(schema, ahead.writer);
      return ahead.writer.commit({ ...job, preparedAs: ahead.token });
    }
    // A build's only batch (a small log) commits here: a thread's start costs more than the batch (and,
    // one thread per model file, three threads starting at once delayed a small workspace's first build).
    if (behind && this.file !== ':memory:' && !(behind === 'last' && !this.writers.has(schema))) {
      // A thread per file, so the models' builds commit side by side (their statements no longer wait
      // on one write lock); its connection opens the slot's file as its main database.
      let writer = this.writers.get(schema);
      if (!writer) this.writers.set(schema, (writer = new SqliteWriter(schema === 'main' ? this.file : this.home(slot.name).file, this.logFile)));
      if (writer.usable) {
        this.lastWriter.set(schema, writer);
        return writer.commit(job);
      }
    }
    return this.committer.commit({ ...job, schema });
  }

  async promote(winner: Slot, specs: TableSpec[], losers: Array<{ slot: Slot; specs: TableSpec[] | null }>): Promise<void> {
    const schema = this.schemaOf(winner);
    const w = this.writers.get(schema);
    if (w?.usable && schema !== 'main') {
      // The build's writer thread marks the winner ready and builds its indexes — on its connection
      // (the winner's file is its main database), after the build's last batch — so they are built
      // beside the other models' builds instead of blocking this thread (the audit's took ~0.5–0.8 s,
      // while the history's build, whose batches this thread folds and posts, waited).
      await w.transaction(this.readyStatements(winner, specs));
      // Indexes created by another connection: statements prepared again on next use, and the new
      // statistics loaded for the planner (another connection's ANALYZE is not reloaded otherwise).
      this.stmts.clear();
      this.tables.clear();
      this.committer.forget();
      this.db.exec(`ANALYZE ${schema}.sqlite_master`);
      // The losers are dropped here, synchronously, as before: queries on this connection may still be
      // reading the active slot until the caller switches to the winner. A crash between the two
      // transactions leaves them beside the ready winner, which load() prefers (the newest ready
      // generation); the next promotion drops them.
      if (losers.length) this.db.transaction(() => losers.forEach((l) => this.dropSync(l.slot, l.specs)))();
    } else {
      this.promoteHere(schema, winner, specs, losers);
      // Slots of the shared file (created before models had files of their own): dropped in a transaction
      // of that file. A crash before it leaves them beside the ready winner, which load() prefers (the
      // newest generation); the next promotion drops them.
      const elsewhere = losers.filter((l) => this.schemaOf(l.slot) !== schema);
      if (elsewhere.length) this.db.transaction(() => elsewhere.forEach((l) => this.dropSync(l.slot, l.specs)))();
    }
    // A build is over: its writer threads (and their connections' page caches) are not kept for a
    // workspace that may build nothing again; the next build starts others. Jobs posted before finish
    // first; later batches go to a new thread.
    const aside = this.asides.get(schema);
    this.writers.delete(schema);
    this.asides.delete(schema);
    this.lastWriter.delete(schema);
    await Promise.all([w?.close(), aside?.close()]);
  }

  /** The winner marked ready, its indexes and statistics, on a writer thread's connection (the winner's file as its main database). */
  private readyStatements(winner: Slot, specs: TableSpec[]): Array<{ sql: string; params: unknown[] }> {
    // The write first: it takes the file's lock before anything of it is read.
    const out: Array<{ sql: string; params: unknown[] }> = [{ sql: `UPDATE main.${CHECKPOINTS} SET ready = 1 WHERE workspace_id = ? AND name = ? AND version = ? AND generation = ?`, params: [this.workspaceId, winner.name, winner.version, winner.generation] }];
    for (const spec of specs) for (const sql of createIndexSql(winner, spec, 'main.', 'sqlite')) out.push({ sql, params: [] });
    for (const spec of specs) out.push({ sql: `ANALYZE main.${tableName(winner, spec.name)}`, params: [] });
    return out;
  }

  private promoteHere(schema: string, winner: Slot, specs: TableSpec[], losers: Array<{ slot: Slot; specs: TableSpec[] | null }>): void {
    // Deferred, its first statement a write of the winner's file: the other models' files (their builds
    // may be committing) and the log stay unlocked.
    this.db.transaction(() => {
      this.stmt(`UPDATE ${schema}.${CHECKPOINTS} SET ready = 1 WHERE workspace_id = ? AND name = ? AND version = ? AND generation = ?`).run(this.workspaceId, winner.name, winner.version, winner.generation);
      for (const spec of specs) for (const sql of createIndexSql(winner, spec, `${schema}.`, 'sqlite')) this.db.exec(sql);
      for (const spec of specs) this.db.exec(`ANALYZE ${schema}.${tableName(winner, spec.name)}`);
      for (const l of losers) if (this.schemaOf(l.slot) === schema) this.dropSync(l.slot, l.specs);
    })();
  }

  async query(sql: string, params: unknown[]): Promise<Row[]> {
    return this.stmt(sql).all(...params) as Row[];
  }

  async close(): Promise<void> {
    const ws = [...this.writers.values(), ...this.asides.values()];
    this.writers.clear();
    this.asides.clear();
    this.lastWriter.clear();
    await Promise.all(ws.map((w) => w.close()));
    if (this.db.open) this.db.close();
  }
}

// ---------------------------------------------------------------------------------------------------
// PostgreSQL: tables in the event store's schema, on its pool. Batches are written with one
// `INSERT … SELECT FROM unnest(…)` per table (one round trip for thousands of rows).

const PG_ARRAY: Record<ColumnType, string> = { int: 'bigint[]', text: 'text[]' };
const numbered = (sql: string): string => {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
};

/**
 * A query of `text`, as a named (prepared) statement when `prepared`: node-postgres prepares it once per pooled connection.
 * A read model's commit runs the same few statements per table on every round: parsed and planned each time,
 * they were most of what the read models cost PostgreSQL. The texts are finite (a few per table and slot),
 * a table's name carries its model's version and generation, so a statement never outlives its table's shape.
 */
const preparedNames = new Map<string, string>();
function queryConfig(text: string, values: unknown[] | undefined, prepared: boolean | undefined): { name?: string; text: string; values?: unknown[] } {
  if (!prepared) return { text, values };
  let name = preparedNames.get(text);
  if (!name) preparedNames.set(text, (name = `rm_${createHash('sha1').update(text).digest('hex').slice(0, 24)}`));
  return { name, text, values };
}

/** Which process folds each model of a workspace now (PostgresReadModelStorage.lead). */
const LEASES = 'rm_leases';

export class PostgresReadModelStorage implements ReadModelStorage {
  readonly kind = 'postgres';
  private ready: Promise<void> | null = null;
  private leasesReady: Promise<void> | null = null;
  private readonly s: string;

  /** `createSchema`: the KurrentDB catalogue's schema may not exist yet (the event store's always does, and CREATE SCHEMA needs a privilege the store's user may lack). */
  constructor(readonly workspaceId: string, private readonly pool: Pool, schema: string, private readonly createSchema = false, private readonly logInSchema = !createSchema) {
    this.s = `"${schema}"`;
  }

  private t(slot: Pick<Slot, 'name' | 'version' | 'generation'>, table: string): string {
    return `${this.s}.${tableName(slot, table)}`;
  }

  /** A query of this storage: a lost connection is the retryable store_unavailable, never `internal`. */
  private pg(text: string, params?: unknown[], prepared = false) {
    return this.pool.query(queryConfig(text, params, prepared)).catch((err) => {
      throw unavailable(err);
    });
  }

  /** The checkpoint table, made once per schema (ensureSideTable: safe when processes open a fresh schema together). */
  private init(): Promise<void> {
    const table = `${this.s}.${CHECKPOINTS}`;
    this.ready ??= ensureSideTable(this.pool, this.s.slice(1, -1), CHECKPOINTS, [
      ...(this.createSchema ? [`CREATE SCHEMA IF NOT EXISTS ${this.s}`] : []),
      `CREATE TABLE IF NOT EXISTS ${table} (workspace_id text NOT NULL, name text NOT NULL, version integer NOT NULL, generation integer NOT NULL, position bigint NOT NULL, ready integer NOT NULL, PRIMARY KEY (workspace_id, name, version, generation))`,
    ]).catch((err) => {
      this.ready = null;
      throw unavailable(err);
    });
    return this.ready;
  }

  async slots(name: string): Promise<Slot[]> {
    await this.init();
    return (await this.pg(`SELECT * FROM ${this.s}.${CHECKPOINTS} WHERE workspace_id = $1 AND name = $2 ORDER BY version, generation`, [this.workspaceId, name])).rows.map(slotOf);
  }

  /** The leases table, made once per schema like the checkpoints. */
  private initLeases(): Promise<void> {
    this.leasesReady ??= ensureSideTable(this.pool, this.s.slice(1, -1), LEASES, [
      `CREATE TABLE IF NOT EXISTS ${this.s}.${LEASES} (workspace_id text NOT NULL, name text NOT NULL, holder text NOT NULL, until timestamptz NOT NULL, PRIMARY KEY (workspace_id, name))`,
    ]).catch((err) => {
      this.leasesReady = null;
      throw unavailable(err);
    });
    return this.leasesReady;
  }

  async lead(name: string, holder: string, ms: number): Promise<boolean> {
    // The schema first (the KurrentDB catalogue's may not exist yet), then the table.
    await this.init();
    await this.initLeases();
    // The database's clock decides expiry: the processes' clocks may differ.
    const t = `${this.s}.${LEASES}`;
    const taken = await this.pg(
      `INSERT INTO ${t} (workspace_id, name, holder, until) VALUES ($1, $2, $3, clock_timestamp() + $4 * interval '1 millisecond')
       ON CONFLICT (workspace_id, name) DO UPDATE SET holder = EXCLUDED.holder, until = EXCLUDED.until WHERE ${t}.holder = EXCLUDED.holder OR ${t}.until < clock_timestamp() RETURNING 1`,
      [this.workspaceId, name, holder, ms],
    );
    return taken.rowCount === 1;
  }

  async resign(name: string, holder: string): Promise<void> {
    await this.pg(`DELETE FROM ${this.s}.${LEASES} WHERE workspace_id = $1 AND name = $2 AND holder = $3`, [this.workspaceId, name, holder]);
  }

  async position(slot: Pick<Slot, 'name' | 'version' | 'generation'>): Promise<number | null> {
    await this.init();
    const r = await this.pg(`SELECT position FROM ${this.s}.${CHECKPOINTS} WHERE workspace_id = $1 AND name = $2 AND version = $3 AND generation = $4`, [this.workspaceId, slot.name, slot.version, slot.generation], true);
    return r.rows.length ? Number(r.rows[0].position) : null;
  }

  private async tx<T>(fn: (q: (sql: string, params?: unknown[], prepared?: boolean) => Promise<Row[]>) => Promise<T>): Promise<T> {
    await this.init();
    const client = await this.pool.connect().catch((err) => {
      throw unavailable(err);
    });
    try {
      await client.query('BEGIN');
      const out = await fn(async (sql, params, prepared) => (await client.query(queryConfig(sql, params, prepared))).rows);
      await client.query('COMMIT');
      return out;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw unavailable(err);
    } finally {
      client.release();
    }
  }

  async createSlot(slot: Slot, specs: TableSpec[]): Promise<void> {
    await this.tx(async (q) => {
      // DDL of one model at a time: processes starting together must not race on CREATE TABLE.
      await q('SELECT pg_advisory_xact_lock(hashtext($1))', [`${this.s}.rm.${slot.name}`]);
      for (const spec of specs) for (const sql of createTableSql(slot, spec, 'postgres', `${this.s}.`)) await q(sql);
      await q(`INSERT INTO ${this.s}.${CHECKPOINTS} VALUES ($1, $2, $3, $4, 0, 0) ON CONFLICT DO NOTHING`, [this.workspaceId, slot.name, slot.version, slot.generation]);
    });
  }

  private async dropIn(q: (sql: string, params?: unknown[]) => Promise<Row[]>, slot: Pick<Slot, 'name' | 'version' | 'generation'>, specs: TableSpec[] | null): Promise<void> {
    await q(`DELETE FROM ${this.s}.${CHECKPOINTS} WHERE workspace_id = $1 AND name = $2 AND version = $3 AND generation = $4`, [this.workspaceId, slot.name, slot.version, slot.generation]);
    // Tables are shared by every workspace of the schema: drop this workspace's rows, and the tables
    // once no workspace has a checkpoint on them any more.
    const left = await q(`SELECT 1 FROM ${this.s}.${CHECKPOINTS} WHERE name = $1 AND version = $2 AND generation = $3 LIMIT 1`, [slot.name, slot.version, slot.generation]);
    const prefix = tableName(slot, '');
    const tables = specs
      ? specs.map((s) => tableName(slot, s.name))
      : (await q(`SELECT tablename FROM pg_tables WHERE schemaname = $1 AND left(tablename, $2) = $3`, [this.s.slice(1, -1), prefix.length, prefix])).map((r) => String(r.tablename));
    for (const t of tables) await q(left.length ? `DELETE FROM ${this.s}.${t} WHERE workspace_id = $1` : `DROP TABLE IF EXISTS ${this.s}.${t}`, left.length ? [this.workspaceId] : []);
  }

  async dropSlot(slot: Pick<Slot, 'name' | 'version' | 'generation'>, specs: TableSpec[] | null): Promise<void> {
    await this.tx(async (q) => {
      await q('SELECT pg_advisory_xact_lock(hashtext($1))', [`${this.s}.rm.${slot.name}`]);
      await this.dropIn(q, slot, specs);
    });
  }

  async getRow(slot: Slot, spec: TableSpec, key: Row): Promise<Row | undefined> {
    const where = spec.key.map((k, i) => `${k} = $${i + 2}`).join(' AND ');
    return (await this.pg(`SELECT * FROM ${this.t(slot, spec.name)} WHERE workspace_id = $1 AND ${where}`, [this.workspaceId, ...spec.key.map((k) => key[k])], true)).rows[0] as Row | undefined;
  }

  async getRows(slot: Slot, spec: TableSpec, keys: Row[]): Promise<Row[]> {
    if (keys.length === 0) return [];
    const sql = `SELECT * FROM ${this.t(slot, spec.name)} WHERE workspace_id = $1 AND (${spec.key.join(', ')}) IN (SELECT * FROM unnest(${spec.key.map((k, i) => `$${i + 2}::${PG_ARRAY[spec.columns[k]]}`).join(', ')}))`;
    return (await this.pg(sql, [this.workspaceId, ...spec.key.map((k) => keys.map((r) => r[k]))], true)).rows as Row[];
  }

  bulkDialect(slot: Slot): BulkDialect | null {
    // The event store's schema holds its `events` table (the KurrentDB catalogue's does not).
    return this.logInSchema ? postgresDialect(this.workspaceId, this.s, (t) => this.t(slot, t)) : null;
  }

  async commit(slot: Slot, specs: TableSpec[], writes: WriteSet, from: number, to: number, ready: boolean, _behind: boolean | 'last' = false, statements?: BulkStatements): Promise<boolean> {
    return this.tx(async (q) => {
      // Derived rows, like SQLite's synchronous=NORMAL above: the commit does not wait for its WAL
      // flush (SET LOCAL, folded into the checkpoint read to save a round trip). A crash may lose the
      // last batches — rows and checkpoint together — which are then folded again.
      const stored = await q(`SELECT set_config('synchronous_commit', 'off', true), position FROM ${this.s}.${CHECKPOINTS} WHERE workspace_id = $1 AND name = $2 AND version = $3 AND generation = $4 FOR UPDATE`, [this.workspaceId, slot.name, slot.version, slot.generation], true);
      if (stored.length === 0 || Number(stored[0].position) !== from) return false;
      for (const spec of specs) {
        const w = writes.get(spec.name);
        if (!w || w.size === 0) continue;
        const t = this.t(slot, spec.name);
        const cols = Object.keys(spec.columns);
        const ups: Row[] = [];
        const dels: Row[] = [];
        for (const { key, row } of w.values()) (row ? ups : dels).push(row ?? key);
        if (dels.length) {
          const arrays = spec.key.map((k) => dels.map((r) => r[k]));
          await q(
            `DELETE FROM ${t} WHERE workspace_id = $1 AND (${spec.key.join(', ')}) IN (SELECT * FROM unnest(${spec.key.map((k, i) => `$${i + 2}::${PG_ARRAY[spec.columns[k]]}`).join(', ')}))`,
            [this.workspaceId, ...arrays],
            true,
          );
        }
        const nonKey = cols.filter((c) => !spec.key.includes(c));
        const conflict = nonKey.length ? `DO UPDATE SET ${nonKey.map((c) => `${c} = EXCLUDED.${c}`).join(', ')}` : 'DO NOTHING';
        for (let i = 0; i < ups.length; i += 5000) {
          const chunk = ups.slice(i, i + 5000);
          await q(
            `INSERT INTO ${t} (workspace_id, ${cols.join(', ')}) SELECT $1, * FROM unnest(${cols.map((c, j) => `$${j + 2}::${PG_ARRAY[spec.columns[c]]}`).join(', ')}) ON CONFLICT (workspace_id, ${spec.key.join(', ')}) ${conflict}`,
            [this.workspaceId, ...cols.map((c) => chunk.map((r) => r[c] ?? null))],
            true,
          );
        }
      }
      for (const st of [...(statements?.prepare ?? []), ...(statements?.apply ?? [])]) await q(numbered(st.sql), st.params);
      await q(`UPDATE ${this.s}.${CHECKPOINTS} SET position = $1, ready = greatest(ready, $2) WHERE workspace_id = $3 AND name = $4 AND version = $5 AND generation = $6`, [to, ready ? 1 : 0, this.workspaceId, slot.name, slot.version, slot.generation], true);
      return true;
    });
  }

  async promote(winner: Slot, specs: TableSpec[], losers: Array<{ slot: Slot; specs: TableSpec[] | null }>): Promise<void> {
    await this.tx(async (q) => {
      await q('SELECT pg_advisory_xact_lock(hashtext($1))', [`${this.s}.rm.${winner.name}`]);
      for (const spec of specs) for (const sql of createIndexSql(winner, spec, `${this.s}.`)) await q(sql);
      // Shared tables: another workspace may have promoted (and indexed) this slot already.
      for (const spec of specs) await q(`ANALYZE ${this.t(winner, spec.name)}`);
      await q(`UPDATE ${this.s}.${CHECKPOINTS} SET ready = 1 WHERE workspace_id = $1 AND name = $2 AND version = $3 AND generation = $4`, [this.workspaceId, winner.name, winner.version, winner.generation]);
      for (const l of losers) await this.dropIn(q, l.slot, l.specs);
    });
  }

  async query(sql: string, params: unknown[]): Promise<Row[]> {
    return (await this.pg(numbered(sql.replace(/\b(FROM|JOIN) (rm_)/g, `$1 ${this.s}.$2`)), params)).rows as Row[];
  }

  async close(): Promise<void> {
    // The pool belongs to the event store's backend.
  }
}
