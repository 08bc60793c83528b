import { randomBytes } from 'node:crypto';
import { Client, Pool, types, type ClientBase, type QueryResultRow } from 'pg';
import { DomainError } from '../../domain-error';
import { DEFAULT_POSTGRES_BOUNDS } from '../../operator-config';
import { isConnectionError, isIdleSessionEnd, isQueryTimeout, isReadOnlyError, STORE_RETRY_AFTER_MS, unavailable } from './connection-errors';
import { ANNOUNCE_PAYLOAD_MAX, migrationLockKey, migrationSteps, SCHEMA_VERSION, schemaOutdated, schemaVersionSql } from './schema';

/**
 * The PostgreSQL backend of the event store (postgres-event-store.ts): what one process shares across all
 * its workspaces on one database — the pool, the schema's migration (schema.ts), the LISTEN connection and
 * what this process knows of each workspace's log without reading it (its own appends and the other
 * processes' announcements) — and the announcements' wire format.
 */

const INT8_OID = 20;
/** Positions and revisions are bigint columns; they stay far below 2^53, so plain numbers are exact. */
const parseTypes = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => (oid === INT8_OID ? Number : types.getTypeParser(oid, format as 'text'))) as typeof types.getTypeParser,
};

const SCHEMA_RE = /^[a-z_][a-z0-9_]{0,40}$/;
/** How often a process checks the heads of the workspaces it watches, in case a NOTIFY was lost. */
const HEADS_POLL_MS = 1000;

/**
 * A process that listens and has heard no other process for this long (no announcement, no hello) is
 * alone on the channel and announces nothing (PostgresBackendOptions.aloneAfterMs). Every listening
 * process says hello when its LISTEN starts and with each heads poll (HEADS_POLL_MS), so while another
 * one listens this never elapses.
 */
const ALONE_AFTER_MS = 5000;

export interface PostgresBackendOptions {
  connectionString: string;
  /** Schema holding the tables (default `review_ledger`); tests use a fresh one per run. */
  schema?: string;
  /** Pool size of this process (default 10). */
  poolSize?: number;
  /**
   * On open: `true` (default) brings the schema to SCHEMA_VERSION under the advisory lock when it is
   * behind (`serve`, `migrate`, tests); `false` only checks the version and refuses with
   * `schema_outdated` (CLI reads). Nothing ever migrates on a reconnect.
   */
  migrate?: boolean;
  /** How long a query waits for a pooled connection before it fails with store_unavailable (default 5000 ms). */
  connectTimeoutMs?: number;
  /**
   * How long one statement may take (default DEFAULT_QUERY_TIMEOUT_MS; `postgres.queryTimeoutMs` in the
   * operator config). PostgreSQL cancels a statement past it (`statement_timeout`: a lock it waits on, a
   * slow disk), and this process gives up on an answer that has not come QUERY_READ_GRACE_MS later (a
   * network partition: the connection stays open and nothing arrives; a TCP retransmission timeout is
   * minutes) and drops that connection. Either way the call fails with the retryable store_unavailable:
   * a command is answered within a bound, never held for as long as the network is away. A COMMIT cut
   * this way may have landed; the kernel's retry with the same key answers as the original did if so.
   * Migrations run on a connection of their own without either bound.
   */
  queryTimeoutMs?: number;
  /**
   * Durability of an acknowledged append (`--synchronous`, as for SQLite). true (default, FULL): every
   * commit waits for its WAL flush, so it survives a PostgreSQL crash or power loss. false (NORMAL):
   * this process's sessions run with `synchronous_commit = off`: a commit returns once its WAL record
   * is written, not flushed. It survives a crash of the ledger process (the database has it), but a
   * PostgreSQL crash or power loss may lose the last commits (up to 3 × wal_writer_delay, 600 ms by
   * default) — never half of one, and never corrupts anything. The heads lock is then held only until
   * the WAL write, which is what bounds appends per workspace at FULL (one fsync per transaction).
   */
  synchronousCommit?: boolean;
  /**
   * How long this process, listening and hearing no other process on the channel, waits before it stops
   * announcing its commits (default ALONE_AFTER_MS; Infinity: always announce). Announcing is what a
   * single server spent most on beyond its appends: bench:cluster pg×1 went from 3,350 to 4,280 commands/s
   * without it. A process that joins says hello at once, so the others announce again within a round trip;
   * anything committed before they heard it reaches the newcomer by its heads poll and its next append.
   */
  aloneAfterMs?: number;
  /** The clock of aloneAfterMs (ms; default Date.now): tests move it instead of waiting. */
  clock?: () => number;
  /** Each pooled connection raises its backend's malloc trim threshold first (RAISE_TRIM_THRESHOLD; default true: off only to measure it). */
  raiseTrimThreshold?: boolean;
}

/** What /health shows of the database connection (`since`: ISO time of the first failure of this outage). */
export interface StoreHealth {
  status: 'ok' | 'degraded';
  reason?: string;
  since?: string;
}

/** PostgresBackendOptions.queryTimeoutMs when none is given (the operator config's default). */
export const DEFAULT_QUERY_TIMEOUT_MS = DEFAULT_POSTGRES_BOUNDS.queryTimeoutMs;
/** Past the server-side statement_timeout, how long the client still waits for PostgreSQL's own cancellation. */
export const QUERY_READ_GRACE_MS = 2000;
/** A heads probe unanswered this long makes health() degraded (before any call times out). */
const PROBE_OVERDUE_MS = 3000;
/** How long a pooled connection may stay idle before the pool closes it (pg-pool's default). */
const POOL_IDLE_MS = 10_000;

/**
 * Run once on each pooled connection: makes its backend allocate and free one block of ~1 MiB. Why: a
 * group commit's transaction takes ~144 KiB more of the backend's heap than it keeps (PL/pgSQL's
 * per-transaction expression state, the answer's tuplestore), just above glibc's default trim threshold
 * (128 KiB), so every commit grew the heap with brk, touched the new pages (page faults) and gave them
 * back at its end (brk again, with a TLB flush on every core): traced on a loaded backend, 3 brk calls
 * and ~36 page faults per transaction, about a quarter of PostgreSQL's CPU per command in a perf profile
 * (issue 35). glibc raises its thresholds when a block it served with mmap is freed (its dynamic mmap
 * threshold: the trim threshold becomes twice the block), so after this one statement the backend keeps
 * up to ~2 MiB free at the top of its heap instead of returning it. Elsewhere (musl, a threshold the
 * operator set with MALLOC_MMAP_THRESHOLD_) it is one cheap statement that changes nothing.
 */
