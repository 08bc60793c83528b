import { DomainError } from '../../domain-error';

/**
 * The one converter of PostgreSQL client errors (the store, its catalogue, the read-model tables): a
 * lost or refused connection is the retryable `store_unavailable`. Imports nothing from `pg`, so code
 * that may run on SQLite can use it without loading the driver.
 */

/** What a caller should wait before retrying a request refused with store_unavailable. */
export const STORE_RETRY_AFTER_MS = 1000;

/** Node socket errors that mean the database is away (not a refusal of this request). */
const CONNECTION_ERRNOS = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENETDOWN', 'ECONNABORTED', 'EAI_AGAIN']);
/** pg's own messages for a connection that died, never came, or timed out in the pool. */
const CONNECTION_MESSAGES = /Query read timeout|Connection terminated|timeout exceeded when trying to connect|timeout expired|connection timeout|not queryable|ECONNREFUSED|ECONNRESET|Connection refused|the database system is (starting up|shutting down|in recovery)/i;

/** pg's error for an answer that did not come within its query_timeout (the connection is then dropped). */
export function isQueryTimeout(err: unknown): boolean {
  return err instanceof Error && err.message === 'Query read timeout';
}

/**
 * SQLSTATE 25006 (read_only_sql_transaction): PostgreSQL answers but refuses writes — a standby (after a
 * failover, connections that still reach the old primary), or `default_transaction_read_only` switched on
 * (some hosted services do so when the disk fills). The transaction failed, so nothing was recorded.
 */
export function isReadOnlyError(err: unknown): boolean {
  return !!err && typeof err === 'object' && (err as { code?: unknown }).code === '25006';
}

/** What a caller should wait before retrying after a transient conflict (the other transaction is done by then). */
export const CONFLICT_RETRY_AFTER_MS = 50;

/**
 * SQLSTATE 40001 (serialization_failure), 40P01 (deadlock_detected), 55P03 (lock_not_available): the
 * transaction lost a conflict with a concurrent one and was rolled back. The store's sessions are pinned
 * to READ COMMITTED with no lock_timeout (PostgresBackend.boundedSettings), so these are not expected;
 * should one come anyway it is retryable, not `internal`.
 */
export function isTransientConflict(err: unknown): boolean {
  const code = !!err && typeof err === 'object' ? (err as { code?: unknown }).code : undefined;
  return code === '40001' || code === '40P01' || code === '55P03';
}

/**
 * SQLSTATE 57P05 (idle_session_timeout): the server ended a session that sat idle. The database is there;
 * only that connection is gone (the next query connects afresh), so it is no sign of an outage.
 */
export function isIdleSessionEnd(err: unknown): boolean {
  return !!err && typeof err === 'object' && (err as { code?: unknown }).code === '57P05';
}

/**
 * Whether an error means "the store is away" rather than "this request was refused": SQLSTATE classes
 * 08 (connection exception), 53 (insufficient resources: too many connections, disk full), 57
 * (operator intervention: 57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now,
 * 57014 canceled), socket errors, pg's messages for a terminated connection and the pool's connect
 * timeout. Pure: the classification is unit-tested without a database.
 */
export function isConnectionError(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (/^(08|53|57)[0-9A-Z]{3}$/.test(code) || CONNECTION_ERRNOS.has(code))) return true;
  const message = (err as { message?: unknown }).message;
  return typeof message === 'string' && CONNECTION_MESSAGES.test(message);
}

/**
 * Connection-level failures become a retryable `store_unavailable` (with `retryAfterMs`); our own
 * refusals pass through. For an append this covers a COMMIT whose outcome is unknown (the connection
 * died after the statement was sent): it is reported as unavailable, never as success, and the
 * kernel's idempotent retry (same key, same event ids) answers as the original did if it landed.
 */
export function unavailable(err: unknown): unknown {
  if (err instanceof DomainError) return err;
  if (isQueryTimeout(err) || (err as { code?: unknown }).code === '57014') {
    // Cut by the query timeout (no answer in time) or cancelled by PostgreSQL's statement_timeout: a write
    // in flight may or may not have committed, and the message says how to find out.
    return new DomainError('store_unavailable', `database: PostgreSQL did not answer in time (${(err as Error).message}); a write in flight may have landed: retry with the same idempotency key`, { retryAfterMs: STORE_RETRY_AFTER_MS });
  }
  if (isReadOnlyError(err)) {
    // Not the request's fault and not permanent: the next primary takes writes again.
    return new DomainError('store_unavailable', `database: PostgreSQL refuses writes (read-only: a standby, or default_transaction_read_only is on): nothing was recorded; retry later (${(err as Error).message})`, { retryAfterMs: STORE_RETRY_AFTER_MS });
  }
  if (isTransientConflict(err)) {
    // The transaction was rolled back: nothing was recorded, and the same request may well pass now.
    return new DomainError('store_unavailable', `database: ${(err as Error).message} (a conflict with a concurrent transaction): nothing was recorded; retry`, { retryAfterMs: CONFLICT_RETRY_AFTER_MS });
  }
  if (isConnectionError(err)) return new DomainError('store_unavailable', `database: ${(err as Error).message}`, { retryAfterMs: STORE_RETRY_AFTER_MS });
  return err;
}
