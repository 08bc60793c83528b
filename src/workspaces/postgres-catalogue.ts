import { MessageChannel, MessagePort, Worker, receiveMessageOnPort } from 'node:worker_threads';
import { DomainError } from '../domain-error';
import { migrationLockKey, migrationSteps, SCHEMA_VERSION, schemaOutdated, schemaVersionSql, STORE_RETRY_AFTER_MS } from '../stores/postgres/postgres-event-store';
import type { WorkspaceCatalogue, WorkspaceInfo } from './catalogue';

/**
 * The worker half of the synchronous bridge: one pg connection, one query at a time; it answers on
 * the port and then flips the shared flag the caller is blocked on. On its first successful connect it
 * checks the schema version; behind, it runs the missing steps (under the advisory lock, as PostgresBackend.migrate)
 * only when allowed (`serve`), else refuses with schema_outdated. A reconnect only checks the version.
 */
const WORKER = `
const { workerData } = require('node:worker_threads');
const { Client } = require(workerData.pgPath);
const flag = new Int32Array(workerData.shared);
const port = workerData.port;
const v = workerData.versionSql;
let client = null;
let ready = null;
let checked = false;
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
async function connect() {
  const c = new Client({ connectionString: workerData.connectionString, connectionTimeoutMillis: 5000, keepAlive: true });
  c.on('error', () => { if (client === c) { client = null; ready = null; } });
  try {
    await c.connect();
    const found = await versionOf(c);
    if (found === null || found < workerData.target) {
      if (!workerData.migrate || checked) throw outdated(found);
      // Session lock first, then the transaction: see PostgresBackend.migrate.
      await c.query('SELECT pg_advisory_lock($1)', [workerData.lockKey]);
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
}
port.on('message', async (msg) => {
  let reply;
  try {
    if (msg.close) {
      if (client) await client.end();
      client = null;
      reply = { rows: [] };
    } else {
      ready ??= connect();
      try { await ready; } catch (e) { ready = null; throw e; }
      const r = await client.query(msg.sql, msg.params);
      reply = { rows: r.rows, rowCount: r.rowCount };
    }
  } catch (e) {
    if (client && !client._connected) { client = null; ready = null; }
    reply = e && typeof e === 'object' && 'outdated' in e ? { error: 'schema outdated', outdated: e.outdated } : { error: String(e && e.message || e) };
  }
  port.postMessage(reply);
  Atomics.store(flag, 0, 1);
  Atomics.notify(flag, 0);
});
`;

const TIMEOUT_MS = 10_000;

/**
 * The workspace catalogue in PostgreSQL (`<schema>.workspaces`), shared by every process on the
 * database, so a workspace created through one process is known to all at once.
 *
 * The catalogue API is synchronous (isolation checks must not be a forgettable promise), and `pg` is
 * asynchronous: a worker thread holds the connection and the caller blocks on `Atomics.wait` until it
 * answers. Registered workspaces are never removed, so hits are cached and only a miss (an unknown
 * id), `list` and `register` pay a round trip (~0.2 ms locally) on the caller's thread.
 */
export class PostgresCatalogue implements WorkspaceCatalogue {
  private readonly worker: Worker;
  private readonly port: MessagePort;
  private readonly flag: Int32Array;
  private readonly known = new Map<string, WorkspaceInfo>();
  private readonly table: string;
  private closed = false;

  /**
   * `migrate`: whether the first connect may bring an outdated schema to SCHEMA_VERSION (`serve`, the
   * default for a ledger built in code); false for CLI reads, which refuse with schema_outdated.
   */
  constructor(connectionString: string, private readonly schema = 'review_ledger', migrate = true) {
    this.table = `"${schema}".workspaces`;
    const shared = new SharedArrayBuffer(4);
    this.flag = new Int32Array(shared);
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    this.worker = new Worker(WORKER, {
      eval: true,
      workerData: { port: port2, shared, connectionString, pgPath: require.resolve('pg'), steps: migrationSteps(schema), lockKey: migrationLockKey(schema), versionSql: schemaVersionSql(schema), target: SCHEMA_VERSION, migrate },
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

  private send(msg: unknown): Array<Record<string, unknown>> {
    if (this.closed) throw new DomainError('store_unavailable', 'catalogue: closed');
    Atomics.store(this.flag, 0, 0);
    this.port.postMessage(msg);
    if (Atomics.wait(this.flag, 0, 0, TIMEOUT_MS) === 'timed-out') {
      throw new DomainError('store_unavailable', `catalogue: PostgreSQL did not answer within ${TIMEOUT_MS} ms`, { retryAfterMs: STORE_RETRY_AFTER_MS });
    }
    const reply = receiveMessageOnPort(this.port)?.message as { rows: Array<Record<string, unknown>>; error?: string; outdated?: number | null } | undefined;
    if (!reply) throw new DomainError('store_unavailable', 'catalogue: no reply from the database worker', { retryAfterMs: STORE_RETRY_AFTER_MS });
    if (reply.outdated !== undefined) throw schemaOutdated(this.schema, reply.outdated);
    if (reply.error !== undefined) throw new DomainError('store_unavailable', `catalogue: ${reply.error}`, { retryAfterMs: STORE_RETRY_AFTER_MS });
    return reply.rows;
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
