import Database from 'better-sqlite3';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { encodedJsonOf, type EventMetadata, type NewEvent, type RecordedEvent } from '../../events/envelope';
import { eventCatalogue, internedType, upcastEvent } from '../../events/catalogue';
import { AuditLogStore, ChainFields, ChainInfo, ChainRow, CleanScan, StoredCheckpoint, chainHash, genesisHash, hashBytes } from '../../events/chain';
import { Worker } from 'node:worker_threads';
import { HASH_HEX, type ChainScanJob, type ChainScanResult } from './chain-worker';

const currentVersion = (type: string): number => eventCatalogue.get(type)?.schemaVersion ?? 0;
import {
  AppendOptions,
  AppendResult,
  DuplicateEventId,
  EventStore,
  ExpectedRevision,
  NoopRecord,
  ReadAllOptions,
  ReadStreamOptions,
  SubscribeOptions,
  Subscription,
  checkExpected,
  checkGuard,
  sameCommand,
  StoreClosed,
} from '../../events/store/port';
import { EXCLUSIVE_POLL_MS, EXCLUSIVE_WAIT_MS } from '../../events/store/port';
import { LiveSubscription } from '../../events/store/subscription';
import { isStoreDamagedError, isStoreUnavailableError, mkdirPrivate, touchPrivate } from '../private-files';
import { DomainError } from '../../domain-error';
import { EventLoopTurns } from '../../events/event-loop-turns';
import { openSideDatabase } from './side-database';

/**
 * A damaged file (a page SQLite cannot read, a header that is not SQLite's) answers `store_damaged`,
 * naming the workspace and what to do: not retryable, not `internal`. SQLite has no page checksums, so
 * this is what it notices; what it cannot (a changed byte inside a row), `audit verify` finds.
 */
export function damagedStoreError(workspaceId: string, err: unknown): DomainError {
  const code = (err as { code?: string }).code;
  return new DomainError(
    'store_damaged',
    `store: the event store of workspace "${workspaceId}" is damaged (${code}: ${(err as Error).message}); nothing was read or recorded. Restore its workspace.db from a backup (\`review-ledger audit verify\` then checks the restored log; docs/stores.md)`,
    { sqlite: code },
  );
}

/** A full disk (or an unwritable file) answers `store_unavailable`, never `internal`. */
function storeErrorOf(err: unknown): unknown {
  if (!isStoreUnavailableError(err)) return err;
  const code = (err as { code?: string }).code;
  const why = code === 'SQLITE_FULL' ? ': the disk is full' : isBusy(err) ? `: another process has held the log's write lock for ${BUSY_WAIT_MS} ms` : '';
  return new DomainError('store_unavailable', `store: the event store cannot write (${code}${why}); nothing was recorded`, { sqlite: code });
}

const isBusy = (err: unknown): boolean => /^SQLITE_(BUSY|LOCKED)/.test((err as { code?: string })?.code ?? '');

/**
 * Another process holding the log's write lock (the CLI writing to a served data dir; an operator's
 * sqlite3 shell): SQLite's busy handler waits on this thread, so an attempt waits at most BUSY_STEP_MS
 * (none while the lock is known to be held) and a group commit that met the lock is retried from a timer
 * (BUSY_RETRY_MS doubling) until BUSY_WAIT_MS, then refused store_unavailable. Before, one attempt held the thread 5 s: /health
 * and every other workspace waited, and the append failed `internal`.
 */
const BUSY_STEP_MS = 200;
const BUSY_RETRY_MS = { first: 25, max: 400 };
const BUSY_WAIT_MS = 5000;

export type SynchronousMode = 'FULL' | 'NORMAL' | 'OFF' | 'EXTRA';

export interface SqliteStoreOptions {
  file: string;
  workspaceId: string;
  /** Told once when SQLite first reports the file damaged (for /health); the call answers store_damaged. */
  onDamaged?: (workspaceId: string, reason: string) => void;
  /** FULL (default): an acknowledged append survives power loss. NORMAL: survives a process crash. */
  synchronous?: SynchronousMode;
  /**
   * Hash-chain every append (default true). `false` exists only so bench:store can measure the chain's
   * cost side by side; a log written without it fails `audit verify` from the first unchained row.
   */
  chain?: boolean;
}

interface EventRow {
  global_position: number;
  event_id: string;
  stream_id: string;
  stream_revision: number;
  type: string;
  schema_version: number;
  data: string;
  metadata: string;
}

/** Column order of `SELECT *` read in raw (array) mode: no per-row object with named keys to build. */
type RawRow = [number, string, string, number, string, number, string, string];
const fromRaw = (r: RawRow): EventRow => ({
  global_position: r[0],
  event_id: r[1],
  stream_id: r[2],
  stream_revision: r[3],
  type: r[4],
  schema_version: r[5],
  data: r[6],
  metadata: r[7],
});

interface PendingAppend {
  streamId: string;
  expected: ExpectedRevision;
  events: NewEvent[];
  encoded: Array<{ data: string; metadata: string }>;
  guard?: AppendOptions['guard'];
  resolve: (r: AppendResult) => void;
  reject: (e: unknown) => void;
  /** The rows this append inserted (set inside the transaction; remembered only once it committed). */
  rows?: EventRow[];
}

/** Columns every read selects, in RawRow order (the chain column is read only by the audit). */
const COLUMNS = 'global_position, event_id, stream_id, stream_revision, type, schema_version, data, metadata';

/** How often a store with subscribers looks for commits of other connections (see watchOtherWriters). */
const OTHER_WRITERS_POLL_MS = 200;

/** Streams whose latest appended rows are kept in memory, and the largest row worth keeping. */
const TAIL_STREAMS = 1024;
/** How long logBytes may answer from its last exact figure (see logBytes). */
const LOG_SIZE_FRESH_MS = 1000;
const TAIL_MAX_ROW_CHARS = 64 * 1024;
/** …and the characters of all kept tails together (8 Mi): one append may hold many rows, each under the row limit. */
const TAIL_CHARS = 8 * 1024 * 1024;
const rowsChars = (rows: readonly EventRow[]): number => {
  let n = 0;
  for (const r of rows) n += r.data.length + r.metadata.length;
  return n;
};
/** How many of this connection's latest appended events subscriptions can take from memory (recentPage)… */
const RECENT_EVENTS = 1024;
/** …and at most how many characters of data and metadata they hold together (large events leave sooner). */
const RECENT_CHARS = 4 * 1024 * 1024;

const PAGE = 1000;


const RESOLVED = Promise.resolve();

/** See SqliteEventStore.loneFlushes: how often a lone appender's flush waits a turn to find others. */
const PROBE_EVERY = 32;

/**
 * A stored event whose data and metadata are decoded on first access: a reader that filters on type
 * or stream (a read model's `relevant`, a rebuild skipping events no model folds) never parses them.
 */
class StoredEvent implements RecordedEvent {
  eventId: string;
  streamId: string;
  streamRevision: number;
  globalPosition: number;
  type: string;
  schemaVersion: number;
  private rawData: string;
  private decodedData?: unknown;
  private rawMetadata: string;
  private decodedMetadata?: EventMetadata;

  constructor(row: EventRow) {
    this.eventId = row.event_id;
    this.streamId = row.stream_id;
    this.streamRevision = row.stream_revision;
    this.globalPosition = row.global_position;
    this.type = internedType(row.type);
    this.schemaVersion = row.schema_version;
    this.rawMetadata = row.metadata;
    this.rawData = row.data;
    // An older schema is upcast now (it also changes schemaVersion, which readers see without the data).
    if (row.schema_version < currentVersion(row.type)) {
      const up = upcastEvent(row.type, row.schema_version, JSON.parse(row.data), this.metadata);
      this.schemaVersion = up.schemaVersion;
      this.data = up.data;
    }
  }

