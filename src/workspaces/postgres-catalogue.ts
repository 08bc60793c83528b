import { MessageChannel, MessagePort, Worker, receiveMessageOnPort } from 'node:worker_threads';
import { DomainError } from '../domain-error';
import { migrationLockKey, migrationSteps, SCHEMA_VERSION, schemaOutdated, schemaVersionSql } from '../stores/postgres/schema';
import { STORE_RETRY_AFTER_MS } from '../stores/postgres/connection-errors';
import type { WorkspaceCatalogue, WorkspaceInfo } from './catalogue';

/**
 * The worker half of the synchronous bridge: one pg connection, one query at a time; it answers on
 * the port (each reply names its request) and then flips the shared flag the caller is blocked on. On
 * its first successful connect it checks the schema version; behind, it runs the missing steps (under
 * the advisory lock, as PostgresBackend.migrate) only when allowed (`serve`), else refuses with
 * schema_outdated. A reconnect only checks the version.
 *
 * `state` (shared) says whether the caller may ask at all: once the connection is lost, or the caller
 * gave up waiting and asked for a reset, the worker drops its connection, says DOWN and probes every
 * RECONNECT_MS in the background until a fresh connection answers; meanwhile the caller refuses at once
 * instead of blocking its thread on a database that is away.
 */
const WORKER = `
const { workerData } = require('node:worker_threads');
const { Client } = require(workerData.pgPath);
const flag = new Int32Array(workerData.shared);
const UP = 1, DOWN = 2;
const port = workerData.port;
const v = workerData.versionSql;
let client = null;
let ready = null;
let checked = false;
let probing = false;
async function versionOf(c) {
  if (!(await c.query(v.exists)).rows[0].present) return null;
  const r = await c.query(v.read);
  return r.rows.length ? r.rows[0].version : null;
}
function outdated(found) {
  const e = new Error('schema outdated');
  e.outdated = found;
  return e;
}
function drop() {
  const c = client;
  client = null;
  ready = null;
  if (c) { try { c.connection.stream.destroy(); } catch {} c.end().catch(() => undefined); }
}
function down() {
  drop();
  Atomics.store(flag, 1, DOWN);
  if (probing) return;
  probing = true;
  const probe = () => setTimeout(async () => {
    try {
      ready ??= connect();
      await ready;
      await client.query('SELECT 1');
      probing = false;
      Atomics.store(flag, 1, UP);
    } catch {
      drop();
      probe();
    }
  }, workerData.reconnectMs);
  probe();
}
async function connect() {
  const c = new Client({ connectionString: workerData.connectionString, connectionTimeoutMillis: 5000, keepAlive: true });
  c.on('error', (e) => {
    if (client !== c) return;
    // Ended by the server for idling (idle_session_timeout, SQLSTATE 57P05): the database is there, so
    // no DOWN (calls would be refused meanwhile); the next call connects afresh.
    if (e && e.code === '57P05') drop();
    else down();
  });
  try {
    await c.connect();
    const found = await versionOf(c);
    if (found === null || found < workerData.target) {
      if (!workerData.migrate || checked) throw outdated(found);
      // Session lock first, then the transaction: see PostgresBackend.migrate.
      // The wait for another process's migration is not subject to a database-level lock_timeout: see PostgresBackend.migrate.
      await c.query('SET lock_timeout = 0');
      await c.query('SELECT pg_advisory_lock($1)', [workerData.lockKey]);
      await c.query('RESET lock_timeout');
      try {
        // Each missing step in its own transaction, its version recorded: see PostgresBackend.migrate.
        const locked = await versionOf(c);
        for (let version = (locked ?? 0) + 1; version <= workerData.target; version++) {
          try {
            await c.query('BEGIN');
            await c.query(workerData.steps[version - 1]);
            if (version === 1) await c.query(v.create);
            await c.query(v.write, [version]);
            await c.query('COMMIT');
          } catch (e) {
            await c.query('ROLLBACK').catch(() => undefined);
            throw e;
          }
        }
      } finally {
        await c.query('SELECT pg_advisory_unlock($1)', [workerData.lockKey]).catch(() => undefined);
      }
    }
  } catch (e) {
    await c.end().catch(() => undefined);
    throw e;
  }
  checked = true;
  client = c;
  Atomics.store(flag, 1, UP);
}
port.on('message', async (msg) => {
  if (msg.reset) {
    // The caller stopped waiting: whatever this connection is stuck on, it is not worth keeping.
    down();
    return;
  }
  let reply;
  try {
    if (msg.close) {
      probing = true; // no more probes
      const c = client;
      client = null;
      if (c) await c.end();
      reply = { id: msg.id, rows: [] };
    } else {
      ready ??= connect();
      try { await ready; } catch (e) { ready = null; throw e; }
      const r = await client.query(msg.sql, msg.params);
      reply = { id: msg.id, rows: r.rows, rowCount: r.rowCount };
    }
  } catch (e) {
    if (client && !client._connected) down();
    reply = e && typeof e === 'object' && 'outdated' in e ? { id: msg.id, error: 'schema outdated', outdated: e.outdated } : { id: msg.id, error: String(e && e.message || e) };
  }
  port.postMessage(reply);
  Atomics.store(flag, 0, 1);
  Atomics.notify(flag, 0);
});
`;