const RAISE_TRIM_THRESHOLD = `SELECT length(repeat('x', ${1100 * 1024}))`;
/** Reconnect delays of the LISTEN connection: doubling from the first, capped (a restart is seconds). */
const LISTEN_RETRY_MS = { first: 100, max: 1000 };
/** A subscription whose read fails with store_unavailable retries after this (doubling up to max). */
export const SUBSCRIPTION_RETRY_MS = { first: 100, max: 1000 };
export const noop = (): void => undefined;
/** How old PostgresEventStore.logBytes's last sum may be before a command's call takes another. */
export const LOG_SIZE_FRESH_MS = 1000;

/**
 * What one process shares across all its workspaces on one PostgreSQL database: the connection pool,
 * the schema (migrated on open) and one LISTEN connection that fans notifications out by workspace.
 *
 * Faults: no connection error reaches the process as an unhandled 'error' (every pooled client gets a
 * listener when it is created, the LISTEN client has one, the timers catch); store calls fail with a
 * retryable `store_unavailable`; the pool reconnects on the next query, the LISTEN connection with
 * backoff, and `health()` says `degraded` from the first failed call or probe until one succeeds.
 */
export class PostgresBackend {
  readonly pool: Pool;
  readonly schema: string;
  readonly channel: string;
  private listener: Client | null = null;
  private listening: Promise<void> | null = null;
  /** When the current LISTEN started (ms), and when another process was last heard on the channel. */
  private listeningSince = 0;
  private otherHeardAt = 0;
  private readonly aloneAfterMs: number;
  private readonly clock: () => number;
  private readonly wakers = new Map<string, Set<() => void>>();
  /** Per workspace, the commits still to announce after the fact (synchronous_commit on), sent in order. */
  private readonly announcing = new Map<string, { queue: CommitNotice[]; sending: boolean }>();
  /** Names this process in its announcements: it skips its own (its append's answer placed them). */
  readonly origin = randomBytes(8).toString('hex');
  /** How this process's origin appears in an announcement (JSON.stringify's, json_build_object's spacing). */
  private readonly ownOriginJson = `"o":"${this.origin}"`;
  private readonly ownOriginSql = `"o" : "${this.origin}"`;
  /** A hello: no workspace ("w" empty; earlier versions' receivers ignore it), only the sender. */
  private readonly helloPayload = JSON.stringify({ w: '', o: this.origin });
  /** Whether append_commit sends the announcement inside the commit (synchronous_commit off: see announce). */
  readonly notifyInCommit: boolean;
  /** Source of stamps: every change of any workspace's knowledge takes the next value. */
  private tick = 0;
  /** Per workspace, this process's stores: they take the rows other processes' announcements carry. */
  /** Per workspace, who hears each announcement of another process: its rows, or null when it came without them. */
  private readonly rowSinks = new Map<string, Set<RowSink>>();
  private readonly seenHeads = new Map<string, number>();
  /**
   * Per workspace, what this process knows of its log without reading it: `accounted`, the position up to
   * which every event is either this process's own append or was announced (so readers holding older
   * state were told to read: `stamp` moved). See PostgresEventStore.freshness.
   */
  private readonly known = new Map<string, Knowledge>();
  private polling = false;
  /** When the heads probe in flight was sent (Date.now(); not this.clock, which tests move): an unanswered probe is how a partition shows first. */
  private pollSentAt = 0;
  /** The last heads probe failed with a connection error (cleared by the next that succeeds). */
  private probeFailed: { message: string; since: number } | null = null;
  /** Set by the poll timer when the probe in flight has gone unanswered for PROBE_OVERDUE_MS. */
  private probeOverdue = false;
  /** When a pooled connection last came back without an error: the database answered someone then. */
  private lastAnswerAt = Date.now();
  private lastPollTickAt = Date.now();
  /**
   * The heads probe's own connection, outside the pool: it measures whether the database answers, not
   * whether the pool has a free connection under load, and it is what finds the database back while
   * the pool's callers are refused.
   */
  private probeClient: Client | null = null;
  private probeConnecting = false;
  readonly queryTimeoutMs: number;
  /** The session settings every connection of this process runs first (the statement bound, commit mode). */
  private readonly sessionSettings: string;
  /**
   * PostgreSQL's `idle_session_timeout` for this role and database, read at open (0: none). A session idle
   * longer is terminated by the server: pooled connections are closed by the pool before that, and the
   * connections that must stay open while idle (LISTEN, an exclusive section's lock) are pinged.
   */
  private idleSessionTimeoutMs = 0;
  private readonly poller: NodeJS.Timeout;
  private closed = false;
  private failure: { since: Date; message: string } | null = null;
  /**
   * PostgreSQL answers but refuses writes (SQLSTATE 25006: a standby, default_transaction_read_only): set
   * by a refused write or by the heads probe, cleared only by a probe that finds the database writable.
   * Not a reason to refuse calls at once (reads are still answered, a write fails in one round trip).
   */
  private readOnly: { since: Date; message: string } | null = null;
  private listenerLost: Date | null = null;
  private relistening = false;
  /** What open() did to the schema (undefined when it only checked the version). */
  migration?: { from: number | null; to: number; ran: boolean };