  get data(): unknown {
    // (JSON never decodes to undefined: undefined is "not decoded yet".)
    if (this.decodedData === undefined) {
      this.decodedData = JSON.parse(this.rawData);
      // Not kept beside its decoding (events held by a projection would cost their JSON twice).
      this.rawData = '';
    }
    return this.decodedData;
  }

  set data(d: unknown) {
    this.decodedData = d;
  }

  get metadata(): EventMetadata {
    return (this.decodedMetadata ??= JSON.parse(this.rawMetadata));
  }

  set metadata(m: EventMetadata) {
    this.decodedMetadata = m;
  }

  toJSON(): RecordedEvent {
    return {
      eventId: this.eventId,
      streamId: this.streamId,
      streamRevision: this.streamRevision,
      globalPosition: this.globalPosition,
      type: this.type,
      schemaVersion: this.schemaVersion,
      data: this.data,
      metadata: this.metadata,
    };
  }
}

/** Columns of a lean read (ReadAllOptions.lean), in LeanRawRow order: no event id, no metadata. */
const LEAN_COLUMNS = 'global_position, stream_id, stream_revision, type, schema_version, data';
type LeanRawRow = [number, string, number, string, number, string];

/**
 * An event of a lean read (ReadAllOptions.lean / ReadStreamOptions.lean: folds that read neither its id
 * nor its metadata). Those two were two of a row's three strings: without them a read costs about a third
 * less CPU per event and a fold's rebuild about a quarter less (bench:projections, session 51). Both are
 * read on first use (one query), so a fold that does read them is slower, never wrong.
 */
class LeanStoredEvent implements RecordedEvent {
  streamId: string;
  streamRevision: number;
  globalPosition: number;
  type: string;
  schemaVersion: number;
  private rawData: string;
  private decodedData?: unknown;
  private envelope?: { eventId: string; rawMetadata: string; metadata?: EventMetadata };

  constructor(
    row: LeanRawRow,
    private readonly envelopeAt: (position: number) => [string, string],
  ) {
    this.globalPosition = row[0];
    this.streamId = row[1];
    this.streamRevision = row[2];
    this.type = internedType(row[3]);
    this.schemaVersion = row[4];
    this.rawData = row[5];
    if (row[4] < currentVersion(row[3])) {
      const up = upcastEvent(row[3], row[4], JSON.parse(row[5]), this.metadata);
      this.schemaVersion = up.schemaVersion;
      this.data = up.data;
    }
  }

  get data(): unknown {
    if (this.decodedData === undefined) {
      this.decodedData = JSON.parse(this.rawData);
      this.rawData = '';
    }
    return this.decodedData;
  }

  set data(d: unknown) {
    this.decodedData = d;
  }

  private envelopeOf(): { eventId: string; rawMetadata: string; metadata?: EventMetadata } {
    if (!this.envelope) {
      const [eventId, rawMetadata] = this.envelopeAt(this.globalPosition);
      this.envelope = { eventId, rawMetadata };
    }
    return this.envelope;
  }

  get eventId(): string {
    return this.envelopeOf().eventId;
  }

  get metadata(): EventMetadata {
    const env = this.envelopeOf();
    return (env.metadata ??= JSON.parse(env.rawMetadata));
  }

  set metadata(m: EventMetadata) {
    this.envelopeOf().metadata = m;
  }

  toJSON(): RecordedEvent {
    return {
      eventId: this.eventId,
      streamId: this.streamId,
      streamRevision: this.streamRevision,
      globalPosition: this.globalPosition,
      type: this.type,
      schemaVersion: this.schemaVersion,
      data: this.data,
      metadata: this.metadata,
    };
  }
}

/**
 * The embedded event store: one SQLite file per workspace, WAL, prepared statements.
 *
 * Group commit: appends issued in the same turn of the event loop are applied in ONE transaction, each
 * with its own expected-revision check, and every caller is acknowledged only after that transaction
 * committed (durably at synchronous=FULL). A lone caller pays one fsync as before; 50 concurrent ones
 * share it — the only way past the ~2–3k fsyncs/s wall of single-event transactions. A store that has
 * seen no concurrent appender for PROBE_EVERY flushes flushes at the end of the caller's synchronous
 * code instead (appends issued together still share one transaction), and waits for the turn again on
 * every PROBE_EVERY-th flush, and on all of them as soon as one such flush found company (loneFlushes).
 */
export class SqliteEventStore implements EventStore, AuditLogStore {
  readonly adapter = 'sqlite';
  /** Other processes' commits are seen by polling PRAGMA data_version while anyone subscribes. */
  readonly wakesOnEveryWriter = true;
  readonly appendsAreExact = true;
  /**
   * applyOne answers for a used key under the write lock: a first event id stored already is a duplicate
   * (same command) or duplicate_event_id (anything else), and one a no-op command spent is
   * duplicate_event_id — so the kernel sends a new key no keyUnused look-up first (a statement per command).
   */
  readonly appendChecksKeys = true;
  /** applyOne checks a guard under the write lock, from the revisions it holds or one index step. */
  readonly appendGuards = true;
  readonly workspaceId: string;
  /** The database file (other threads open it read-only for `audit verify`). */
  readonly file: string;

  /**
   * The log's file and its WAL, in bytes, read per tenant command for logQuotaBytes. Exact (two stat
   * calls) whenever the answer may be at or past `limit`; below it, the last exact figure (at most
   * LOG_SIZE_FRESH_MS old) plus the characters this connection appended since — the two stat calls on
   * every command were 7 % of a server's CPU under bench:rpc (session 51). Other connections' appends
   * (a CLI, a second server) are seen within LOG_SIZE_FRESH_MS.
   */
  logBytes(limit = 0): number {
    if (this.file === ':memory:') return 0;
    const now = Date.now();
    if (this.sizeSeen && now - this.sizeSeen.at < LOG_SIZE_FRESH_MS) {
      const estimate = this.sizeSeen.bytes + this.appendedSinceSize;
      if (estimate < limit) return estimate;
    }
    let total = 0;
    for (const f of [this.file, `${this.file}-wal`]) total += fs.statSync(f, { throwIfNoEntry: false })?.size ?? 0;
    this.sizeSeen = { at: now, bytes: total };
    this.appendedSinceSize = 0;
    return total;
  }
  /** The last exact logBytes figure and when it was taken, and the characters this connection committed since. */
  private sizeSeen: { at: number; bytes: number } | null = null;
  private appendedSinceSize = 0;
  private readonly db: Database.Database;
  private readonly stmts;
  /** readTypedPage statements, by SQL text (a few per read model). */
  private readonly typedPages = new Map<string, Database.Statement>();
  private pending: PendingAppend[] = [];
  private flushScheduled = false;
  private readonly flushBound = () => this.flush();
  /** The write lock held by another process since (and retries so far): see retryWhenFree. */
  private busySince: { at: number; retries: number } | null = null;
  /**
   * < 0: concurrent appenders were seen, flushes wait for the turn of the event loop (group commit); it
   * counts up by one per flush of a single append, and at 0 the store is taken to be alone again. ≥ 0:
   * lone flushes so far (a microtask each; every PROBE_EVERY-th waits for the turn to look for company).
   */
  private loneFlushes = -PROBE_EVERY;
  private readonly listeners = new Set<() => void>();
  /** While anyone subscribes: the data_version poll that sees other connections' commits (a CLI, another server). */
  private otherWriters: NodeJS.Timeout | null = null;
  private polledDataVersion = -1;
  /**
   * Whether the workspace holds any no-op key, under the `revisions` rule (null: unknown, look). Nearly
   * every workspace holds none, and then an append needs no lookup for its key: the check cost ~10 %
   * of a lone append's CPU (bench:store --chain --baseline, session 35).
   */
  private noopKeysPresent: boolean | null = null;
  private closed = false;
  private readonly applyBatch: (batch: PendingAppend[]) => Array<{ ok: AppendResult } | { err: unknown }>;
  /** One append in a transaction of its own (BEGIN IMMEDIATE): what a lone flush runs. */
  private readonly applyAlone: (req: PendingAppend) => AppendResult;
  private readonly dataVersion: Database.Statement;
  private seenDataVersion = -1;
  /** revisionIfCurrent asked data_version in this turn of the event loop. */
  private versionAskedThisTurn = false;
  /** Last revision per stream, written only by this connection (refreshed when data_version moves). */
  private readonly revisions = new Map<string, number>();
  /**
   * The rows of the latest append this connection committed to each stream. A cached fold reads exactly
   * these right after the append (and the kernel looks a replayed batch up by id in the stream it names),
   * so serving them from memory saves a query per command. They follow the `revisions` rule (dropped
   * whenever another connection committed or an append failed) and are bounded by TAIL_STREAMS and TAIL_CHARS. No map
   * by event id beside them: keeping one cost two Map operations per event appended (~0.7 µs per event
   * of a 10-event append, perf), for look-ups that name their stream anyway.
   */
  private readonly tails = new Map<string, EventRow[]>();
  private tailChars = 0;
  /**
   * This connection's latest appended rows by position, as stored (bounded by RECENT_EVENTS), and the
   * log's head after its last commit (0: unknown), both under the `revisions` rule. A subscription woken
   * by this connection's commit takes the new events from here instead of reading them back (recentPage):
   * reading them back was ~4.5 % of a server's CPU under HTTP load (bench:rpc profile, three subscribers
   * per workspace: read models, event feed, watches).
   */
  private readonly recent = new Map<number, EventRow>();
  /** The lowest position that may still be in `recent` (positions only grow between clears), and their characters. */
  private recentFrom = 0;
  private recentChars = 0;
  private knownHead = 0;
  private readonly chain: boolean;
  /**
   * Position and hash of the last committed event, under the `revisions` rule (known only while no
   * other connection committed). Advanced by applyOne only after all of an append's rows were inserted,
   * so a refused append rolled back by its savepoint leaves the head where it was.
   */
  private chainHead: { position: number; hash: string } | null = null;
  /** Reused for each hashed row: no per-event object beyond the row itself. */
  private readonly chainScratch: ChainFields = { position: 0, streamId: '', streamRevision: 0, type: '', schemaVersion: 0, data: '', metadata: '', eventId: '' };