/** The worker's state in the shared flag's second slot. */
const NEVER_CONNECTED = 0;
const DOWN = 2;
/** How long the first call may take: it connects and may migrate (PostgresBackend.open migrates too). */
const FIRST_TIMEOUT_MS = 30_000;
/**
 * How long a call on a connected catalogue blocks the caller's thread at most: it is a one-row lookup
 * (~0.2 ms), and the whole server waits while it runs.
 */
const CALL_TIMEOUT_MS = 3000;
/** Between the worker's reconnect probes while the database is away. */
const RECONNECT_MS = 500;

/**
 * The workspace catalogue in PostgreSQL (`<schema>.workspaces`), shared by every process on the
 * database, so a workspace created through one process is known to all at once.
 *
 * The catalogue API is synchronous (isolation checks must not be a forgettable promise), and `pg` is
 * asynchronous: a worker thread holds the connection and the caller blocks on `Atomics.wait` until it
 * answers. Registered workspaces are never removed, so hits are cached and only a miss (an unknown
 * id), `list` and `register` pay a round trip (~0.2 ms locally) on the caller's thread.
 *
 * Faults: a call waits at most `timeoutMs` (CALL_TIMEOUT_MS) — the whole server's thread is blocked
 * meanwhile — and then answers store_unavailable and has the worker drop its connection; until
 * the worker's background probe reconnects, calls answer store_unavailable at once. A reply that comes
 * after its caller gave up is recognized by its id and discarded, never taken for the next call's.
 */
export class PostgresCatalogue implements WorkspaceCatalogue {
  private readonly worker: Worker;
  private readonly port: MessagePort;
  private readonly flag: Int32Array;
  private nextId = 1;
  private readonly timeoutMs: number;
  private readonly unreachable: () => string | null;
  private readonly known = new Map<string, WorkspaceInfo>();
  private readonly table: string;
  private closed = false;

  /**
   * `migrate`: whether the first connect may bring an outdated schema to SCHEMA_VERSION (`serve`, the
   * default for a ledger built in code); false for CLI reads, which refuse with schema_outdated.
   */
  constructor(
    connectionString: string,
    private readonly schema = 'review_ledger',
    migrate = true,
    options: {
      /** How long a call waits for the database (default CALL_TIMEOUT_MS). */
      timeoutMs?: number;
      /** Why the store's probe says the database is away (PostgresBackend.unreachable): calls refuse at once. */
      unreachable?: () => string | null;
    } = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? CALL_TIMEOUT_MS;
    this.unreachable = options.unreachable ?? (() => null);
    this.table = `"${schema}".workspaces`;
    // [0]: a reply is waiting; [1]: the worker's connection (NEVER_CONNECTED, UP, DOWN).
    const shared = new SharedArrayBuffer(8);
    this.flag = new Int32Array(shared);
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    this.worker = new Worker(WORKER, {
      eval: true,
      workerData: { port: port2, shared, connectionString, pgPath: require.resolve('pg'), steps: migrationSteps(schema), lockKey: migrationLockKey(schema), versionSql: schemaVersionSql(schema), target: SCHEMA_VERSION, migrate, reconnectMs: RECONNECT_MS },
      transferList: [port2],
    });
    // Neither may keep a finished process alive; close() ends them explicitly.
    this.worker.unref();
    // A worker that dies (it should not: every await is caught) must not take the process with it;
    // the next call times out or finds no reply and answers store_unavailable.
    this.worker.on('error', (err) => process.stderr.write(`review-ledger: catalogue worker failed: ${err.message}\n`));
    this.port.unref();
  }