  private constructor(readonly options: PostgresBackendOptions) {
    this.schema = options.schema ?? 'review_ledger';
    if (!SCHEMA_RE.test(this.schema)) throw new DomainError('invalid_config', `schema: "${this.schema}" must match ${SCHEMA_RE}`);
    // Announcements name their streams (CommitNotice, JSON): a channel of their own, so a process of v2's code
    // (which listens on `_events` for "<workspace> <head>") never misreads one; it hears this version's
    // commits through its heads poll (within a second), and this version hears its through the same poll.
    this.channel = `${this.schema}_commits`;
    this.notifyInCommit = options.synchronousCommit === false;
    this.aloneAfterMs = options.aloneAfterMs ?? ALONE_AFTER_MS;
    this.clock = options.clock ?? Date.now;
    this.queryTimeoutMs = options.queryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS;
    this.sessionSettings = `${this.boundedSettings()}${options.synchronousCommit === false ? '; SET synchronous_commit = off' : ''}${options.raiseTrimThreshold === false ? '' : `; ${RAISE_TRIM_THRESHOLD}`}`;
    this.pool = new Pool({
      connectionString: options.connectionString,
      max: options.poolSize ?? 10,
      idleTimeoutMillis: POOL_IDLE_MS,
      types: parseTypes,
      connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
      keepAlive: true,
      query_timeout: this.queryTimeoutMs + QUERY_READ_GRACE_MS,
      // Run on each new connection before the pool lends it (a failure ends it and fails the borrower). A
      // SET, not the startup packet's `options`: PgBouncer refuses a connection whose startup carries them.
      onConnect: async (client: ClientBase) => void (await client.query(this.sessionSettings)),
    });
    // An idle client losing its connection must not crash the process; the next query reconnects.
    this.pool.on('error', (err) => this.noteFailure(err));
    // A client released with an error leaves the pool (pg-pool ends it). One whose answer never came
    // (pg's query_timeout) would otherwise hold its socket, and the statement's place on it, until TCP gives
    // up minutes later: it is destroyed now, and the failure is recorded for health().
    this.pool.on('release', (err, client) => {
      if (!err) this.lastAnswerAt = Date.now();
      if (!err || !isQueryTimeout(err)) return;
      this.noteFailure(err);
      (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
    });
    // A CHECKED-OUT client (a transaction in progress) has no pool listener: pg emits its socket error
    // on the client as well as failing the query, and an 'error' nobody listens to kills the process.
    // The query's own rejection is what the caller handles; this listener only keeps the process up.
    this.pool.on('connect', (client) => client.on('error', noop));
    // While the heads probe says the database is away (it failed, or has gone unanswered for
    // PROBE_OVERDUE_MS), store calls answer store_unavailable at once instead of each waiting out its own
    // connect or query timeout: behind one stuck append, every command of the workspace would otherwise
    // queue for the length of the partition. The probe has a connection of its own (probe()).
    const poolQuery = this.pool.query.bind(this.pool) as (...args: unknown[]) => Promise<unknown>;
    const poolConnect = this.pool.connect.bind(this.pool) as (...args: unknown[]) => Promise<unknown>;
    const gate = <T>(run: (...args: unknown[]) => Promise<T>) => (...args: unknown[]): Promise<T> => {
      const refusal = this.awayRefusal();
      if (!refusal) return run(...args);
      const callback = args.find((a) => typeof a === 'function') as ((err: Error) => void) | undefined;
      if (callback) {
        queueMicrotask(() => callback(refusal));
        return undefined as unknown as Promise<T>;
      }
      return Promise.reject(refusal);
    };
    (this.pool as unknown as { query: unknown }).query = gate(poolQuery);
    (this.pool as unknown as { connect: unknown }).connect = gate(poolConnect);
    this.poller = setInterval(() => this.pollHeads(), HEADS_POLL_MS).unref();
  }

  static async open(options: PostgresBackendOptions): Promise<PostgresBackend> {
    const backend = new PostgresBackend(options);
    try {
      await backend.checkSessions();
      if (options.migrate === false) await backend.checkSchema();
      else backend.migration = await backend.migrate();
    } catch (err) {
      await backend.close();
      if (err instanceof DomainError) throw err;
      // Only a database that is away (refused, reset, starting up, too many connections) is worth a retry;
      // a wrong password, a missing database or a missing privilege stays wrong until the operator acts.
      if (isConnectionError(err)) throw new DomainError('store_unavailable', `database: cannot open PostgreSQL store (${(err as Error).message})`, { retryAfterMs: STORE_RETRY_AFTER_MS });
      throw new DomainError('store_unavailable', `database: cannot open PostgreSQL store (${(err as Error).message}); not a connection failure: check the database URL, its role and database`);
    }
    return backend;
  }

  /** The schema's recorded version; null when the schema predates versioning or does not exist. */
  async schemaVersion(): Promise<number | null> {
    const sql = schemaVersionSql(this.schema);
    const { rows } = await this.pool.query<{ present: boolean }>(sql.exists);
    if (!rows[0]?.present) return null;
    const r = await this.pool.query<{ version: number }>(sql.read);
    return r.rows[0]?.version ?? null;
  }

  /**
   * A connection of its own, outside the pool, with the pool's statement and answer bounds: for a
   * session-level advisory lock held while its holder talks to the outside world (PostgresEventStore.exclusive),
   * which must neither take a pooled connection from the appends nor outlive its holder's session.
   */
  async sessionClient(): Promise<Client> {
    const refusal = this.awayRefusal();
    if (refusal) throw refusal;
    const client = this.boundedClient();
    client.on('error', noop);
    try {
      await client.connect();
      await client.query(this.boundedSettings());
    } catch (err) {
      await client.end().catch(noop);
      this.noteFailure(err);
      throw unavailable(err);
    }
    return client;
  }

  /** How often a connection that must stay open while idle says something: half the idle-session timeout (0: never). */
  private sessionPingMs(): number {
    return this.idleSessionTimeoutMs > 0 ? Math.max(100, Math.floor(this.idleSessionTimeoutMs / 2)) : 0;
  }

  /**
   * Keeps `client` from being ended by `idle_session_timeout` while it idles on purpose (LISTEN, a held
   * advisory lock): a `SELECT 1` every sessionPingMs until the returned function is called or the client
   * ends. Start it once the client's own statements are done (pings never overlap them or each other).
   */
  keepSessionAlive(client: Client): () => void {
    const every = this.sessionPingMs();
    if (every === 0) return noop;
    let busy = false;
    const timer = setInterval(() => {
      if (busy) return;
      busy = true;
      client.query('SELECT 1').then(
        () => void (busy = false),
        () => void (busy = false),
      );
    }, every).unref();
    const stop = () => clearInterval(timer);
    client.once('end', stop);
    return stop;
  }

  /**
   * What every connection of this process runs first (the pool's adds its commit mode). Settings a
   * database or role may carry that the store's design does not allow for are pinned: the appends
   * serialize on the workspace's head row and wait for it, so `lock_timeout` is off (the statement bound
   * covers a wait); their locking reads rely on READ COMMITTED (under REPEATABLE READ a head row moved by
   * another server's commit fails with "could not serialize access"). Before, a database-level
   * `default_transaction_isolation = 'repeatable read'` or `lock_timeout = '2ms'` made two servers
   * answer 15 % / 4 % of commands `internal`.
   */
  private boundedSettings(): string {
    return `SET statement_timeout = ${this.queryTimeoutMs}; SET lock_timeout = 0; SET default_transaction_isolation = 'read committed'`;
  }

  /**
   * Refuses (invalid_config) a connection string that reaches PostgreSQL through a transaction- or
   * statement-pooling proxy (PgBouncer's pool_mode = transaction / statement, and the like), before
   * anything is migrated: such a proxy hands each statement to whichever server session is free, and this
   * store relies on sessions — named prepared statements, LISTEN, advisory locks held across statements
   * (a migration's, a publication's). Behind one it failed at start with "prepared statement … already
   * exists" (internal), or worse, would have run with locks that lock nothing.
   *
   * How: one client marks its session (a custom setting, session-level), then another client looks for
   * the mark. Behind a direct connection or session pooling the two are different sessions and the mark is
   * never seen; a statement pooler typically gives the second client the session just released (PgBouncer
   * reuses the most recently used one) and the mark shows, or the first client loses its own mark on its
   * next statement. Three rounds, since a busy shared proxy may hand out another session by chance.
   *
   * Also reads `idle_session_timeout` (see idleSessionTimeoutMs; pg_settings gives it in ms).
   */
  private async checkSessions(): Promise<void> {
    // Two connections of their own (a pool of one, as `migrate` opens, could not lend two at once).
    const a = this.boundedClient();
    const b = this.boundedClient();
    a.on('error', noop);
    b.on('error', noop);
    try {
      await a.connect();
      await b.connect();
      for (let round = 0; round < 3; round++) {
        const mark = randomBytes(8).toString('hex');
        await a.query(`SELECT set_config('review_ledger.session_mark', $1, false)`, [mark]);
        const seen = (await b.query<{ v: string | null }>(`SELECT current_setting('review_ledger.session_mark', true) AS v`)).rows[0]?.v;
        const kept = (await a.query<{ v: string | null }>(`SELECT current_setting('review_ledger.session_mark', true) AS v`)).rows[0]?.v;
        if (seen === mark || kept !== mark) {
          throw new DomainError(
            'invalid_config',
            'database: the connection string reaches PostgreSQL through a transaction- or statement-pooling proxy (e.g. PgBouncer pool_mode = transaction): one connection\'s session setting ' +
              (seen === mark ? 'showed in another connection' : 'was gone at its next statement') +
              '. review-ledger needs its own sessions (named prepared statements, LISTEN, advisory locks held across statements): connect directly, or through pool_mode = session (docs/stores.md)',
          );
        }
      }
      const idle = await a.query<{ ms: string }>(`SELECT coalesce((SELECT setting FROM pg_settings WHERE name = 'idle_session_timeout'), '0') AS ms`);
      this.idleSessionTimeoutMs = Number(idle.rows[0]?.ms) || 0;
      const ping = this.sessionPingMs();
      // pg-pool reads this when a client goes idle: an idle connection is closed here before the server ends it.
      if (ping > 0) (this.pool as unknown as { options: { idleTimeoutMillis: number } }).options.idleTimeoutMillis = Math.min(POOL_IDLE_MS, ping);
    } finally {
      await Promise.all([a.end().catch(noop), b.end().catch(noop)]);
    }
  }

  /**
   * A client outside the pool with the pool's settings: int8 as numbers (a head read as a string would
   * compare as text), the statement and answer bounds. Not yet connected.
   */
  private boundedClient(): Client {
    return new Client({
      connectionString: this.options.connectionString,
      types: parseTypes,
      connectionTimeoutMillis: this.options.connectTimeoutMs ?? 5000,
      keepAlive: true,
      query_timeout: this.queryTimeoutMs + QUERY_READ_GRACE_MS,
    });
  }

  /** The workspace catalogue (its table lives in this schema), through the pool: asynchronous, bounded. */
  async listWorkspaces(): Promise<Array<{ workspaceId: string; name: string; createdAt: string }>> {
    try {
      const { rows } = await this.pool.query<{ workspaceId: string; name: string; createdAt: string }>(`SELECT workspace_id AS "workspaceId", name, created_at AS "createdAt" FROM "${this.schema}".workspaces ORDER BY workspace_id`);
      return rows;
    } catch (err) {
      throw unavailable(err);
    }
  }

  /** Refuses (schema_outdated) when the schema is older than this code needs. Takes no lock. */
  async checkSchema(): Promise<number> {
    const v = await this.schemaVersion();
    if (v === null || v < SCHEMA_VERSION) throw schemaOutdated(this.schema, v);
    return v;
  }

  /**
   * Brings the schema to SCHEMA_VERSION; idempotent. A schema already there is only read (no DDL, no
   * lock on any table). Otherwise, under an advisory lock, the version is re-read (processes starting
   * together migrate once) and each missing step runs in its own transaction that records its version:
   * v1 → v2 runs step 2 alone. The lock is taken at session level BEFORE any transaction begins: a
   * transaction that began before another one's migration committed would still see the old catalogue
   * (PostgreSQL accepts catalogue invalidations at transaction start, not after an advisory lock) and
   * run the steps a second time.
   */
  async migrate(): Promise<{ from: number | null; to: number; ran: boolean }> {
    const before = await this.schemaVersion();
    if (before !== null && before >= SCHEMA_VERSION) return { from: before, to: before, ran: false };
    const sql = schemaVersionSql(this.schema);
    const steps = migrationSteps(this.schema);
    // A connection of its own, outside the pool's statement and answer timeouts: a step on a large table
    // (an index over a million events) may take longer than any command should, and the advisory lock
    // may wait for another process's migration.
    const client = new Client({ connectionString: this.options.connectionString, connectionTimeoutMillis: this.options.connectTimeoutMs ?? 5000, keepAlive: true });
    client.on('error', noop);
    await client.connect();
    let locked = false;
    try {
      // Unbounded (a database-level statement_timeout would cut a step on a large table), and the wait for
      // another process's migration is not subject to a database-level lock_timeout (two servers starting
      // together: the second failed to start with "canceling statement due to lock timeout"); the steps'
      // own DDL locks are (RESET: the database's or role's value), so they never queue live writes for long.
      await client.query('SET statement_timeout = 0; SET lock_timeout = 0');
      await client.query('SELECT pg_advisory_lock($1)', [migrationLockKey(this.schema)]);
      await client.query('RESET lock_timeout');
      locked = true;
      const present = (await client.query<{ present: boolean }>(sql.exists)).rows[0]?.present;
      const found = present ? ((await client.query<{ version: number }>(sql.read)).rows[0]?.version ?? null) : null;
      if (found !== null && found >= SCHEMA_VERSION) return { from: found, to: found, ran: false };
      for (let version = (found ?? 0) + 1; version <= SCHEMA_VERSION; version++) {
        try {
          await client.query('BEGIN');
          await client.query(steps[version - 1]);
          if (version === 1) await client.query(sql.create);
          await client.query(sql.write, [version]);
          await client.query('COMMIT');
        } catch (err) {
          await client.query('ROLLBACK').catch(() => undefined);
          throw err;
        }
      }
      return { from: found, to: SCHEMA_VERSION, ran: true };
    } finally {
      // A lost connection releases the lock with its session.
      if (locked) await client.query('SELECT pg_advisory_unlock($1)', [migrationLockKey(this.schema)]).catch(() => undefined);
      await client.end().catch(() => undefined);
    }
  }

  /**
   * Why the database counts as away right now (null: it does not): the last heads probe failed to reach
   * it, or the probe in flight has had no answer for PROBE_OVERDUE_MS (a partition sends no reset).
   */
  unreachable(): string | null {
    return this.away()?.reason ?? null;
  }

  /** The refusal of a call while the database counts as away, or null. */
  private awayRefusal(): DomainError | null {
    const away = this.unreachable();
    return away ? new DomainError('store_unavailable', `database: ${away}; retry later`, { retryAfterMs: STORE_RETRY_AFTER_MS }) : null;
  }

  private away(): { reason: string; since: number } | null {
    if (this.closed) return null;
    // A slow probe alone is not an outage: away only when nothing else has been answered meanwhile either.
    if (this.probeOverdue && this.polling && Date.now() - this.lastAnswerAt >= PROBE_OVERDUE_MS) return { reason: `PostgreSQL has not answered for ${Date.now() - Math.max(this.pollSentAt, this.lastAnswerAt)} ms`, since: Math.max(this.pollSentAt, this.lastAnswerAt) };
    if (this.probeFailed) return { reason: `PostgreSQL unreachable (${this.probeFailed.message})`, since: this.probeFailed.since };
    return null;
  }

  /** `degraded` from the first failed call or probe of an outage until a call or probe succeeds. */
  health(): StoreHealth {
    const away = this.away();
    if (!this.failure && away) return { status: 'degraded', reason: `${away.reason}: calls answer store_unavailable until a probe succeeds`, since: new Date(away.since).toISOString() };
    if (this.failure) return { status: 'degraded', reason: `PostgreSQL unreachable: ${this.failure.message}; calls answer store_unavailable and are retried by clients`, since: this.failure.since.toISOString() };
    if (this.readOnly) return { status: 'degraded', reason: `PostgreSQL refuses writes (read-only: a standby, or default_transaction_read_only is on; ${this.readOnly.message}): commands answer store_unavailable, reads are answered`, since: this.readOnly.since.toISOString() };
    if (this.listenerLost && this.wakers.size > 0) return { status: 'degraded', reason: 'PostgreSQL LISTEN connection lost, reconnecting: live updates from other servers are delayed', since: this.listenerLost.toISOString() };
    return { status: 'ok' };
  }

  /** Records the outcome of a store call for health(). Only connection failures count. */
  noteFailure(err: unknown): void {
    // An idle session ended by the server's idle_session_timeout: the database is there.
    if (isIdleSessionEnd(err)) return;
    if (isReadOnlyError(err)) this.readOnly ??= { since: new Date(), message: (err as Error).message };
    if (!isConnectionError(err) && !(err instanceof DomainError && err.code === 'store_unavailable')) return;
    this.failure ??= { since: new Date(), message: (err as Error).message ?? String(err) };
  }

  noteSuccess(): void {
    this.failure = null;
  }

  /**
   * Registers a wake-up for a workspace's commits. The returned promise resolves once LISTEN is
   * active: a subscription must not do its first catch-up read before that, or a commit landing in
   * between would notify no one.
   */
  listen(workspaceId: string, wake: () => void): { ready: Promise<void>; unlisten: () => void } {
    let set = this.wakers.get(workspaceId);
    if (!set) this.wakers.set(workspaceId, (set = new Set()));
    set.add(wake);
    const ready = this.ensureListening();
    // Awaited by the subscription's first read (which retries); never an unhandled rejection meanwhile.
    ready.catch(noop);
    return {
      ready,
      unlisten: () => {
        set!.delete(wake);
        if (set!.size === 0 && this.wakers.get(workspaceId) === set) this.wakers.delete(workspaceId);
      },
    };
  }

  addRowSink(workspaceId: string, sink: RowSink): () => void {
    let set = this.rowSinks.get(workspaceId);
    if (!set) this.rowSinks.set(workspaceId, (set = new Set()));
    set.add(sink);
    return () => {
      set!.delete(sink);
      if (set!.size === 0 && this.rowSinks.get(workspaceId) === set) this.rowSinks.delete(workspaceId);
    };
  }

  knowledge(workspaceId: string): Knowledge {
    let k = this.known.get(workspaceId);
    if (!k) this.known.set(workspaceId, (k = { stamp: 0, epoch: 0, accounted: -1, placed: [], highest: -1, pollMark: -1, marks: new Map(), unplaced: 0 }));
    return k;
  }

  /** The stamp of one stream (StoreFreshness.stampOf): the later of the workspace's epoch and the stream's mark. */
  stampOf(k: Knowledge, streamId: string): number {
    return Math.max(k.epoch, k.marks.get(streamId) ?? 0);
  }

  /** Something may have been added that this process cannot place: every stream reads again. */
  private bumpAll(k: Knowledge): void {
    k.epoch = k.stamp = ++this.tick;
    k.marks.clear();
    k.unplaced++;
  }

  /** Other processes appended to these streams (and, of what this process accounts for, to no other). */
  private bumpStreams(k: Knowledge, streams: readonly string[]): void {
    if (streams.length === 0) return;
    const t = (k.stamp = ++this.tick);
    for (const s of streams) k.marks.set(s, t);
    if (k.marks.size > MAX_MARKS) this.bumpAll(k);
  }

  /**
   * Positions first..last were appended by others, to `streams` (null: unknown): those streams read again
   * (every stream, without a list). Announcements may arrive before this process's own append's answer
   * for a position below theirs: such a range is kept (placed) until the positions below it are, so
   * `accounted` never passes a position this process cannot place.
   */
  othersAppended(workspaceId: string, first: number, last: number, streams: readonly string[] | null): void {
    const k = this.knowledge(workspaceId);
    if (last <= k.accounted) return;
    if (streams) this.bumpStreams(k, streams);
    else this.bumpAll(k);
    this.place(k, first, last);
  }

  /** This process appended first..last. */
  ownAppended(workspaceId: string, first: number, last: number): void {
    this.place(this.knowledge(workspaceId), first, last);
  }

  private place(k: Knowledge, first: number, last: number): void {
    if (last > k.highest) k.highest = last;
    if (last <= k.accounted) return;
    if (first <= k.accounted + 1) k.accounted = last;
    else k.placed.push([first, last]);
    if (k.placed.length === 0) return;
    k.placed.sort((x, y) => x[0] - y[0]);
    let i = 0;
    for (; i < k.placed.length && k.placed[i][0] <= k.accounted + 1; i++) k.accounted = Math.max(k.accounted, k.placed[i][1]);
    k.placed.splice(0, i);
    if (k.placed.length > MAX_PLACED) this.skipTo(k, k.highest);
  }

  /** Positions up to `position` are given up on: every stream reads again. */
  private skipTo(k: Knowledge, position: number): void {
    this.bumpAll(k);
    if (position > k.accounted) k.accounted = position;
    k.placed = k.placed.filter((r) => r[1] > k.accounted);
    if (k.placed.length) this.place(k, k.placed[0][0], k.placed[0][1]);
  }

  /**
   * The heads poll's head (the safety net for an announcement that never came: its sender died between
   * its commit and a NOTIFY sent after it). A position at or below the previous poll's head that is still
   * not placed a whole poll later will not be: every stream reads again.
   */
  headPolled(workspaceId: string, head: number): boolean {
    const k = this.knowledge(workspaceId);
    if (head > k.highest) k.highest = head;
    const givenUp = k.pollMark > k.accounted;
    if (givenUp) this.skipTo(k, k.pollMark);
    k.pollMark = head;
    return givenUp;
  }

  /** Something may have been added that this process cannot place (a lost channel). */
  unsure(workspaceId?: string): void {
    for (const [id, k] of this.known) if (workspaceId === undefined || id === workspaceId) this.bumpAll(k);
  }

  /** Whether announcements from other processes reach this one now (LISTEN is up). */
  get hearing(): boolean {
    return this.listener !== null && !this.closed;
  }

  /**
   * Whether another process may be listening for this one's announcements. Yes unless this one has
   * listened for aloneAfterMs and heard nobody meanwhile (every listener says hello each heads poll): a
   * process that does not listen cannot know, so it always announces.
   */
  get othersMayListen(): boolean {
    if (!this.hearing) return true;
    const now = this.clock();
    return now - this.listeningSince < this.aloneAfterMs || now - this.otherHeardAt < this.aloneAfterMs;
  }

  /** Tells the other listening processes that this one listens (see othersMayListen). */
  private sayHello(): void {
    if (!this.hearing) return;
    this.pool.query({ name: `${this.schema}.hello`, text: 'SELECT pg_notify($1, $2)', values: [this.channel, this.helloPayload] }).catch(noop);
  }

  /** Wakes this process's subscribers of a workspace at once, without waiting for the NOTIFY echo. */
  wakeLocal(workspaceId: string): void {
    for (const w of this.wakers.get(workspaceId) ?? []) w();
  }

  /**
   * After a commit: wake local subscribers now and, unless append_commit announced it inside the commit,
   * tell the other processes. At synchronous_commit = on the NOTIFY is NOT sent inside the append
   * transaction: PostgreSQL serializes the commits of every notifying transaction in the cluster on one
   * lock, held through the commit's WAL flush — that would make appends to different workspaces queue
   * behind each other's fsync. Sent afterwards as a transaction of its own that writes nothing else, its
   * commit needs no WAL flush (PostgreSQL commits such transactions asynchronously; measured ~0.5 ms here
   * against ~2.5 ms for a flushed commit), so the lock is held briefly. At synchronous_commit = off no
   * commit waits for a flush, so append_commit notifies inside the commit: one round trip, never lost.
   * Sent afterwards, announcements go out one at a time in commit order (a receiver places a commit only
   * right after the one before); a backlog is sent as one notice without streams. If the process dies
   * between the commit and the NOTIFY, the heads poll below wakes the others, and their next append's
   * answer names the streams.
   */
  announce(workspaceId: string, commit: CommitNotice | null, alreadySent: boolean): void {
    this.wakeLocal(workspaceId);
    if (alreadySent || !commit || !this.othersMayListen) return;
    let state = this.announcing.get(workspaceId);
    if (!state) this.announcing.set(workspaceId, (state = { queue: [], sending: false }));
    state.queue.push(commit);
    if (state.queue.length > ANNOUNCE_BACKLOG) {
      const first = Math.min(...state.queue.map((c) => c.f));
      const last = Math.max(...state.queue.map((c) => c.l));
      state.queue = [{ w: workspaceId, f: first, l: last, o: this.origin }];
    }
    if (state.sending) return;
    const st = state;
    st.sending = true;
    const send = (): void => {
      const next = st.queue.shift();
      if (!next || this.closed) {
        st.sending = false;
        if (st.queue.length === 0) this.announcing.delete(workspaceId);
        return;
      }
      // One statement for every chunk of the commit: delivered together, in order (unnest's).
      this.pool
        .query({ name: `${this.schema}.notify_all`, text: 'SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p', values: [this.channel, noticePayloads(next)] })
        .catch(() => undefined)
        .finally(send);
    };
    send();
  }

  /**
   * The safety net for a NOTIFY that never came (its sender died after committing): once a second,
   * one query over the heads of the workspaces this process watches; an advanced head wakes them.
   * It runs with no watched workspace too: it is also the probe that turns health() back to ok (or
   * degraded) on an idle server. Its failure is caught and recorded, never thrown from the timer.
   */
  private pollHeads(): void {
    const now = Date.now();
    // A tick that comes late means this thread was busy: the probe's answer may be unread, not missing.
    const late = now - this.lastPollTickAt > HEADS_POLL_MS + 500;
    this.lastPollTickAt = now;
    if (this.polling && !late && now - this.pollSentAt >= PROBE_OVERDUE_MS && now - this.lastAnswerAt >= PROBE_OVERDUE_MS) this.probeOverdue = true;
    if (this.closed || this.polling) return;
    this.sayHello();
    const ids = [...this.wakers.keys()];
    this.polling = true;
    this.pollSentAt = Date.now();
    // One row at least (the outer side of the join), carrying whether this session's transactions are
    // read-only: that is how a failover to a standby, or a read-only switch, shows on an idle server.
    this.probe<{ workspace_id: string | null; position: number | null; read_only: string }>(
      `SELECT h.workspace_id, h.position, current_setting('transaction_read_only') AS read_only FROM (SELECT 1) one LEFT JOIN "${this.schema}".heads h ON h.workspace_id = ANY($1::text[])`,
      [ids],
    )
      .then(({ rows }) => {
        this.noteSuccess();
        this.probeFailed = null;
        if (rows[0]?.read_only !== 'on') this.readOnly = null;
        else this.readOnly ??= { since: new Date(), message: 'transaction_read_only is on' };
        const heads = new Map(rows.filter((r) => r.workspace_id !== null).map((r) => [r.workspace_id!, r.position!]));
        for (const id of ids) {
          // A workspace with no head row yet has head 0: its first commit must wake too.
          const head = heads.get(id) ?? 0;
          const seen = this.seenHeads.get(id);
          this.seenHeads.set(id, head);
          // Positions given up on wake too: a subscription waits at the first position it cannot place
          // (PostgresEventStore.recentPage), and now reads them.
          const givenUp = this.headPolled(id, head);
          // First sight wakes too (one spare read): the commit may predate this process's first poll.
          if (seen === undefined || head > seen || givenUp) this.wakeLocal(id);
        }
        // A LISTEN connection lost while nobody watched is reconnected when the next subscriber comes.
        if (ids.length > 0 && !this.listener && !this.listening) this.relisten();
      })
      .catch((err) => {
        this.noteFailure(err);
        // The probe's connection ended for idling as the probe was sent: dropped, the next poll reconnects.
        if (isConnectionError(err) && !isIdleSessionEnd(err)) this.probeFailed ??= { message: (err as Error).message, since: Date.now() };
      })
      .finally(() => {
        this.polling = false;
        this.probeOverdue = false;
      });
  }

  /** One query on the probe's connection (connecting first when it has none); a failed connection is dropped. */
  private async probe<T>(text: string, values: unknown[]): Promise<{ rows: T[] }> {
    let client = this.probeClient;
    if (!client) {
      const c = this.boundedClient();
      c.on('error', () => this.dropProbe(c));
      this.probeClient = client = c;
      this.probeConnecting = true;
      try {
        await c.connect();
        await c.query(this.boundedSettings());
      } catch (err) {
        this.dropProbe(c);
        throw err;
      } finally {
        this.probeConnecting = false;
      }
      // Closed while connecting: close() leaves a connecting client alone (destroying its socket then
      // would leave pg's connect unsettled), so it is ended here.
      if (this.closed) {
        this.dropProbe(c);
        throw new Error('closed');
      }
    }
    try {
      return await client.query<T & QueryResultRow>(text, values);
    } catch (err) {
      if (isConnectionError(err)) this.dropProbe(client);
      throw err;
    }
  }

  private dropProbe(c: Client): void {
    if (this.probeClient === c) this.probeClient = null;
    c.removeAllListeners('error');
    c.on('error', noop);
    (c as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
    c.end().catch(noop);
  }

  /** Resolves once LISTEN is active (connecting if needed); rejects when it cannot connect now. */
  ensureListening(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.listening ??= this.connectListener().catch((err) => {
      this.listening = null;
      throw err;
    });
    return this.listening;
  }

  /**
   * Reconnects the LISTEN connection with backoff, then wakes every subscriber of this process:
   * notifications sent while it was away are lost, and the catch-up read every subscription does on
   * wake-up (from its own position) recovers those events, other servers' included.
   */
  private relisten(): void {
    if (this.relistening) return;
    this.relistening = true;
    const retry = (delay: number) =>
      setTimeout(() => {
        if (this.closed || this.wakers.size === 0) {
          this.relistening = false;
          return;
        }
        this.ensureListening().then(
          () => {
            this.relistening = false;
            for (const ws of this.wakers.keys()) this.wakeLocal(ws);
          },
          () => retry(Math.min(delay * 2, LISTEN_RETRY_MS.max)),
        );
      }, delay).unref();
    retry(LISTEN_RETRY_MS.first);
  }

  private async connectListener(): Promise<void> {
    const client = new Client({ connectionString: this.options.connectionString, connectionTimeoutMillis: this.options.connectTimeoutMs ?? 5000, keepAlive: true });
    client.on('notification', (msg) => {
      let n: CommitNotice;
      // Its own announcements come back too (the listener is another session): skipped unparsed. No string
      // value can hold an unescaped quote, so only the top-level key matches (both encoders' spacing).
      const payload = msg.payload ?? '';
      if (payload.includes(this.ownOriginJson) || payload.includes(this.ownOriginSql)) {
        this.wakeLocal(ownWorkspaceOf(payload));
        return;
      }
      // Another process listens (a hello) or appends: this one is not alone (othersMayListen).
      this.otherHeardAt = this.clock();
      if (payload.startsWith('{"w":"",')) return; // a hello (workspace ids are never empty)
      try {
        n = JSON.parse(payload);
      } catch {
        return;
      }
      if (typeof n?.w !== 'string') return;
      // Its own commits this process placed from its append's answer (or will, from the next one's).
      if (n.o !== this.origin) {
        let streams = Array.isArray(n.s) && n.s.every((x) => typeof x === 'string') ? n.s : null;
        if (Number.isSafeInteger(n.f) && Number.isSafeInteger(n.l)) {
          // The commit's rows, when they came (every position f..l, in order): this process's stores of
          // the workspace fold them without reading, so no stream is marked for them.
          const rows = commitRows(n);
          const sinks = this.rowSinks.get(n.w);
          if (rows && sinks?.size) {
            for (const sink of sinks) sink(rows, n.f, n.l);
            streams = [];
          } else if (sinks?.size) for (const sink of sinks) sink(null, n.f, n.l);
          this.othersAppended(n.w, n.f, n.l, streams);
        } else this.unsure(n.w);
      }
      this.wakeLocal(n.w);
    });
    const lost = () => {
      if (this.listener !== client) return;
      this.unsure();
      this.listener = null;
      this.listening = null;
      if (this.closed) return;
      this.listenerLost ??= new Date();
      this.relisten();
    };
    // Both, always: a socket error is emitted as 'error' (unhandled, it would kill the process), a
    // server that closes the connection (pg_terminate_backend, restart) as 'end'.
    client.on('error', lost);
    client.on('end', lost);
    try {
      await client.connect();
      await client.query(`LISTEN "${this.channel}"`);
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.listener = client;
    this.keepSessionAlive(client);
    this.listenerLost = null;
    this.listeningSince = this.clock();
    // Announcements sent while nobody listened are lost: whatever was folded before reads again.
    this.unsure();
    // The others that had stopped announcing (alone) announce again once they hear this.
    this.sayHello();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.poller);
    // A probe's query in flight is cut (it rejects at once); one still connecting ends itself (probe()).
    if (this.probeClient && !this.probeConnecting) this.dropProbe(this.probeClient);
    for (const set of this.wakers.values()) for (const w of set) w();
    this.wakers.clear();
    const l = this.listener;
    this.listener = null;
    await this.listening?.catch(() => undefined);
    await (l ?? this.listener)?.end().catch(() => undefined);
    // The probe needs no wait: it has a connection of its own, not the pool's.
    while (this.announcing.size) await new Promise((r) => setTimeout(r, 1));
    await this.pool.end().catch(() => undefined);
  }
}

/** What a process knows of a workspace's log without reading it (PostgresBackend.knowledge). */
export interface Knowledge {
  /** Changes with every change below: a state folded at this stamp is current for every stream. */
  stamp: number;
  /** Every stream's state folded before this stamp may be behind (a gap, a lost channel). */
  epoch: number;
  /** Every position up to here is this process's own append or placed (its streams known) or under `epoch`. */
  accounted: number;
  /** Ranges above `accounted + 1` already placed (their streams marked), waiting for the positions below. */
  placed: Array<[number, number]>;
  /** The highest position known to exist (own appends, announcements, the heads poll). */
  highest: number;
  /** The head the last heads poll saw. */
  pollMark: number;
  /** Per stream, the stamp of the last placed append of another process to it (bounded: MAX_MARKS). */
  marks: Map<string, number>;
  /** How often every stream had to read again (diagnostics, tests). */
  unplaced: number;
}

/** Hears another process's announced commit of positions first..last: its rows, or null when they did not come with it. */
export type RowSink = (rows: Row[] | null, first: number, last: number) => void;

/**
 * How long a subscription waits for the announcement of another process's commit that it learned of from
 * its own append's answer (the `seen` row) before it reads those positions. The announcement was sent at
 * that commit, before this process's own append could take the head lock, so it normally arrives within
 * milliseconds; it does not come when its sender died between its commit and a NOTIFY sent after it.
 */
export const ROWS_ON_THEIR_WAY_MS = 250;

/** A commit as announced on the channel: workspace, first and last position, origin process, its streams. */
export interface CommitNotice {
  w: string;
  f: number;
  l: number;
  o: string;
  s?: string[];
  /** The commit's rows (every position f..l, as stored), when they fit in the payload. */
  r?: Row[];
}

/** The workspace of an announcement (its first key, "w"), read without parsing the rest. */
function ownWorkspaceOf(payload: string): string {
  const m = /^\{"w"\s*:\s*("(?:[^"\\]|\\.)*")/.exec(payload);
  try {
    return m ? (JSON.parse(m[1]) as string) : '';
  } catch {
    return '';
  }
}

/**
 * A commit's announcement as payloads of at most ANNOUNCE_PAYLOAD_MAX bytes (as schema v6's append_commit
 * sends them): consecutive chunks of its rows, each with its own range and streams; a row too large for a
 * payload of its own goes without rows, and a notice without rows as it is (streams dropped if too long).
 */
export function noticePayloads(n: CommitNotice): string[] {
  const bounded = (c: CommitNotice, text = JSON.stringify(c)): string => {
    if (Buffer.byteLength(text) > ANNOUNCE_PAYLOAD_MAX) text = JSON.stringify({ w: c.w, f: c.f, l: c.l, o: c.o, s: c.s });
    if (Buffer.byteLength(text) > ANNOUNCE_PAYLOAD_MAX) text = JSON.stringify({ w: c.w, f: c.f, l: c.l, o: c.o });
    return text;
  };
  if (!n.r || n.r.length !== n.l - n.f + 1) return [bounded(n)];
  // Each row serialized once: its text both sizes the chunk and goes into the payload, which is
  // JSON.stringify's text of {w, f, l, o, s, r} assembled from those pieces (the same bytes).
  const base = Buffer.byteLength(JSON.stringify({ w: n.w, f: n.l, l: n.l, o: n.o, s: [], r: [] }));
  const out: string[] = [];
  let rows: Row[] = [];
  let texts: string[] = [];
  let streams: string[] = [];
  let size = base;
  const flush = () => {
    const f = rows[0][0];
    const c: CommitNotice = { w: n.w, f, l: f + rows.length - 1, o: n.o, s: streams, r: rows };
    out.push(bounded(c, `{"w":${JSON.stringify(c.w)},"f":${c.f},"l":${c.l},"o":${JSON.stringify(c.o)},"s":${JSON.stringify(streams)},"r":[${texts.join(',')}]}`));
    rows = [];
    texts = [];
    streams = [];
    size = base;
  };
  for (const row of n.r) {
    const text = JSON.stringify(row);
    const rowBytes = Buffer.byteLength(text) + 1;
    const streamBytes = Buffer.byteLength(JSON.stringify(row[2])) + 1;
    // Sized against the chunk it would join; a row that starts a new chunk brings its stream too.
    if (rows.length > 0 && size + rowBytes + (streams.includes(row[2]) ? 0 : streamBytes) > ANNOUNCE_PAYLOAD_MAX) flush();
    if (!streams.includes(row[2])) {
      streams.push(row[2]);
      size += streamBytes;
    }
    rows.push(row);
    texts.push(text);
    size += rowBytes;
  }
  if (rows.length) flush();
  return out;
}

/** The rows of an announced commit, checked: exactly positions f..l in order, each a well-formed row; else null. */
function commitRows(n: CommitNotice): Row[] | null {
  if (!Array.isArray(n.r) || n.r.length !== n.l - n.f + 1) return null;
  for (let i = 0; i < n.r.length; i++) {
    const r = n.r[i] as unknown[];
    if (!Array.isArray(r) || r.length !== 8 || r[0] !== n.f + i || typeof r[1] !== 'string' || typeof r[2] !== 'string' || !Number.isSafeInteger(r[3]) || typeof r[4] !== 'string' || !Number.isSafeInteger(r[5]) || typeof r[6] !== 'string' || typeof r[7] !== 'string') return null;
  }
  return n.r;
}

/** Streams whose marks a workspace's knowledge keeps; past it, every stream reads again once. */
const MAX_MARKS = 50_000;
/** Ranges kept waiting for the positions below them; past it, every stream reads again. */
const MAX_PLACED = 1000;
/** Announcements queued after the fact beyond this are sent as one without streams. */
const ANNOUNCE_BACKLOG = 64;

/** A stored row as read and as announced: position, id, stream, revision, type, schema version, data, metadata. */
export type Row = [number, string, string, number, string, number, string, string];