  private onDamaged?: (workspaceId: string, reason: string) => void;
  private damageReported = false;

  /**
   * Makes a statement answer store_damaged when SQLite finds the file damaged (and tells onDamaged once);
   * every other error passes unchanged (a busy lock is retried by the callers that see it raw).
   */
  private guard<S extends Database.Statement>(stmt: S): S {
    const target = stmt as unknown as Record<'all' | 'get' | 'run', (...args: unknown[]) => unknown>;
    for (const method of ['all', 'get', 'run'] as const) {
      const original = target[method];
      target[method] = (...args: unknown[]) => {
        try {
          return original.apply(stmt, args);
        } catch (err) {
          throw this.damaged(err);
        }
      };
    }
    return stmt;
  }

  /** `err` as store_damaged when it says the file is damaged (reported once), else unchanged. */
  private damaged(err: unknown): unknown {
    // A statement of a closed connection ("The database connection is not open"): retryable, like every closed store's refusal.
    if (this.closed) return err instanceof DomainError ? err : new StoreClosed();
    if (!isStoreDamagedError(err)) return err;
    if (!this.damageReported) {
      this.damageReported = true;
      this.onDamaged?.(this.workspaceId, `${(err as { code?: string }).code}: ${(err as Error).message}`);
    }
    return damagedStoreError(this.workspaceId, err);
  }

