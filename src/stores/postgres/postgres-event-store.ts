import type { PoolClient } from 'pg';
import { DomainError } from '../../domain-error';
import { encodedJsonOf, type EventMetadata, type NewEvent, type RecordedEvent } from '../../events/envelope';
import { eventCatalogue, internedType, upcastEvent } from '../../events/catalogue';
import {
  AppendResult,
  AppendOptions,
  DuplicateEventId,
  EventStore,
  ExpectedRevision,
  GuardMoved,
  NoopRecord,
  ReadAllOptions,
  ReadStreamOptions,
  StoreFreshness,
  SubscribeOptions,
  Subscription,
  WrongExpectedRevision,
  StoreClosed,
} from '../../events/store/port';
import { EXCLUSIVE_POLL_MS, EXCLUSIVE_WAIT_MS } from '../../events/store/port';
import { LiveSubscription } from '../../events/store/subscription';
import type { AuditLogStore, ChainInfo, ChainRow, StoredCheckpoint } from '../../events/chain';
import { isConnectionError, isReadOnlyError, STORE_RETRY_AFTER_MS, unavailable } from './connection-errors';
import { ANNOUNCED_ROWS_MAX } from './schema';
import { LOG_SIZE_FRESH_MS, noop, PostgresBackend, ROWS_ON_THEIR_WAY_MS, SUBSCRIPTION_RETRY_MS, type CommitNotice, type PostgresBackendOptions, type Row } from './backend';

/**
 * PostgreSQL event store. Layout: ONE `events` table for every workspace with a `workspace_id` column
 * that every statement is scoped by (not a schema per workspace): one set of prepared statements and
 * one migration for the whole server, a catalogue that is just another table, and no DDL when a
 * workspace is created. Isolation is enforced by the adapter (a store instance is bound to one
 * workspace id and every statement filters on it first: it is the leading column of every index).
 *
 * Global order (the sequence-gap problem): positions are NOT taken from a sequence. Every append
 * transaction first locks its workspace's row in `heads` (SELECT … FOR UPDATE) and numbers its events
 * from that row; the lock is held until COMMIT, and PostgreSQL makes a transaction visible before it
 * releases its locks. So position N+1 can only be assigned after the transaction holding N is visible:
 * a reader that has seen N+1 has necessarily been able to see N, and `position > checkpoint` never
 * skips a late commit. Positions are consecutive (a refused or rolled-back append returns nothing to a
 * sequence). The price — one writing transaction per workspace at a time — is paid back by group
 * commit: concurrent appends of one process share one transaction (one round trip, one fsync), so the
 * serialized section is a single `SELECT append_batch(…)` statement plus its commit.
 *
 * The unit's files: this one, a workspace's store (appends, reads, subscriptions, the audit chain); backend.ts,
 * what a process shares across workspaces (pool, LISTEN, announcements, what it knows without reading);
 * schema.ts, the migration steps (SQL text pinned by digest) and the schema version.
 */

/** Expected revision as the append function's bigint: ≥ 0 exact; the named cases as negative codes. */
const EXPECTED_CODE = { no_stream: -1, stream_exists: -2, any: -3 } as const;
const encodeExpected = (e: ExpectedRevision): number => (typeof e === 'number' ? e : EXPECTED_CODE[e]);

/** Own (and announced) rows kept for this process's subscriptions, per workspace: the last 2,048 to 2,560. */
const RECENT_EVENTS = 2048;
/** … and at most this many characters of their data and metadata (a tenant's large events, 4 Mi). */
const RECENT_CHARS = 4 * 1024 * 1024;
/** A row larger than this is not kept (recent rows, tails): its readers read it. */
const KEPT_ROW_MAX_CHARS = 64 * 1024;
/** Characters of all streams' tails together (8 Mi). */
const TAIL_CHARS = 8 * 1024 * 1024;
const rowChars = (row: Row): number => row[6].length + row[7].length;
/** Streams whose last rows are kept (freshness' ownTail), and how many rows each. */
const RECENT_STREAMS = 1024;
const TAIL_ROWS = 32;

const COLUMNS = 'global_position, event_id, stream_id, stream_revision, type, schema_version, data, metadata';

const currentVersion = (type: string): number => eventCatalogue.get(type)?.schemaVersion ?? 0;

/** A stored event; metadata is decoded on first access (most readers only need the data). */
export class DecodedEvent implements RecordedEvent {
  readonly type: string;
  schemaVersion: number;
  data: unknown;
  private decodedMetadata?: EventMetadata;

  constructor(
    readonly eventId: string,
    readonly streamId: string,
    readonly streamRevision: number,
    readonly globalPosition: number,
    type: string,
    storedVersion: number,
    data: unknown,
    private readonly rawMetadata: string | EventMetadata,
  ) {
    this.type = internedType(type);
    this.schemaVersion = storedVersion;
    this.data = data;
    if (storedVersion < currentVersion(type)) {
      const up = upcastEvent(type, storedVersion, data, this.metadata);
      this.schemaVersion = up.schemaVersion;
      this.data = up.data;
    }
  }