  private call(sql: string, params: unknown[] = []): Array<Record<string, unknown>> {
    return this.send({ sql, params });
  }

  private send(msg: { sql: string; params: unknown[] } | { close: true }): Array<Record<string, unknown>> {
    if (this.closed) throw new DomainError('store_unavailable', 'catalogue: closed');
    const state = Atomics.load(this.flag, 1);
    const away = 'close' in msg ? null : state === DOWN ? 'PostgreSQL is unreachable, reconnecting' : this.unreachable();
    if (away) throw new DomainError('store_unavailable', `catalogue: ${away}`, { retryAfterMs: STORE_RETRY_AFTER_MS });
    const id = this.nextId++;
    const timeoutMs = state === NEVER_CONNECTED ? Math.max(FIRST_TIMEOUT_MS, this.timeoutMs) : this.timeoutMs;
    const deadline = Date.now() + timeoutMs;
    Atomics.store(this.flag, 0, 0);
    this.port.postMessage({ ...msg, id });
    for (;;) {
      // Flag first, then the port: a reply posted after this drain flips the flag after it was cleared.
      Atomics.store(this.flag, 0, 0);
      let reply: { id: number; rows: Array<Record<string, unknown>>; error?: string; outdated?: number | null } | undefined;
      for (let m = receiveMessageOnPort(this.port); m; m = receiveMessageOnPort(this.port)) {
        // Anything else is a late answer to a call that gave up: it must not become this call's answer.
        if ((m.message as { id?: number }).id === id) reply = m.message as typeof reply;
      }
      if (reply) {
        if (reply.outdated !== undefined) throw schemaOutdated(this.schema, reply.outdated);
        if (reply.error !== undefined) throw new DomainError('store_unavailable', `catalogue: ${reply.error}`, { retryAfterMs: STORE_RETRY_AFTER_MS });
        return reply.rows;
      }
      const left = deadline - Date.now();
      if (left <= 0 || Atomics.wait(this.flag, 0, 0, left) === 'timed-out') {
        // The connection is stuck (a partition, a lock): drop it; calls refuse at once until it is back.
        if (state !== NEVER_CONNECTED) {
          Atomics.store(this.flag, 1, DOWN);
          this.port.postMessage({ reset: true });
        }
        throw new DomainError('store_unavailable', `catalogue: PostgreSQL did not answer within ${timeoutMs} ms`, { retryAfterMs: STORE_RETRY_AFTER_MS });
      }
    }
  }

  get(workspaceId: string): WorkspaceInfo | undefined {
    const hit = this.known.get(workspaceId);
    if (hit) return hit;
    const rows = this.call(`SELECT workspace_id AS "workspaceId", name, created_at AS "createdAt" FROM ${this.table} WHERE workspace_id = $1`, [workspaceId]);
    const info = rows[0] as unknown as WorkspaceInfo | undefined;
    if (info) this.known.set(workspaceId, info);
    return info;
  }

  list(): WorkspaceInfo[] {
    const rows = this.call(`SELECT workspace_id AS "workspaceId", name, created_at AS "createdAt" FROM ${this.table} ORDER BY workspace_id`) as unknown as WorkspaceInfo[];
    for (const w of rows) this.known.set(w.workspaceId, w);
    return rows;
  }

  register(workspaceId: string, name: string, createdAt: string, createdBy?: string): boolean {
    const rows = this.call(`INSERT INTO ${this.table} (workspace_id, name, created_at, created_by) VALUES ($1, $2, $3, $4) ON CONFLICT (workspace_id) DO NOTHING RETURNING workspace_id`, [workspaceId, name, createdAt, createdBy ?? null]);
    return rows.length === 1;
  }

  createdBy(workspaceId: string): string | undefined {
    const rows = this.call(`SELECT created_by AS "createdBy" FROM ${this.table} WHERE workspace_id = $1`, [workspaceId]);
    return (rows[0]?.createdBy as string | null | undefined) ?? undefined;
  }

  countCreatedBy(createdBy: string): number {
    const rows = this.call(`SELECT count(*)::int AS n FROM ${this.table} WHERE created_by = $1`, [createdBy]);
    return Number(rows[0]?.n ?? 0);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    try {
      this.send({ close: true });
    } catch {
      // Closing anyway.
    }
    this.closed = true;
    await this.worker.terminate();
    this.port.close();
  }
}