  constructor(options: SqliteStoreOptions) {
    this.workspaceId = options.workspaceId;
    this.file = options.file;
    mkdirPrivate(path.dirname(options.file));
    if (options.file !== ':memory:') touchPrivate(options.file);
    this.db = new Database(options.file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma(`synchronous = ${options.synchronous ?? 'FULL'}`);
    this.db.pragma(`busy_timeout = ${BUSY_STEP_MS}`);
    // Each append touches three b-trees (log, event-id index, stream index), so the WAL fills 3× faster
    // than a bare table; checkpointing every 4,000 pages (~16 MiB) instead of SQLite's 1,000 lets pages
    // rewritten by consecutive appends be copied back once. Measured: ~25 % less time per lone append at
    // synchronous=NORMAL.
    this.db.pragma('wal_autocheckpoint = 4000');
    this.chain = options.chain ?? true;
    this.db.exec(`
      CREATE TABLE IF NOT EXISTS events (
        global_position INTEGER PRIMARY KEY,
        event_id        TEXT    NOT NULL UNIQUE,
        stream_id       TEXT    NOT NULL,
        stream_revision INTEGER NOT NULL,
        type            TEXT    NOT NULL,
        schema_version  INTEGER NOT NULL,
        data            TEXT    NOT NULL,
        metadata        TEXT    NOT NULL,
        hash            BLOB,
        UNIQUE (stream_id, stream_revision)
      );
      CREATE TABLE IF NOT EXISTS chain_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS audit_checkpoints (seq INTEGER PRIMARY KEY, body TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS noop_keys (key TEXT PRIMARY KEY, principal TEXT NOT NULL, command TEXT NOT NULL, digest TEXT NOT NULL, json TEXT NOT NULL) WITHOUT ROWID;
    `);
    this.migrateChain();
    this.stmts = {
      insert: this.db.prepare(
        'INSERT INTO events (event_id, stream_id, stream_revision, type, schema_version, data, metadata) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ),
      // No explicit global_position: SQLite gives max(rowid) + 1, which is the head + 1 under the write lock
      // (applyOne checks it). An explicit rowid costs a uniqueness seek per row: ~5 % more instructions
      // per insert (callgrind, 5,000 rows): most of the ~7 % the chained insert cost over the plain one.
      // The hash as 32 bytes, and no prev_hash: it is the previous row's hash (verify reads it from there).
      // Two 64-character hex columns made each row ~130 bytes longer than the chain needs.
      insertChained: this.db.prepare(
        // The hash is bound as its hex and stored as 32 bytes by SQLite's unhex(): one JS→C++ call fewer
        // than hexWrite into a reused Buffer bound as a blob; the stored bytes are the same. Lower CPU per
        // event in 5 of 6 paired group-commit runs (median −1.1 µs; docs/audit.md "Figures").
        'INSERT INTO events (event_id, stream_id, stream_revision, type, schema_version, data, metadata, hash) VALUES (?, ?, ?, ?, ?, ?, ?, unhex(?))',
      ),
      lastHash: this.db.prepare(`SELECT global_position, ${HASH_HEX} FROM events ORDER BY global_position DESC LIMIT 1`).raw(true),
      chainPage: this.db.prepare(`SELECT ${COLUMNS}, ${HASH_HEX} FROM events WHERE global_position > ? ORDER BY global_position ASC LIMIT ?`).raw(true),
      checkpoints: this.db.prepare('SELECT seq, body FROM audit_checkpoints ORDER BY seq ASC'),
      insertCheckpoint: this.db.prepare('INSERT OR IGNORE INTO audit_checkpoints (seq, body) VALUES (?, ?)'),
      meta: this.db.prepare('SELECT value FROM chain_meta WHERE key = ?').pluck(),
      streamRevision: this.db.prepare('SELECT max(stream_revision) AS r FROM events WHERE stream_id = ?').pluck(),
      byId: this.db.prepare(`SELECT ${COLUMNS} FROM events WHERE event_id = ?`),
      forward: this.db.prepare(`SELECT ${COLUMNS} FROM events WHERE stream_id = ? AND stream_revision >= ? ORDER BY stream_revision ASC LIMIT ?`),
      backward: this.db.prepare(`SELECT ${COLUMNS} FROM events WHERE stream_id = ? AND stream_revision <= ? ORDER BY stream_revision DESC LIMIT ?`),
      all: this.db.prepare(`SELECT ${COLUMNS} FROM events WHERE global_position > ? AND global_position <= ? ORDER BY global_position ASC LIMIT ?`).raw(true),
      allLean: this.db.prepare(`SELECT ${LEAN_COLUMNS} FROM events WHERE global_position > ? AND global_position <= ? ORDER BY global_position ASC LIMIT ?`).raw(true),
      forwardLean: this.db.prepare(`SELECT ${LEAN_COLUMNS} FROM events WHERE stream_id = ? AND stream_revision >= ? ORDER BY stream_revision ASC LIMIT ?`).raw(true),
      backwardLean: this.db.prepare(`SELECT ${LEAN_COLUMNS} FROM events WHERE stream_id = ? AND stream_revision <= ? ORDER BY stream_revision DESC LIMIT ?`).raw(true),
      envelopeAt: this.db.prepare('SELECT event_id, metadata FROM events WHERE global_position = ?').raw(true),
      head: this.db.prepare('SELECT coalesce(max(global_position), 0) FROM events').pluck(),
      noopKey: this.db.prepare('SELECT principal, command, digest, json FROM noop_keys WHERE key = ?'),
      noopKeyExists: this.db.prepare('SELECT 1 FROM noop_keys WHERE key = ?').pluck(),
      keyUnused: this.db.prepare('SELECT NOT EXISTS (SELECT 1 FROM events WHERE event_id = ?) AND NOT EXISTS (SELECT 1 FROM noop_keys WHERE key = ?)').pluck(),
      anyNoopKey: this.db.prepare('SELECT EXISTS (SELECT 1 FROM noop_keys)').pluck(),
      claimNoop: this.db.prepare('INSERT OR IGNORE INTO noop_keys (key, principal, command, digest, json) VALUES (?, ?, ?, ?, ?)'),
    };
    this.dataVersion = this.db.prepare('PRAGMA data_version').pluck();
    this.onDamaged = options.onDamaged;
    for (const stmt of Object.values(this.stmts)) this.guard(stmt);
    this.guard(this.dataVersion);
    const applyOneGuarded = this.db.transaction((req: PendingAppend) => this.applyOne(req, true));
    const single = this.db.transaction((req: PendingAppend) => {
      this.checkDataVersion();
      return this.applyOne(req, true);
    });
    // A group commit first runs without a savepoint per append: applyOne refuses an append before it
    // writes any row of it (expected revision, an event id already stored), so a refusal needs nothing
    // rolled back. Only a failure after a row was written (rare: a later event's id clashes, a stale
    // chain head, an SQLite error) needs one; it aborts this transaction, and the batch runs again with
    // a savepoint per append. Two statements fewer per append (SAVEPOINT, RELEASE): ~1.5–2 µs of the
    // ~20 µs a grouped append costs (docs/audit.md "Figures", session 32).
    const eachAppend = (batch: PendingAppend[], apply: (req: PendingAppend) => AppendResult) => {
      this.checkDataVersion();
      return batch.map((req): { ok: AppendResult } | { err: unknown } => {
        try {
          return { ok: apply(req) };
        } catch (err) {
          if (err instanceof PartialWrite) throw err;
          return { err };
        }
      });
    };
    const many = this.db.transaction((batch: PendingAppend[]) => eachAppend(batch, (req) => this.applyOne(req, false)));
    // Nested transaction = SAVEPOINT: a refused append leaves the others of the batch intact.
    const manyGuarded = this.db.transaction((batch: PendingAppend[]) => eachAppend(batch, applyOneGuarded));
    // A lone append needs no savepoint: if it is refused, its whole transaction rolls back.
    // BEGIN IMMEDIATE: the write lock is taken before anything is read, so the revisions and the chain
    // head read inside (or trusted from the cache after the data_version check) cannot go stale before
    // the rows are written — a second process appending to the same file cannot fork the chain.
    this.applyAlone = (req) => single.immediate(req);
    this.applyBatch = (batch) => {
      if (batch.length > 1) {
        try {
          return many.immediate(batch);
        } catch (err) {
          if (!(err instanceof PartialWrite)) throw err;
          // Rolled back whole: what the first run advanced in memory (revisions, tails, chain head) is void.
          this.forgetRevisions();
          for (const req of batch) req.rows = undefined;
          return manyGuarded.immediate(batch);
        }
      }
      try {
        return [{ ok: this.applyAlone(batch[0]) }];
      } catch (err) {
        if (isSqliteError(err)) throw err;
        return [{ err }];
      }
    };
  }

  /** Inside the write transaction: another connection committed since our last look → caches are stale. */
  private checkDataVersion(): void {
    const version = this.dataVersion.get() as number;
    if (version !== this.seenDataVersion) {
      this.forgetRevisions();
      this.seenDataVersion = version;
    }
  }

  /**
   * Upgrade of a log written before the chain: add the column, hash the existing rows in order (one
   * transaction) and record `chained_from` = the head at that moment — those events are covered from now
   * on, but nothing attests their history before the upgrade; `audit verify` says so.
   *
   * Upgrade of a log chained in the first layout (`prev_hash` and `hash` as 64-character hex text): the
   * hashes become 32-byte BLOBs and `prev_hash` is dropped, in one transaction. Nothing is re-hashed, so
   * every signed checkpoint still matches. A stored prev_hash that disagreed with the row before it (a
   * tampered link) is not lost evidence: the hashes were computed over it, so verify still finds that row.
   */
  private migrateChain(): void {
    const cols = (this.db.prepare('PRAGMA table_info(events)').all() as Array<{ name: string }>).map((c) => c.name);
    const hexLayout = cols.includes('prev_hash');
    const upgrade = this.db.transaction(() => {
      if (hexLayout) {
        // A text that is not hex stays as it was: verify then reports that row as edited, not as unchained.
        this.db.exec("UPDATE events SET hash = coalesce(unhex(hash), hash) WHERE typeof(hash) = 'text'");
        this.db.exec('ALTER TABLE events DROP COLUMN prev_hash');
      }
      if (!cols.includes('hash')) this.db.exec('ALTER TABLE events ADD COLUMN hash BLOB');
      if (this.db.prepare("SELECT value FROM chain_meta WHERE key = 'chained_from'").pluck().get() !== undefined) return;
      const page = this.db.prepare(`SELECT ${COLUMNS} FROM events WHERE global_position > ? ORDER BY global_position ASC LIMIT 10000`).raw(true);
      const set = this.db.prepare('UPDATE events SET hash = ? WHERE global_position = ?');
      let prev = genesisHash(this.workspaceId);
      let head = 0;
      for (let rows = page.all(0) as RawRow[]; rows.length > 0; rows = page.all(head) as RawRow[]) {
        for (const r of rows) {
          const row = fromRaw(r);
          const hash = chainHash(prev, rowFields(row));
          set.run(hashBytes(hash), row.global_position);
          prev = hash;
          head = row.global_position;
        }
      }
      this.db.prepare("INSERT INTO chain_meta (key, value) VALUES ('chained_from', ?)").run(String(head));
    });
    if (this.chain || !cols.includes('hash') || hexLayout) upgrade.immediate();
  }

  append(streamId: string, expected: ExpectedRevision, events: NewEvent[], options?: AppendOptions): Promise<AppendResult> {
    if (this.closed) return Promise.reject(new StoreClosed());
    if (events.length === 0) return Promise.reject(new Error('append needs at least one event'));
    // Encode before queueing: serialization errors belong to this caller, not to the whole batch.
    const encoded = events.map(encodedJsonOf);
    const guard = options?.guard;
    return new Promise((resolve, reject) => {
      this.pending.push(guard ? { streamId, expected, events, encoded, guard, resolve, reject } : { streamId, expected, events, encoded, resolve, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        // Alone (no concurrent appender seen lately): flush at the end of the caller's synchronous code,
        // without waiting for a turn of the event loop (its epoll, its timers: ~4–5 µs of a lone append,
        // session 37) — appends issued in the same synchronous block still share the transaction. Every
        // PROBE_EVERY-th flush, and always once concurrency was seen, waits for the turn as before, so
        // appends of other callbacks of the same turn (an HTTP server's requests) join one group commit.
        if (this.loneFlushes < 0 || ++this.loneFlushes % PROBE_EVERY === 0) setImmediate(this.flushBound);
        // A resolved promise's then, not queueMicrotask: that one wraps each callback in a new AsyncResource.
        else RESOLVED.then(this.flushBound);
      }
    });
  }

  private flush(): void {
    this.flushScheduled = false;
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return;
    // A retry's timer (retryWhenFree) that fires after close(): nothing can be written any more.
    if (this.closed) {
      for (const req of batch) req.reject(new DomainError('store_unavailable', 'store: closed while another process held the write lock; nothing was recorded'));
      return;
    }
    if (batch.length === 1) {
      if (this.loneFlushes < 0) this.loneFlushes++;
      return this.flushOne(batch[0]);
    }
    // Concurrency seen (a turn's flush held appends of several callers): wait for turns from now on;
    // PROBE_EVERY lone flushes in a row: back to flushing at once.
    this.loneFlushes = -PROBE_EVERY;
    let results: Array<{ ok: AppendResult } | { err: unknown }>;
    try {
      results = this.applyBatch(batch);
    } catch (err) {
      this.forgetRevisions();
      if (isBusy(err) && this.retryWhenFree(batch)) return;
      for (const req of batch) req.reject(storeErrorOf(this.damaged(err)));
      return;
    }
    if (this.busySince) this.lockFree();
    if (results.some((r) => 'err' in r)) this.forgetRevisions();
    else
      for (const req of batch) {
        if (!req.rows) continue;
        this.rememberTail(req.streamId, req.rows);
        this.rememberRecent(req.rows);
      }
    let wrote = false;
    results.forEach((r, i) => {
      if ('ok' in r) {
        if (!r.ok.duplicate) {
          wrote = true;
          this.countAppended(batch[i].rows);
        }
        batch[i].resolve(r.ok);
      } else batch[i].reject(storeErrorOf(this.damaged(r.err)));
    });
    if (wrote) for (const l of this.listeners) l();
  }

  /**
   * A group commit that found the write lock taken goes back to the head of the queue (appends arriving
   * meanwhile join it) and is tried again from a timer; false once BUSY_WAIT_MS have passed since the
   * lock was first found taken (or the store is closing): the caller refuses it.
   */
  private retryWhenFree(batch: PendingAppend[]): boolean {
    const now = Date.now();
    if (!this.busySince) {
      this.busySince = { at: now, retries: 0 };
      // While the lock is known to be held, attempts do not wait on this thread at all (the timer waits).
      this.db.pragma('busy_timeout = 0');
    }
    // Past the wait, every later group commit gets one attempt (BUSY_STEP_MS) and is refused if the lock is
    // still held: appends queued behind the first do not each wait BUSY_WAIT_MS again. A write clears it.
    if (this.closed || now - this.busySince.at >= BUSY_WAIT_MS) return false;
    this.pending = batch.concat(this.pending);
    const delay = Math.min(BUSY_RETRY_MS.max, BUSY_RETRY_MS.first * 2 ** this.busySince.retries++);
    this.flushScheduled = true;
    setTimeout(this.flushBound, delay);
    return true;
  }

  /** A write went through: the lock is free again, and the next one found taken waits BUSY_STEP_MS first. */
  private lockFree(): void {
    this.busySince = null;
    this.db.pragma(`busy_timeout = ${BUSY_STEP_MS}`);
  }

  /** flush() of a single append: applyBatch's answer without its per-append wrappers (the lone writer's hot path). */
  private flushOne(req: PendingAppend): void {
    let result: AppendResult;
    try {
      result = this.applyAlone(req);
    } catch (err) {
      // A refusal or an SQLite error alike: the transaction rolled back, the caches may be ahead of it.
      this.forgetRevisions();
      if (isBusy(err) && this.retryWhenFree([req])) return;
      req.reject(storeErrorOf(this.damaged(err)));
      return;
    }
    if (this.busySince) this.lockFree();
    if (req.rows) {
      this.rememberTail(req.streamId, req.rows);
      this.rememberRecent(req.rows);
      this.countAppended(req.rows);
    }
    req.resolve(result);
    if (!result.duplicate) for (const l of this.listeners) l();
  }

  /**
   * Writes one append's rows, or refuses it before writing any of them (expected revision, an id stored
   * already) — unless `guarded` (inside a savepoint or a transaction of its own) a failure after a row was
   * written throws PartialWrite, for the caller to roll the whole batch back.
   */
  private applyOne(req: PendingAppend, guarded: boolean): AppendResult {
    const { streamId, events } = req;
    let current = this.revisions.get(streamId);
    if (current === undefined) current = (this.stmts.streamRevision.get(streamId) as number | null) ?? -1;
    try {
      checkExpected(streamId, req.expected, current);
    } catch (err) {
      // Idempotency first: a retry of an append that already landed answers as the original did, even
      // when the stream has moved on since. (When the revision fits, the first insert finds the retry:
      // its event id is unique; no lookup is spent on the appends that are new, nearly all of them.)
      const existing = this.stmts.byId.get(events[0].eventId) as EventRow | undefined;
      if (existing) return this.duplicateResult(req, existing);
      throw err;
    }
    if (req.guard) {
      // Under the write lock: the revision held (this connection's own appends, earlier ones of this
      // batch included, exact since checkDataVersion) or one step down the stream index.
      const g = req.guard.streamId;
      let at = this.revisions.get(g);
      if (at === undefined) this.revisions.set(g, (at = (this.stmts.streamRevision.get(g) as number | null) ?? -1));
      checkGuard(req.guard, at);
    }
    // A key spent by a command that wrote nothing cannot also be spent by events (checked under the
    // write lock, as claimNoopKey checks the events: whichever commits first holds the key).
    this.noopKeysPresent ??= this.stmts.anyNoopKey.get() === 1;
    if (this.noopKeysPresent && this.stmts.noopKeyExists.get(events[0].eventId) !== undefined) throw new DuplicateEventId(events[0].eventId);
    let first = 0;
    let last = 0;
    const rows: EventRow[] = [];
    const head = this.chain ? this.currentChainHead() : null;
    let headPos = head ? head.position : 0;
    let headHash = head ? head.hash : '';
    for (let i = 0; i < events.length; i++) {
      const e = events[i];
      let pos: number;
      const row: EventRow = { global_position: 0, event_id: e.eventId, stream_id: streamId, stream_revision: current + 1 + i, type: e.type, schema_version: e.schemaVersion, data: req.encoded[i].data, metadata: req.encoded[i].metadata };
      try {
        if (head) {
          pos = headPos + 1;
          row.global_position = pos;
          const f = this.chainScratch;
          f.position = pos;
          f.streamId = streamId;
          f.streamRevision = row.stream_revision;
          f.type = e.type;
          f.schemaVersion = e.schemaVersion;
          f.data = row.data;
          f.metadata = row.metadata;
          f.eventId = e.eventId;
          const hash = chainHash(headHash, f);
          const assigned = Number(this.stmts.insertChained.run(e.eventId, streamId, row.stream_revision, e.type, e.schemaVersion, row.data, row.metadata, hash).lastInsertRowid);
          // Cannot differ while the head is right (rows are only ever appended); if it does, the row was
          // hashed for another position: refuse it (the savepoint rolls it back) and re-read the head.
          if (assigned !== pos) throw new ChainHeadStale(pos, assigned);
          headPos = pos;
          headHash = hash;
        } else {
          pos = Number(this.stmts.insert.run(e.eventId, streamId, row.stream_revision, e.type, e.schemaVersion, row.data, row.metadata).lastInsertRowid);
          row.global_position = pos;
        }
      } catch (err) {
        if (i === 0 && isUniqueEventId(err)) {
          // The first event is stored already (the failed insert wrote nothing): a retry, or a clash.
          const existing = this.stmts.byId.get(e.eventId) as EventRow | undefined;
          if (existing) return this.duplicateResult(req, existing);
        }
        const refusal = isUniqueEventId(err) ? new DuplicateEventId(e.eventId) : err;
        // Rows of this append may be written (a ChainHeadStale follows its row's insert): only a
        // savepoint or the whole transaction takes them back.
        if (!guarded) throw new PartialWrite(refusal);
        throw refusal;
      }
      if (i === 0) first = pos;
      last = pos;
      rows.push(row);
    }
    req.rows = rows;
    if (head) {
      // In place: the head object is this store's alone (currentChainHead hands it out only to applyOne).
      head.position = headPos;
      head.hash = headHash;
    }
    this.revisions.set(streamId, current + events.length);
    return { streamId, nextExpectedRevision: current + events.length, firstPosition: first, lastPosition: last, duplicate: false };
  }

  /** Same ids appended again: idempotent only if they are the same consecutive events of the same stream. */
  private duplicateResult(req: PendingAppend, first: EventRow): AppendResult {
    if (first.stream_id !== req.streamId) throw new DuplicateEventId(first.event_id);
    // The same ids from another caller or payload (one key sent at once with two payloads) are a clash,
    // decided here under the write lock: never an acknowledgement of events the caller did not write.
    if (!sameCommand(JSON.parse(first.metadata) as EventMetadata, req.events[0].metadata)) throw new DuplicateEventId(first.event_id);
    let last = first;
    for (let i = 1; i < req.events.length; i++) {
      const row = this.stmts.byId.get(req.events[i].eventId) as EventRow | undefined;
      if (!row || row.stream_id !== req.streamId || row.stream_revision !== first.stream_revision + i) throw new DuplicateEventId(req.events[i].eventId);
      last = row;
    }
    return { streamId: req.streamId, nextExpectedRevision: last.stream_revision, firstPosition: first.global_position, lastPosition: last.global_position, duplicate: true };
  }

  async *readStream(streamId: string, options: ReadStreamOptions = {}): AsyncIterable<RecordedEvent> {
    const backward = options.direction === 'backward';
    let remaining = options.maxCount ?? Number.MAX_SAFE_INTEGER;
    let cursor = options.fromRevision ?? (backward ? Number.MAX_SAFE_INTEGER : 0);
    // Cached folds read "everything past revision r" on every command, and nearly always find nothing:
    // when this connection knows the stream's last revision (and nobody else committed since), that
    // answer needs no query. Under HTTP load these empty reads were ~10% of the server's CPU.
    if (!backward) {
      const known = this.revisionIfCurrent(streamId);
      if (known < cursor) return;
      const tail = this.tails.get(streamId);
      if (tail && tail[tail.length - 1].stream_revision === known && tail[0].stream_revision <= cursor) {
        for (const row of tail) {
          if (row.stream_revision < cursor) continue;
          if (remaining-- <= 0) return;
          yield new StoredEvent(row);
        }
        return;
      }
    }
    const turns = new EventLoopTurns();
    while (remaining > 0) {
      const limit = Math.min(PAGE, remaining);
      let last: number;
      let n: number;
      if (options.lean) {
        const rows = (backward ? this.stmts.backwardLean : this.stmts.forwardLean).all(streamId, cursor, limit) as LeanRawRow[];
        n = rows.length;
        if (n === 0) return;
        last = rows[n - 1][2];
        for (let i = 0; i < n; i++) {
          const row = rows[i];
          // Let go once handed over (see readAll).
          (rows as Array<LeanRawRow | undefined>)[i] = undefined;
          yield new LeanStoredEvent(row, this.envelopeAtBound);
        }
      } else {
        const rows = (backward ? this.stmts.backward : this.stmts.forward).all(streamId, cursor, limit) as EventRow[];
        n = rows.length;
        if (n === 0) return;
        last = rows[n - 1].stream_revision;
        for (const row of rows) yield new StoredEvent(row);
      }
      if (n < limit) return;
      remaining -= n;
      cursor = last + (backward ? -1 : 1);
      await turns.between();
    }
  }

  /** The id and metadata of the event at `position`: what a lean read's event reads on first use. */
  private readonly envelopeAtBound = (position: number): [string, string] => {
    const row = this.stmts.envelopeAt.get(position) as [string, string] | undefined;
    if (!row) throw new Error(`event at position ${position} not found`);
    return row;
  };

  /**
   * The stream's last revision if this connection knows it for certain, else +Infinity (unknown: read).
   * The cache holds exact revisions written by this connection's appends; data_version tells whether
   * another connection committed since, in which case the cache is dropped. Appends still queued are
   * not committed, so they are invisible to reads either way.
   */
  private revisionIfCurrent(streamId: string): number {
    if (this.closed) return Number.POSITIVE_INFINITY;
    // Asked once per turn of the event loop (a command's reads run in one turn: better-sqlite3 is
    // synchronous): the pragma on every read was ~6 % of a server's CPU under load. A commit by another
    // process during this turn is seen on the next one, as if the read had started a moment earlier.
    if (!this.versionAskedThisTurn) {
      this.versionAskedThisTurn = true;
      setImmediate(() => (this.versionAskedThisTurn = false));
      const version = this.dataVersion.get() as number;
      if (version !== this.seenDataVersion) {
        this.forgetRevisions();
        this.seenDataVersion = version;
        return Number.POSITIVE_INFINITY;
      }
    }
    return this.revisions.get(streamId) ?? Number.POSITIVE_INFINITY;
  }

  /** The chain head, read inside the write transaction when this connection does not know it. */
  private currentChainHead(): { position: number; hash: string } {
    if (this.chainHead) return this.chainHead;
    const last = this.stmts.lastHash.get() as [number, string | null] | undefined;
    if (!last) return (this.chainHead = { position: 0, hash: genesisHash(this.workspaceId) });
    // A row without a hash (written with the chain off) cannot be extended: chain from it anyway so
    // appends keep working; verify reports the unchained row.
    return (this.chainHead = { position: last[0], hash: last[1] ?? '' });
  }

  private forgetRevisions(): void {
    this.chainHead = null;
    this.recent.clear();
    this.recentFrom = 0;
    this.recentChars = 0;
    this.knownHead = 0;
    this.noopKeysPresent = null;
    this.revisions.clear();
    this.tails.clear();
    this.tailChars = 0;
  }

  /** Committed rows' characters, added to logBytes' estimate until its next exact figure. */
  private countAppended(rows: EventRow[] | undefined): void {
    if (!rows) return;
    for (let i = 0; i < rows.length; i++) this.appendedSinceSize += rows[i].data.length + rows[i].metadata.length;
  }

  private rememberTail(streamId: string, rows: EventRow[]): void {
    const previous = this.tails.get(streamId);
    if (previous) this.tailChars -= rowsChars(previous);
    let chars = 0;
    for (let i = 0; i < rows.length; i++) {
      const c = rows[i].data.length + rows[i].metadata.length;
      if (c > TAIL_MAX_ROW_CHARS) {
        if (previous) this.tails.delete(streamId);
        return;
      }
      chars += c;
    }
    // A stream already held keeps its place: eviction is by first remembered, not least recently
    // appended (a hot stream evicted is read once and remembered again) — one Map operation less per append.
    this.tails.set(streamId, rows);
    this.tailChars += chars;
    // Bounded by streams and by characters (a tenant's appends of many large rows); this append's rows
    // stay even past the character bound, so the cached fold that reads them next still finds them.
    while (this.tails.size > 1 && (this.tails.size > TAIL_STREAMS || this.tailChars > TAIL_CHARS)) {
      const oldest = this.tails.keys().next().value as string;
      if (oldest === streamId) {
        // Itself first in line: it goes to the back, the others go first.
        this.tails.delete(streamId);
        this.tails.set(streamId, rows);
        continue;
      }
      this.tailChars -= rowsChars(this.tails.get(oldest)!);
      this.tails.delete(oldest);
    }
  }

  /** A committed append's rows: the head moved to its last (this connection holds the write lock while it commits). */
  private rememberRecent(rows: EventRow[]): void {
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i];
      const chars = row.data.length + row.metadata.length;
      // A row too large to keep leaves a gap: pages across it are read.
      if (chars > TAIL_MAX_ROW_CHARS) continue;
      if (this.recent.size === 0) this.recentFrom = row.global_position;
      this.recent.set(row.global_position, row);
      this.recentChars += chars;
    }
    this.knownHead = rows[rows.length - 1].global_position;
    // Oldest first, by position: a gap's position is skipped (nothing to delete there).
    while (this.recent.size > RECENT_EVENTS || this.recentChars > RECENT_CHARS) {
      const old = this.recent.get(this.recentFrom);
      if (old) {
        this.recent.delete(this.recentFrom);
        this.recentChars -= old.data.length + old.metadata.length;
      }
      this.recentFrom++;
    }
  }

  /**
   * A subscription's next page without a query, when this connection can answer it: every event after
   * `after` up to the head is one of its recent appends, and no other connection committed since its
   * last write transaction began (data_version; then the head it knows is the log's). null: read.
   */
  private recentPage(after: number, limit: number): RecordedEvent[] | null {
    const head = this.knownHead;
    if (head === 0 || after > head || this.closed) return null;
    const page: RecordedEvent[] = [];
    for (let p = after + 1; p <= head && page.length < limit; p++) {
      const row = this.recent.get(p);
      if (!row) return null;
      page.push(new StoredEvent(row));
    }
    const version = this.dataVersion.get() as number;
    if (version !== this.seenDataVersion) {
      this.forgetRevisions();
      this.seenDataVersion = version;
      return null;
    }
    return page;
  }

  /** Synchronous page read: the building block of readAll and subscriptions. */
  readPage(after: number, limit: number, until = Number.MAX_SAFE_INTEGER): RecordedEvent[] {
    return (this.stmts.all.all(after, until, limit) as RawRow[]).map((r) => new StoredEvent(fromRaw(r)));
  }

  /**
   * The events of `types` in (after, until], in log order, narrowed by `where` (an SQL predicate over
   * the events table's columns) when given: what a read model's set-based rebuild folds in JS, the few
   * events its statements cannot project (src/readmodels/stored/bulk.ts).
   */
  readTypedPage(after: number, until: number, types: readonly string[], where?: string): RecordedEvent[] {
    const sql = `SELECT ${COLUMNS} FROM events WHERE global_position > ? AND global_position <= ? AND type IN (${types.map(() => '?').join(', ')})${where ? ` AND (${where})` : ''} ORDER BY global_position`;
    let stmt = this.typedPages.get(sql);
    if (!stmt) this.typedPages.set(sql, (stmt = this.guard(this.db.prepare(sql).raw(true))));
    return (stmt.all(after, until, ...types) as RawRow[]).map((r) => new StoredEvent(fromRaw(r)));
  }

  /** readPage without the events' ids and metadata (ReadAllOptions.lean). */
  private readLeanPage(after: number, limit: number, until: number): RecordedEvent[] {
    const rows = this.stmts.allLean.all(after, until, limit) as LeanRawRow[];
    const out: RecordedEvent[] = new Array(rows.length);
    for (let i = 0; i < rows.length; i++) out[i] = new LeanStoredEvent(rows[i], this.envelopeAtBound);
    return out;
  }

  async *readAll(options: ReadAllOptions = {}): AsyncIterable<RecordedEvent> {
    let after = options.after ?? 0;
    let remaining = options.maxCount ?? Number.MAX_SAFE_INTEGER;
    const until = options.until ?? Number.MAX_SAFE_INTEGER;
    const turns = new EventLoopTurns();
    while (remaining > 0) {
      const page: Array<RecordedEvent | undefined> = options.lean ? this.readLeanPage(after, Math.min(PAGE, remaining), until) : this.readPage(after, Math.min(PAGE, remaining), until);
      const n = page.length;
      if (n === 0) return;
      after = page[n - 1]!.globalPosition;
      // Each slot is let go once handed over: a reader that keeps nothing of an event (a rebuild keeps a
      // few fields of its data) leaves it, and its decoded data, to die young instead of living on in
      // the page until the page is done — every young collection meanwhile would copy it, and promote it.
      for (let i = 0; i < n; i++) {
        const e = page[i]!;
        page[i] = undefined;
        yield e;
      }
      if (n < Math.min(PAGE, remaining)) return;
      remaining -= n;
      await turns.between();
    }
  }

  subscribeAll(options: SubscribeOptions = {}): Subscription {
    return new LiveSubscription(options.after ?? 0, async (after, limit) => this.recentPage(after, limit) ?? this.readPage(after, limit), (wake) => {
      this.listeners.add(wake);
      this.watchOtherWriters();
      return () => {
        this.listeners.delete(wake);
        if (this.listeners.size === 0) this.stopWatchingOtherWriters();
      };
    });
  }

  /**
   * This connection's own commits wake subscribers at once (flush). Commits of other connections to the
   * same file — `review run` from the CLI on a served data dir, a second server — change PRAGMA
   * data_version, which costs a microsecond to read: polled every OTHER_WRITERS_POLL_MS while anyone
   * subscribes, they reach subscribers within that (issue 34: they used to wait for this process's next append).
   */
  private watchOtherWriters(): void {
    if (this.otherWriters || this.closed) return;
    this.polledDataVersion = this.dataVersion.get() as number;
    this.otherWriters = setInterval(() => {
      if (this.closed) return this.stopWatchingOtherWriters();
      let version: number;
      try {
        version = this.dataVersion.get() as number;
      } catch {
        return; // busy or closing: the next tick looks again
      }
      if (version === this.polledDataVersion) return;
      this.polledDataVersion = version;
      for (const l of [...this.listeners]) l();
    }, OTHER_WRITERS_POLL_MS).unref();
  }

  private stopWatchingOtherWriters(): void {
    if (this.otherWriters) clearInterval(this.otherWriters);
    this.otherWriters = null;
  }

  /** One statement for the kernel's "is this a new key" (instead of findEvent, then findNoopKey). */
  async keyUnused(key: string): Promise<boolean> {
    return this.stmts.keyUnused.get(key, key) === 1;
  }

  /** The row of `eventId` among the stream's remembered tail (the kernel names the stream it looks in). */
  private tailRowOf(eventId: string, streamId: string | undefined): EventRow | undefined {
    const tail = streamId === undefined ? undefined : this.tails.get(streamId);
    if (tail) for (let i = 0; i < tail.length; i++) if (tail[i].event_id === eventId) return tail[i];
    return undefined;
  }

  async findEvent(eventId: string, streamHint?: string): Promise<RecordedEvent | null> {
    const row = this.tailRowOf(eventId, streamHint) ?? (this.stmts.byId.get(eventId) as EventRow | undefined);
    return row ? new StoredEvent(row) : null;
  }

  async streamRevision(streamId: string): Promise<number> {
    return (this.stmts.streamRevision.get(streamId) as number | null) ?? -1;
  }

  async headPosition(): Promise<number> {
    return this.stmts.head.get() as number;
  }

  async readChainPage(after: number, limit: number): Promise<ChainRow[]> {
    return (this.stmts.chainPage.all(after, limit) as Array<[...RawRow, string | null]>).map((r) => ({
      position: r[0],
      eventId: r[1],
      streamId: r[2],
      streamRevision: r[3],
      type: r[4],
      schemaVersion: r[5],
      data: r[6],
      metadata: r[7],
      hash: r[8],
    }));
  }

  /** AuditLogStore.editMark: PRAGMA data_version moves with every other connection's commit to the file (a direct edit, another writer). */
  async editMark(): Promise<string> {
    return String(this.dataVersion.get());
  }

  async chainInfo(): Promise<ChainInfo> {
    const last = this.stmts.lastHash.get() as [number, string | null] | undefined;
    return {
      chainedFrom: Number(this.stmts.meta.get('chained_from') ?? 0),
      headPosition: last?.[0] ?? 0,
      headHash: last ? (last[1] ?? '') : genesisHash(this.workspaceId),
    };
  }

  /**
   * `audit verify`'s fast pass: the log up to the current head split into `threads` ranges, each
   * checked by a worker thread on its own read-only connection (chain-worker.ts), then stitched:
   * range k starts from the stored hash at its lower bound, which must be range k − 1's last hash (the
   * genesis for the first range). Sequential
   * verification is one core hashing; this uses them all. Null → the streaming pass runs instead.
   */
  async chainScan(wanted: Set<number>, genesis: string, threads: number): Promise<CleanScan | null> {
    if (this.file === ':memory:' || threads < 2) return null;
    const head = this.stmts.head.get() as number;
    if (head < PARALLEL_SCAN_MIN_ROWS) return null;
    const n = Math.min(threads, Math.ceil(head / (PARALLEL_SCAN_MIN_ROWS / 2)));
    const bounds = Array.from({ length: n + 1 }, (_, i) => Math.round((head * i) / n));
    const jobs: ChainScanJob[] = bounds.slice(1).map((hi, i) => ({ file: this.file, lo: bounds[i], hi, wanted: [...wanted].filter((p) => p > bounds[i] && p <= hi) }));
    let results: ChainScanResult[];
    try {
      results = await Promise.all(jobs.map((job) => runChainScanWorker(job, genesis)));
    } catch {
      return null;
    }
    const hashAt = new Map<number, string>();
    let prev = genesis;
    for (const r of results) {
      // The first range starts from the genesis (handed to it); each later one from the stored hash at its lower bound.
      if (!r.ok || (r.firstPrevHash ?? genesis) !== prev || r.lastHash === null) return null;
      for (const [p, h] of r.hashAt) hashAt.set(p, h);
      prev = r.lastHash;
    }
    return { count: head, last: head, lastHash: prev, hashAt };
  }

  async appendCheckpoint(expectedSeq: number, body: string): Promise<boolean> {
    return this.stmts.insertCheckpoint.run(expectedSeq, body).changes === 1;
  }

  async claimNoopKey(key: string, record: NoopRecord): Promise<NoopRecord | 'event'> {
    if (this.closed) throw new StoreClosed();
    // BEGIN IMMEDIATE: the same write lock appends take, so "no event holds the key" stays true until
    // the claim commits — across processes sharing the file too.
    return this.db
      .transaction(() => {
        if (this.stmts.byId.get(key) !== undefined) return 'event' as const;
        this.stmts.claimNoop.run(key, record.principal, record.command, record.digest, record.json);
        this.noopKeysPresent = true;
        return this.stmts.noopKey.get(key) as NoopRecord;
      })
      .immediate();
  }

  async findNoopKey(key: string): Promise<NoopRecord | null> {
    return (this.stmts.noopKey.get(key) as NoopRecord | undefined) ?? null;
  }

  async readCheckpoints(): Promise<StoredCheckpoint[]> {
    return this.stmts.checkpoints.all() as StoredCheckpoint[];
  }

  /**
   * EventStore.exclusive: a write lock on a small file beside the log (`exclusive.db`, `BEGIN IMMEDIATE`,
   * nothing ever written), tried every EXCLUSIVE_POLL_MS without blocking this thread (busy_timeout 0).
   * The operating system drops it with its holder's process. One file: sections of every name are kept
   * apart (a served data dir has one server; the other writer is the CLI).
   */
  async exclusive<T>(name: string, fn: () => Promise<T>): Promise<T> {
    if (this.file === ':memory:') return fn();
    const lock = openSideDatabase(path.join(path.dirname(this.file), 'exclusive.db'), { wal: false, busyTimeoutMs: 0 });
    try {
      const deadline = Date.now() + EXCLUSIVE_WAIT_MS;
      for (;;) {
        try {
          lock.exec('BEGIN IMMEDIATE');
          break;
        } catch (err) {
          if ((err as { code?: string }).code !== 'SQLITE_BUSY') throw err;
          if (Date.now() > deadline) throw new DomainError('store_unavailable', `exclusive section "${name}": another process has held it for ${EXCLUSIVE_WAIT_MS} ms; retry later`, { retryAfterMs: 1000 });
          await new Promise((r) => setTimeout(r, EXCLUSIVE_POLL_MS));
        }
      }
      try {
        return await fn();
      } finally {
        lock.exec('ROLLBACK');
      }
    } finally {
      lock.close();
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    // Let queued appends finish: their callers were promised an answer.
    if (this.pending.length) this.flush();
    this.closed = true;
    this.stopWatchingOtherWriters();
    for (const l of this.listeners) l();
    this.listeners.clear();
    this.db.close();
  }
}

/** Below this many events the streaming pass is as fast as starting worker threads. */
const PARALLEL_SCAN_MIN_ROWS = 20_000;

function runChainScanWorker(job: ChainScanJob, genesis: string): Promise<ChainScanResult> {
  const ext = path.extname(__filename);
  const entry = path.join(__dirname, `chain-worker${ext}`);
  const workerData = { chainScan: job, genesis };
  // From the TypeScript sources (tests, benchmarks) through the swc require hook, as src/axes/visual/threads.ts.
  const worker =
    ext === '.ts'
      ? new Worker(`require(${JSON.stringify(path.resolve(__dirname, '../../../tools/ts-register.js'))}); require(${JSON.stringify(entry)});`, { eval: true, workerData })
      : new Worker(entry, { workerData });
  return new Promise((resolve, reject) => {
    let settled = false;
    worker.once('message', (m: ChainScanResult) => {
      settled = true;
      resolve(m);
    });
    worker.once('error', reject);
    worker.once('exit', (code) => {
      if (!settled) reject(new Error(`chain scan worker exited with ${code}`));
    });
  });
}

const rowFields = (r: EventRow) => ({
  position: r.global_position,
  streamId: r.stream_id,
  streamRevision: r.stream_revision,
  type: r.type,
  schemaVersion: r.schema_version,
  data: r.data,
  metadata: r.metadata,
  eventId: r.event_id,
});

/** The in-memory chain head was behind the table: the append is refused and the head forgotten (flush). */
/** An append of a group commit run without savepoints failed after writing rows: the batch runs again, guarded. */
class PartialWrite extends Error {
  constructor(readonly refusal: unknown) {
    super('append failed after writing rows; the batch is retried with a savepoint per append');
    this.name = 'PartialWrite';
  }
}

class ChainHeadStale extends Error {
  constructor(hashedFor: number, assigned: number) {
    super(`chain: event hashed for position ${hashedFor} would be stored at ${assigned}; the chain head is re-read on the next append`);
    this.name = 'ChainHeadStale';
  }
}

/**
 * By name and not `instanceof Error`: better-sqlite3's errors can come from another realm than this
 * module's `Error` (Jest's module sandbox), and a misread error would be reported raw.
 */
function isSqliteError(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { name?: unknown }).name === 'SqliteError';
}

function isUniqueEventId(err: unknown): boolean {
  return isSqliteError(err) && (err as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE' && String((err as { message?: unknown }).message).includes('events.event_id');
}