  get metadata(): EventMetadata {
    return (this.decodedMetadata ??= typeof this.rawMetadata === 'string' ? JSON.parse(this.rawMetadata) : this.rawMetadata);
  }

  set metadata(m: EventMetadata) {
    this.decodedMetadata = m;
  }

  toJSON(): RecordedEvent {
    const { eventId, streamId, streamRevision, globalPosition, type, schemaVersion, data, metadata } = this;
    return { eventId, streamId, streamRevision, globalPosition, type, schemaVersion, data, metadata };
  }
}

const fromRow = (r: Row): RecordedEvent => new DecodedEvent(r[1], r[2], r[3], r[0], r[4], r[5], JSON.parse(r[6]), r[7]);

interface PendingAppend {
  streamId: string;
  expected: ExpectedRevision;
  events: NewEvent[];
  data: string[];
  metadata: string[];
  guard?: AppendOptions['guard'];
  resolve: (r: AppendResult) => void;
  reject: (e: unknown) => void;
}

interface BatchRow {
  item: number;
  status: 'ok' | 'duplicate' | 'wrong_expected' | 'guard_moved' | 'duplicate_id';
  first_pos: number | null;
  last_pos: number | null;
  next_rev: number | null;
  detail: string | null;
}

export interface PostgresStoreOptions {
  backend: PostgresBackend;
  workspaceId: string;
  /** Close the backend with the store (a store opened on its own connection string). */
  ownsBackend?: boolean;
  /** Most appends one transaction carries (default 500). */
  maxBatch?: number;
  /** How long a subscription waits for another process's announced rows before reading them (default ROWS_ON_THEIR_WAY_MS). */
  rowsOnTheirWayMs?: number;
  /**
   * Test hook: runs inside the append transaction after the rows are written and the head lock is
   * held, before COMMIT (the gap test sleeps here).
   */
  beforeCommit?: (client: PoolClient) => Promise<void>;
}

const PAGE = 1000;

export class PostgresEventStore implements EventStore, AuditLogStore {
  readonly adapter = 'postgres';
  // LISTEN/NOTIFY (PostgreSQL) or a server-side subscription (KurrentDB) wakes subscribers on every process's appends.
  readonly wakesOnEveryWriter = true;
  readonly appendsAreExact = true;
  // append_batch looks every id up (stored: duplicate / duplicate_id; spent by a no-op: duplicate_id).
  readonly appendChecksKeys = true;
  // append_guarded checks each item's guard under the head lock (schema v4).
  readonly appendGuards = true;
  readonly workspaceId: string;
  private readonly backend: PostgresBackend;
  private readonly s: string;
  private readonly q;
  private pending: PendingAppend[] = [];
  private writing = false;
  private flushScheduled = false;
  private closed = false;
  private readonly subscriptions = new Set<Subscription>();
  /** The last revision this process knows of each stream without reading (its own appends, others' announced rows). */
  private readonly knownRevisions = new Map<string, number>();
  /** Per recently appended stream, its last rows of consecutive revisions, as stored (bounded). */
  private readonly tails = new Map<string, Row[]>();
  private readonly removeSink: () => void;
  /** This process's recent appends by position, as stored: subscriptions take them from here. */
  private readonly recent = new Map<number, Row>();
  /**
   * Ranges of other processes' positions this process learned of from its own appends' answers (the `seen`
   * row) before their announcements came, each with the time (Date.now()) until which a subscription waits
   * for their rows instead of reading them (recentPage).
   */
  private awaited: Array<[number, number, number]> = [];
  /** Wakes this process's subscriptions when the first awaited range runs out (nothing came: they read). */
  private awaitedTimer: NodeJS.Timeout | null = null;
  private recentChars = 0;
  private tailChars = 0;
  /**
   * logQuotaBytes (see logBytes): the characters of data and metadata the workspace's rows held up to
   * `position` as last summed, when; and this process's own appends committed since, per batch.
   */
  private size: { position: number; bytes: number; at: number } | null = null;
  private sizing = false;
  private ownSinceSize: Array<{ last: number; chars: number }> = [];
  private ownSinceChars = 0;

  /**
   * EventStore.exclusive: a session-level advisory lock on a connection of its own (sessionClient), taken
   * with pg_try_advisory_lock every EXCLUSIVE_POLL_MS (a waiter holds no lock and no pooled connection)
   * and released by ending the session — which a crash or a lost connection also does.
   */
  async exclusive<T>(name: string, fn: () => Promise<T>): Promise<T> {
    const key = `${this.workspaceId}/${name}`;
    const client = await this.backend.sessionClient();
    try {
      const deadline = Date.now() + EXCLUSIVE_WAIT_MS;
      for (;;) {
        let held: boolean;
        try {
          held = (await client.query<{ held: boolean }>('SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS held', [key])).rows[0].held;
        } catch (err) {
          throw unavailable(err);
        }
        if (held) break;
        if (Date.now() > deadline) throw new DomainError('store_unavailable', `exclusive section "${name}": another server has held it for ${EXCLUSIVE_WAIT_MS} ms; retry later`, { retryAfterMs: STORE_RETRY_AFTER_MS });
        await new Promise((r) => setTimeout(r, EXCLUSIVE_POLL_MS));
      }
      // The lock lives as long as this session: one idle past idle_session_timeout would be ended, and the
      // lock with it, while the section still talks to the outside world.
      this.backend.keepSessionAlive(client);
      return await fn();
    } finally {
      // Ending the session releases the lock (no unlock statement to lose on a dying connection).
      (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
      await client.end().catch(noop);
    }
  }

  constructor(private readonly options: PostgresStoreOptions) {
    this.backend = options.backend;
    this.workspaceId = options.workspaceId;
    this.removeSink = this.backend.addRowSink(this.workspaceId, (rows, first, last) => {
      if (rows) for (const r of rows) this.noteRow(r);
      // Announced without its rows (too large to travel): subscriptions read these positions now.
      else this.awaited = this.awaited.filter((r) => r[1] < first || r[0] > last);
    });
    this.s = `"${this.backend.schema}"`;
    const s = this.s;
    // Named statements: prepared once per pooled connection.
    this.q = {
      append: `${s}.append_fused`,
      all: { name: `${s}.all`, text: `SELECT ${COLUMNS} FROM ${s}.events WHERE workspace_id = $1 AND global_position > $2 AND global_position <= $3 ORDER BY global_position LIMIT $4`, rowMode: 'array' },
      forward: { name: `${s}.fwd`, text: `SELECT ${COLUMNS} FROM ${s}.events WHERE workspace_id = $1 AND stream_id = $2 AND stream_revision >= $3 ORDER BY stream_revision LIMIT $4`, rowMode: 'array' },
      backward: { name: `${s}.bwd`, text: `SELECT ${COLUMNS} FROM ${s}.events WHERE workspace_id = $1 AND stream_id = $2 AND stream_revision <= $3 ORDER BY stream_revision DESC LIMIT $4`, rowMode: 'array' },
      byId: { name: `${s}.byid`, text: `SELECT ${COLUMNS} FROM ${s}.events WHERE workspace_id = $1 AND event_id = $2`, rowMode: 'array' },
      revision: { name: `${s}.rev`, text: `SELECT coalesce((SELECT stream_revision FROM ${s}.events WHERE workspace_id = $1 AND stream_id = $2 ORDER BY stream_revision DESC LIMIT 1), -1)`, rowMode: 'array' },
      head: { name: `${s}.head`, text: `SELECT coalesce((SELECT position FROM ${s}.heads WHERE workspace_id = $1), 0)`, rowMode: 'array' },
      chainPage: { name: `${s}.chainpage`, text: `SELECT ${COLUMNS}, encode(hash, 'hex') FROM ${s}.events WHERE workspace_id = $1 AND global_position > $2 ORDER BY global_position LIMIT $3`, rowMode: 'array' },
      chainInfo: {
        name: `${s}.chaininfo`,
        text: `SELECT coalesce(h.chained_from, 0), coalesce(e.global_position, 0), coalesce(encode(e.hash, 'hex'), ''), ${s}.chain_genesis($1) FROM (SELECT 1) one LEFT JOIN ${s}.heads h ON h.workspace_id = $1 LEFT JOIN LATERAL (SELECT global_position, hash FROM ${s}.events WHERE workspace_id = $1 ORDER BY global_position DESC LIMIT 1) e ON true`,
        rowMode: 'array',
      },
      checkpoints: { name: `${s}.cps`, text: `SELECT seq, body FROM ${s}.audit_checkpoints WHERE workspace_id = $1 ORDER BY seq`, rowMode: 'array' },
      claimNoop: { name: `${s}.claimnoop`, text: `SELECT held_by_event, principal, command, digest, json FROM ${s}.claim_noop($1, $2, $3, $4, $5, $6)` },
      findNoop: { name: `${s}.findnoop`, text: `SELECT principal, command, digest, json FROM ${s}.noop_keys WHERE workspace_id = $1 AND key = $2` },
      keyUnused: { name: `${s}.keyunused`, text: `SELECT NOT EXISTS (SELECT 1 FROM ${s}.events WHERE workspace_id = $1 AND event_id = $2) AND NOT EXISTS (SELECT 1 FROM ${s}.noop_keys WHERE workspace_id = $1 AND key = $2)`, rowMode: 'array' },
      // Incremental from the last sum: positions are taken under the head lock and committed in order, so
      // the rows visible past `position` are every row past it (the (workspace, position) primary key).
      logSize: { name: `${s}.logsize`, text: `SELECT coalesce(sum(octet_length(data) + octet_length(metadata)), 0)::float8, coalesce(max(global_position), $2) FROM ${s}.events WHERE workspace_id = $1 AND global_position > $2`, rowMode: 'array' },
      // Rows updated or deleted in the events table since the statistics were last reset (any workspace): appends
      // only insert, so this moves when stored rows were changed. The statistics reach the view within about a
      // second of the changing transaction's end (a session that then idles reports up to 10 s later).
      editMark: { name: `${s}.editmark`, text: `SELECT coalesce((SELECT (n_tup_upd + n_tup_del)::text || '/' || coalesce(extract(epoch from stats_reset)::text, '') FROM pg_stat_user_tables JOIN pg_stat_database ON datname = current_database() WHERE relid = to_regclass('${s}.events')), '')`, rowMode: 'array' },
      addCheckpoint: { name: `${s}.addcp`, text: `INSERT INTO ${s}.audit_checkpoints (workspace_id, seq, body) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, rowMode: 'array' },
    } as const;
  }

  /**
   * The characters of data and metadata the workspace's events hold (what its members wrote: rows, not
   * the table's pages or indexes), for the operator's logQuotaBytes — one member must not fill the database
   * every tenant shares. Not read per command: the sum is taken incrementally in the background (from the
   * position last summed, by the primary key) at most once per LOG_SIZE_FRESH_MS while commands ask, and
   * this process's own appends count as soon as they commit; another server's within a second. Undefined
   * until the first sum of an opened workspace is in (~0.1 s for 200k events; a lost connection keeps the last figure).
   */
  logBytes(): number | undefined {
    if (!this.sizing && !this.closed && (this.size === null || Date.now() - this.size.at >= LOG_SIZE_FRESH_MS)) this.refreshSize();
    return this.size === null ? undefined : this.size.bytes + this.ownSinceChars;
  }

  private refreshSize(): void {
    this.sizing = true;
    const from = this.size?.position ?? 0;
    this.rows(this.q.logSize, [this.workspaceId, from])
      .then((rows) => {
        const [bytes, position] = rows[0] as unknown as [number, string | number];
        const at = Number(position);
        this.size = { position: at, bytes: (this.size?.bytes ?? 0) + Number(bytes), at: Date.now() };
        // Own appends the sum now holds are no longer added on top of it.
        this.ownSinceSize = this.ownSinceSize.filter((x) => x.last > at);
        this.ownSinceChars = this.ownSinceSize.reduce((n, x) => n + x.chars, 0);
      })
      .catch(noop) // unavailable: the last figure stands, the next command's call tries again
      .finally(() => {
        this.sizing = false;
      });
  }

  /** An own append's characters, counted until a sum covers its last position. */
  private noteOwnSize(last: number, chars: number): void {
    if (this.size === null || last <= this.size.position) return; // the first sum will count it, or one did
    this.ownSinceSize.push({ last, chars });
    this.ownSinceChars += chars;
    // Bounded when nobody asks (no member command refreshes the sum): the older half merged into one entry,
    // dropped by the first sum past its last position — until then counted, never lost.
    if (this.ownSinceSize.length > 1024) {
      const old = this.ownSinceSize.splice(0, 512);
      this.ownSinceSize.unshift({ last: old[old.length - 1].last, chars: old.reduce((n, x) => n + x.chars, 0) });
    }
  }

  /** Opens a store on a shared backend, or on its own connection (closed with the store). */
  static async open(options: { workspaceId: string; backend: PostgresBackend } | ({ workspaceId: string } & PostgresBackendOptions)): Promise<PostgresEventStore> {
    if ('backend' in options) return new PostgresEventStore({ backend: options.backend, workspaceId: options.workspaceId });
    const backend = await PostgresBackend.open(options);
    return new PostgresEventStore({ backend, workspaceId: options.workspaceId, ownsBackend: true });
  }

  append(streamId: string, expected: ExpectedRevision, events: NewEvent[], options?: AppendOptions): Promise<AppendResult> {
    if (this.closed) return Promise.reject(new StoreClosed());
    if (events.length === 0) return Promise.reject(new Error('append needs at least one event'));
    // PostgreSQL text cannot hold NUL; JSON.stringify escapes it inside data, but ids are raw strings.
    if (streamId.includes('\u0000') || events.some((e) => e.eventId.includes('\u0000') || e.type.includes('\u0000'))) {
      return Promise.reject(new DomainError('invalid_payload', 'streamId/eventId/type: must not contain NUL characters'));
    }
    let data: string[];
    let metadata: string[];
    try {
      // Encode before queueing: serialization errors belong to this caller, not to the whole batch.
      const encoded = events.map(encodedJsonOf);
      data = encoded.map((j) => j.data);
      metadata = encoded.map((j) => j.metadata);
    } catch (err) {
      return Promise.reject(err);
    }
    return new Promise((resolve, reject) => {
      const guard = options?.guard;
      this.pending.push(guard ? { streamId, expected, events, data, metadata, guard, resolve, reject } : { streamId, expected, events, data, metadata, resolve, reject });
      this.scheduleFlush();
    });
  }

  /**
   * Group commit: one batch in flight per store; appends arriving meanwhile wait for the next batch,
   * so under load each transaction (one round trip, one fsync) carries everything that queued.
   */
  private scheduleFlush(): void {
    if (this.writing || this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    if (this.writing || this.pending.length === 0) return;
    this.writing = true;
    const max = this.options.maxBatch ?? 500;
    const batch = this.pending.slice(0, max);
    this.pending = this.pending.slice(batch.length);
    let commit: CommitNotice | null = null;
    try {
      const all = await this.writeBatch(batch);
      this.backend.noteSuccess();
      // In item order (append_guarded answers a moved guard before the items it passes on).
      const rows = all.filter((row) => row.item >= 0).sort((a, b) => a.item - b.item);
      // What this process now knows without reading, recorded before any caller hears of its append: first
      // the others' appends its own follow (their streams read again), then its own.
      const seen = all.find((row) => row.item === -1);
      if (seen) {
        // Only a range it can place stream by stream (detail: at most SEEN_RANGE_MAX positions past one this
        // process accounted for): not the history before a process's first append, nor a backlog.
        if (seen.detail !== null && seen.last_pos! >= seen.first_pos! && this.backend.hearing) this.awaitRows(seen.first_pos!, seen.last_pos!);
        this.backend.othersAppended(this.workspaceId, seen.first_pos!, seen.last_pos!, seen.detail === null ? null : (JSON.parse(seen.detail) as string[]));
      }
      const ok = rows.map((row, i) => ({ row, req: batch[i] })).filter((x) => x.row.status === 'ok').sort((a, b) => a.row.first_pos! - b.row.first_pos!);
      for (const { row, req } of ok) this.noteOwnAppend(req, row);
      // A refused append (wrong_expected) needs no more: what it was refused for is at or before the
      // `seen` row's end, so its stream was read again or is marked now.
      if (ok.length) {
        const f = ok[0].row.first_pos!;
        const l = ok[ok.length - 1].row.last_pos!;
        // Every row (noticePayloads splits them), up to ANNOUNCED_ROWS_MAX as append_commit does.
        const r: Row[] = [];
        if (l - f < ANNOUNCED_ROWS_MAX) for (let p = f; p <= l; p++) {
          const row = this.recent.get(p);
          if (!row) break;
          r.push(row);
        }
        commit = { w: this.workspaceId, f, l, o: this.backend.origin, s: [...new Set(ok.map((x) => x.req.streamId))], ...(r.length === l - f + 1 ? { r } : {}) };
      }
      rows.forEach((row, i) => {
        const req = batch[i];
        switch (row.status) {
          case 'ok':
            req.resolve({ streamId: req.streamId, nextExpectedRevision: row.next_rev!, firstPosition: row.first_pos!, lastPosition: row.last_pos!, duplicate: false });
            break;
          case 'duplicate':
            req.resolve({ streamId: req.streamId, nextExpectedRevision: row.next_rev!, firstPosition: row.first_pos!, lastPosition: row.last_pos!, duplicate: true });
            break;
          case 'wrong_expected':
            req.reject(new WrongExpectedRevision(req.streamId, req.expected, row.next_rev!));
            break;
          case 'guard_moved':
            req.reject(new GuardMoved(req.guard!.streamId, req.guard!.revision, row.next_rev!));
            break;
          default:
            req.reject(new DuplicateEventId(row.detail ?? req.events[0].eventId));
        }
      });
    } catch (err) {
      // Not acknowledged: the commit may or may not have happened; a retry with the same ids is safe.
      // A connection error is store_unavailable (retryable), anything else is passed on as it is:
      // neither is ever reported as success.
      this.backend.noteFailure(err);
      for (const req of batch) req.reject(unavailable(err));
    } finally {
      this.writing = false;
      if (commit) this.backend.announce(this.workspaceId, commit, this.backend.notifyInCommit);
      if (this.pending.length) this.scheduleFlush();
    }
  }

  private noteOwnAppend(req: PendingAppend, row: BatchRow): void {
    const first = row.first_pos!;
    // As stored (the row a read returns); decoded per reader, so no two readers share one object.
    req.events.forEach((e, i) => this.noteRow([first + i, e.eventId, req.streamId, row.next_rev! - req.events.length + 1 + i, e.type, e.schemaVersion, req.data[i], req.metadata[i]]));
    this.backend.ownAppended(this.workspaceId, first, row.last_pos!);
    let chars = 0;
    for (let i = 0; i < req.data.length; i++) chars += req.data[i].length + req.metadata[i].length;
    this.noteOwnSize(row.last_pos!, chars);
  }

  /**
   * A committed row this process knows without reading: its own append's, or one another process's
   * announcement carried. Kept for subscriptions (by position) and for decisions (per stream, the last
   * rows of consecutive revisions: StoreFreshness.ownTail).
   */
  private noteRow(row: Row): void {
    const stream = row[2];
    const rev = row[3];
    if (rev > (this.knownRevisions.get(stream) ?? -1)) this.knownRevisions.set(stream, rev);
    const chars = rowChars(row);
    if (chars > KEPT_ROW_MAX_CHARS) {
      // Too large to keep (an event may hold 1 MiB): its readers read it. The gap it leaves sends
      // recentPage and ownTail to a read, and its stream's tail starts again after it.
      this.dropTail(stream);
      return;
    }
    const replaced = this.recent.get(row[0]);
    if (replaced) this.recentChars -= rowChars(replaced);
    this.recent.set(row[0], row);
    this.recentChars += chars;
    // Bounded by count and by characters: the subscriptions of a process keep up within a few batches;
    // older rows are read. The oldest go a quarter at a time: the loop here once went on over every key
    // after deleting one (~2,000 steps for every row once full: 4 % of a pg×2 server's CPU, session 44),
    // and deleting one per row would walk the holes the deletes leave at the front of the Map each time.
    if (this.recent.size > RECENT_EVENTS + RECENT_EVENTS / 4 || this.recentChars > RECENT_CHARS) {
      for (const [p, old] of this.recent) {
        this.recent.delete(p);
        this.recentChars -= rowChars(old);
        if (this.recent.size <= RECENT_EVENTS && this.recentChars <= (RECENT_CHARS * 3) / 4) break;
      }
    }
    let tail = this.tails.get(stream);
    if (tail?.length && rev <= tail[tail.length - 1][3]) return;
    if (tail?.length && rev !== tail[tail.length - 1][3] + 1) {
      this.dropTail(stream);
      tail = undefined;
    }
    tail ??= [];
    tail.push(row);
    this.tailChars += chars;
    if (tail.length > TAIL_ROWS) this.tailChars -= rowChars(tail.shift()!);
    // Most recently used last: the first key is the stream whose tail goes first.
    this.tails.delete(stream);
    this.tails.set(stream, tail);
    while (this.tails.size > RECENT_STREAMS || this.tailChars > TAIL_CHARS) this.dropTail(this.tails.keys().next().value!);
  }

  private dropTail(stream: string): void {
    const tail = this.tails.get(stream);
    if (!tail) return;
    for (const r of tail) this.tailChars -= rowChars(r);
    this.tails.delete(stream);
  }

  freshness(): StoreFreshness | undefined {
    if (!this.backend.hearing) return undefined;
    const k = this.backend.knowledge(this.workspaceId);
    return {
      stamp: k.stamp,
      stampOf: (streamId) => this.backend.stampOf(k, streamId),
      ownRevision: (streamId) => this.knownRevisions.get(streamId) ?? -1,
      ownTail: (streamId, fromRevision) => {
        // Every revision from `fromRevision` up to the last known one, or nothing (read).
        const rows = this.tails.get(streamId);
        if (!rows?.length || rows[0][3] > fromRevision || rows[rows.length - 1][3] !== this.knownRevisions.get(streamId)) return undefined;
        return rows.filter((r) => r[3] >= fromRevision).map(fromRow);
      },
    };
  }

  /**
   * A subscription's next page without a round trip when this process can answer it: every event after
   * `after` up to the last position it accounts for, each its own recent append or another server's
   * announced row (with LISTEN up, another server's append is announced). null: read.
   *
   * Positions past that one (another server's commit that this process learned of from its own append's
   * answer or the heads poll, whose announcement is still on its way) are not read: the page stops before
   * them, and the subscription waits. The announcement wakes it, or, if none comes (its sender died
   * between its commit and a NOTIFY sent after it), the heads poll that gives those positions up a whole
   * poll later (headPolled), and then it reads them. With two servers under load such a gap is open most
   * of the time, and reading through it cost every subscription of every server a round trip returning
   * rows it mostly held already (bench:cluster pg×2: ~60 reads/s of the log per server).
   */
  private recentPage(after: number, limit: number): RecordedEvent[] | null {
    if (!this.backend.hearing) return null;
    const k = this.backend.knowledge(this.workspaceId);
    const known = k.accounted;
    if (known < after) return null;
    const page: RecordedEvent[] = [];
    for (let p = after + 1; p <= known && page.length < limit; p++) {
      const r = this.recent.get(p);
      if (!r) return this.rowsOnTheirWay(p) ? page : null;
      page.push(fromRow(r));
    }
    return page;
  }

  /** Positions first..last were appended by other processes: their announcement, rows and all, is on its way. */
  private awaitRows(first: number, last: number): void {
    const now = Date.now();
    // Ranges run out in the order they were added: the expired ones are at the front.
    let expired = 0;
    while (expired < this.awaited.length && this.awaited[expired][2] <= now) expired++;
    if (expired) this.awaited.splice(0, expired);
    let from = first;
    while (from <= last && this.recent.has(from)) from++; // announced already
    if (from > last) return;
    this.awaited.push([from, last, now + (this.options.rowsOnTheirWayMs ?? ROWS_ON_THEIR_WAY_MS)]);
    // Bounded: a subscription that finds nothing here reads, which is always correct.
    if (this.awaited.length > 256) this.awaited.splice(0, this.awaited.length - 256);
  }

  /**
   * Whether a subscription should wait for position `p`'s row instead of reading it: another process's
   * commit learned of from this process's own append, whose announcement has not come yet and may still
   * (ROWS_ON_THEIR_WAY_MS). It wakes the subscription when it comes; a timer does when it has not.
   */
  private rowsOnTheirWay(p: number): boolean {
    const now = Date.now();
    const range = this.awaited.find((r) => r[0] <= p && p <= r[1] && r[2] > now);
    if (!range) return false;
    if (!this.awaitedTimer) {
      this.awaitedTimer = setTimeout(() => {
        this.awaitedTimer = null;
        this.backend.wakeLocal(this.workspaceId);
      }, range[2] - now + 1);
      this.awaitedTimer.unref();
    }
    return true;
  }

  private async writeBatch(batch: PendingAppend[]): Promise<BatchRow[]> {
    const ids: string[] = [];
    const typesCol: string[] = [];
    const versions: number[] = [];
    const data: string[] = [];
    const meta: string[] = [];
    let guarded = false;
    for (const req of batch) {
      if (req.guard) guarded = true;
      req.events.forEach((e, i) => {
        ids.push(e.eventId);
        typesCol.push(e.type);
        versions.push(e.schemaVersion);
        data.push(req.data[i]);
        meta.push(req.metadata[i]);
      });
    }
    const query = {
      name: `${this.s}.append`,
      text: `SELECT item, status, first_pos, last_pos, next_rev, detail FROM ${this.q.append}($1, $2::text[], $3::bigint[], $4::int[], $5::text[], $6::text[], $7::int[], $8::text[], $9::text[], $10::bigint, $11::text, $12::text, $13::text[], $14::bigint[])`,
      values: [
        this.workspaceId,
        batch.map((r) => r.streamId),
        batch.map((r) => encodeExpected(r.expected)),
        batch.map((r) => r.events.length),
        ids,
        typesCol,
        versions,
        data,
        meta,
        this.backend.knowledge(this.workspaceId).accounted,
        this.backend.notifyInCommit && this.backend.othersMayListen ? this.backend.channel : null,
        this.backend.origin,
        guarded ? batch.map((r) => r.guard?.streamId ?? null) : null,
        guarded ? batch.map((r) => r.guard?.revision ?? null) : null,
      ],
    };
    const hook = this.options.beforeCommit;
    if (!hook) {
      // Autocommit: the function is the whole transaction, one round trip.
      return (await this.backend.pool.query<BatchRow>(query)).rows;
    }
    const client = await this.backend.pool.connect();
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      const rows = (await client.query<BatchRow>(query)).rows;
      await hook(client);
      await client.query('COMMIT');
      return rows;
    } catch (err) {
      // A connection that failed or timed out goes back with its error (the pool drops it, see 'release').
      // A read-only refusal too: after a failover this connection still reaches the old primary.
      if (isConnectionError(err) || isReadOnlyError(err)) broken = err as Error;
      else await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release(broken);
    }
  }

  async *readStream(streamId: string, options: ReadStreamOptions = {}): AsyncIterable<RecordedEvent> {
    const backward = options.direction === 'backward';
    let remaining = options.maxCount ?? Number.MAX_SAFE_INTEGER;
    let cursor = options.fromRevision ?? (backward ? Number.MAX_SAFE_INTEGER : 0);
    while (remaining > 0) {
      const limit = Math.min(PAGE, remaining);
      const rows = await this.rows(backward ? this.q.backward : this.q.forward, [this.workspaceId, streamId, cursor, limit]);
      for (const row of rows) yield fromRow(row);
      if (rows.length < limit) return;
      remaining -= rows.length;
      cursor = rows[rows.length - 1][3] + (backward ? -1 : 1);
    }
  }

  /**
   * The events of `types` in (after, until], in log order, narrowed by `where` (an SQL predicate over
   * the events table's columns) when given: what a read model's set-based rebuild folds in JS, the few
   * events its statements cannot project (src/readmodels/stored/bulk.ts).
   */
  async readTypedPage(after: number, until: number, types: readonly string[], where?: string): Promise<RecordedEvent[]> {
    const text = `SELECT ${COLUMNS} FROM ${this.s}.events WHERE workspace_id = $1 AND global_position > $2 AND global_position <= $3 AND type = ANY($4::text[])${where ? ` AND (${where})` : ''} ORDER BY global_position`;
    return (await this.rows({ name: '', text, rowMode: 'array' }, [this.workspaceId, after, until, [...types]])).map(fromRow);
  }

  /** One page of the workspace log in global order: the building block of readAll and subscriptions. */
  async readPage(after: number, limit: number, until = Number.MAX_SAFE_INTEGER): Promise<RecordedEvent[]> {
    return (await this.rows(this.q.all, [this.workspaceId, after, until, limit])).map(fromRow);
  }

  async *readAll(options: ReadAllOptions = {}): AsyncIterable<RecordedEvent> {
    let after = options.after ?? 0;
    let remaining = options.maxCount ?? Number.MAX_SAFE_INTEGER;
    const until = options.until ?? Number.MAX_SAFE_INTEGER;
    while (remaining > 0) {
      const limit = Math.min(PAGE, remaining);
      const page = await this.readPage(after, limit, until);
      for (const e of page) yield e;
      if (page.length < limit) return;
      remaining -= page.length;
      after = page[page.length - 1].globalPosition;
    }
  }

  /**
   * Catch-up then live. An outage does not end the subscription: a read that fails with
   * store_unavailable is retried (backoff up to 1 s) from the subscription's own position, after
   * LISTEN is active again, so it resumes where it was and sees every event committed meanwhile,
   * other servers' included. Other errors end it as before.
   */
  subscribeAll(options: SubscribeOptions = {}): Subscription {
    let ended = false;
    let interrupt: (() => void) | null = null;
    const pause = (ms: number) =>
      new Promise<void>((resolve) => {
        const t = setTimeout(done, ms);
        function done() {
          clearTimeout(t);
          interrupt = null;
          resolve();
        }
        interrupt = done;
      });
    const sub = new LiveSubscription(
      options.after ?? 0,
      async (after, limit) => {
        for (let delay = SUBSCRIPTION_RETRY_MS.first; ; delay = Math.min(delay * 2, SUBSCRIPTION_RETRY_MS.max)) {
          if (ended || this.closed) return [];
          try {
            await this.backend.ensureListening().catch((err) => {
              throw unavailable(err);
            });
            if (this.closed) return [];
            return this.recentPage(after, limit) ?? (await this.readPage(after, limit));
          } catch (err) {
            if (!(err instanceof DomainError && err.code === 'store_unavailable')) throw err;
            await pause(delay);
          }
        }
      },
      (wake) => {
        const l = this.backend.listen(this.workspaceId, wake);
        return () => {
          ended = true;
          (interrupt as (() => void) | null)?.();
          l.unlisten();
          this.subscriptions.delete(sub);
        };
      },
    );
    this.subscriptions.add(sub);
    return sub;
  }

  async claimNoopKey(key: string, record: NoopRecord): Promise<NoopRecord | 'event'> {
    if (this.closed) throw new StoreClosed();
    try {
      const { rows } = await this.backend.pool.query<{ held_by_event: boolean } & NoopRecord>({ ...this.q.claimNoop, values: [this.workspaceId, key, record.principal, record.command, record.digest, record.json] });
      const [row] = rows;
      if (row.held_by_event) return 'event';
      return { principal: row.principal, command: row.command, digest: row.digest, json: row.json };
    } catch (err) {
      throw unavailable(err);
    }
  }

  async findNoopKey(key: string): Promise<NoopRecord | null> {
    if (this.closed) throw new StoreClosed();
    try {
      const { rows } = await this.backend.pool.query<NoopRecord>({ ...this.q.findNoop, values: [this.workspaceId, key] });
      return rows[0] ?? null;
    } catch (err) {
      throw unavailable(err);
    }
  }

  async keyUnused(key: string): Promise<boolean> {
    return (await this.rows(this.q.keyUnused as { name: string; text: string; rowMode: 'array' }, [this.workspaceId, key]))[0][0] as unknown as boolean;
  }

  async findEvent(eventId: string): Promise<RecordedEvent | null> {
    const rows = await this.rows(this.q.byId, [this.workspaceId, eventId]);
    return rows.length ? fromRow(rows[0]) : null;
  }

  async streamRevision(streamId: string): Promise<number> {
    return (await this.rows(this.q.revision, [this.workspaceId, streamId]))[0][0] as unknown as number;
  }

  async headPosition(): Promise<number> {
    return (await this.rows(this.q.head, [this.workspaceId]))[0][0] as unknown as number;
  }

  async readChainPage(after: number, limit: number): Promise<ChainRow[]> {
    const rows = (await this.rows(this.q.chainPage, [this.workspaceId, after, limit])) as unknown as Array<[...Row, string | null, string | null]>;
    return rows.map((r) => ({ position: r[0], eventId: r[1], streamId: r[2], streamRevision: r[3], type: r[4], schemaVersion: r[5], data: r[6], metadata: r[7], hash: r[8] }));
  }

  /** AuditLogStore.editMark (see the statement). */
  async editMark(): Promise<string> {
    const [r] = (await this.rows(this.q.editMark, [])) as unknown as Array<[string]>;
    return r[0];
  }

  /** Read from the rows themselves, not the heads row: verify must see what is stored. */
  async chainInfo(): Promise<ChainInfo> {
    const [r] = (await this.rows(this.q.chainInfo, [this.workspaceId])) as unknown as Array<[number, number, string, string]>;
    return { chainedFrom: r[0], headPosition: r[1], headHash: r[1] === 0 ? r[3] : r[2] };
  }

  async appendCheckpoint(expectedSeq: number, body: string): Promise<boolean> {
    if (this.closed) throw new StoreClosed();
    try {
      return ((await this.backend.pool.query({ ...this.q.addCheckpoint, values: [this.workspaceId, expectedSeq, body] })).rowCount ?? 0) === 1;
    } catch (err) {
      this.backend.noteFailure(err);
      throw unavailable(err);
    }
  }

  async readCheckpoints(): Promise<StoredCheckpoint[]> {
    return ((await this.rows(this.q.checkpoints, [this.workspaceId])) as unknown as Array<[number, string]>).map(([seq, body]) => ({ seq, body }));
  }

  private async rows(q: { name: string; text: string; rowMode: 'array' }, values: unknown[]): Promise<Row[]> {
    if (this.closed) throw new StoreClosed();
    try {
      const rows = (await this.backend.pool.query<Row>({ ...q, values })).rows;
      this.backend.noteSuccess();
      return rows;
    } catch (err) {
      this.backend.noteFailure(err);
      throw unavailable(err);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    // Let queued appends finish: their callers were promised an answer.
    while (this.pending.length || this.writing) {
      if (!this.writing) void this.flush();
      await new Promise((r) => setTimeout(r, 1));
    }
    this.closed = true;
    this.removeSink();
    if (this.awaitedTimer) clearTimeout(this.awaitedTimer);
    for (const sub of [...this.subscriptions]) sub.close();
    if (this.options.ownsBackend) await this.backend.close();
  }
}
