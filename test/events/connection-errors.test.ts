import { DomainError } from '../../src/domain-error';
import { isConnectionError, isQueryTimeout, STORE_RETRY_AFTER_MS, unavailable } from '../../src/stores/postgres/connection-errors';
import { toRpcError } from '../../src/rpc/errors';

/** The one classifier of PostgreSQL client errors: which failures mean "the store is away" (retryable). */
describe('connection errors are store_unavailable, refusals are not', () => {
  const pgError = (code: string, message = 'x') => Object.assign(new Error(message), { code });

  test.each([
    ['57P01 admin_shutdown (pg_terminate_backend, a restart)', pgError('57P01', 'terminating connection due to administrator command')],
    ['57P03 cannot_connect_now (starting up)', pgError('57P03', 'the database system is starting up')],
    ['08006 connection_failure', pgError('08006')],
    ['08001 unable to connect', pgError('08001')],
    ['53300 too_many_connections', pgError('53300', 'sorry, too many clients already')],
    ['ECONNRESET', pgError('ECONNRESET', 'read ECONNRESET')],
    ['ECONNREFUSED', pgError('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432')],
    ['EPIPE', pgError('EPIPE', 'write EPIPE')],
    ['ETIMEDOUT', pgError('ETIMEDOUT', 'connect ETIMEDOUT')],
    ['pg: a connection that ended mid-query', new Error('Connection terminated unexpectedly')],
    ['pg: the pool could not connect in time', new Error('timeout exceeded when trying to connect')],
    ['pg: a client that could not connect in time', new Error('timeout expired')],
    ['pg: a client after a socket error', new Error('Client has encountered a connection error and is not queryable')],
    ['pg: no answer within query_timeout (a partition)', new Error('Query read timeout')],
    ['57014 query_canceled (statement_timeout)', pgError('57014', 'canceling statement due to statement timeout')],
  ])('%s', (_name, err) => {
    expect(isConnectionError(err)).toBe(true);
    const mapped = unavailable(err) as DomainError;
    expect(mapped).toBeInstanceOf(DomainError);
    expect({ code: mapped.code, status: mapped.status, details: mapped.details }).toEqual({ code: 'store_unavailable', status: 'unavailable', details: { retryAfterMs: STORE_RETRY_AFTER_MS } });
  });

  test.each([
    ['23505 unique_violation', pgError('23505', 'duplicate key value violates unique constraint')],
    ['42P01 undefined_table', pgError('42P01', 'relation "x" does not exist')],
    ['22P02 invalid_text_representation', pgError('22P02')],
    ['a plain bug', new TypeError('cannot read properties of undefined')],
    // 40P01 deadlock_detected is a transient conflict: store_unavailable (test/scale/database-settings.test.ts).
  ])('%s passes through unchanged', (_name, err) => {
    expect(isConnectionError(err)).toBe(false);
    expect(unavailable(err)).toBe(err);
  });

  test('a call cut by a timeout says its write may have landed and how to find out', () => {
    for (const err of [new Error('Query read timeout'), pgError('57014', 'canceling statement due to statement timeout')]) {
      expect((unavailable(err) as DomainError).message).toMatch(/did not answer in time .*a write in flight may have landed: retry with the same idempotency key/);
    }
    expect(isQueryTimeout(new Error('Query read timeout'))).toBe(true);
    expect(isQueryTimeout(new Error('Connection terminated unexpectedly'))).toBe(false);
  });

  test('our own refusals pass through, even store_unavailable of another origin', () => {
    const refusal = new DomainError('wrong_expected_revision', 'stream moved');
    expect(unavailable(refusal)).toBe(refusal);
  });

  test('the JSON-RPC error of store_unavailable carries retryAfterMs (its own, else the code\'s default); other codes carry none', () => {
    expect(toRpcError(unavailable(pgError('57P01')))).toEqual({
      code: -32050,
      message: 'database: x',
      data: { code: 'store_unavailable', details: { retryAfterMs: STORE_RETRY_AFTER_MS }, retryAfterMs: STORE_RETRY_AFTER_MS },
    });
    expect(toRpcError(new DomainError('store_unavailable', 'store: disk full')).data).toEqual({ code: 'store_unavailable', retryAfterMs: 1000 });
    expect(toRpcError(new DomainError('store_unavailable', 'later', { retryAfterMs: 250 })).data).toMatchObject({ retryAfterMs: 250 });
    expect(toRpcError(new DomainError('wrong_expected_revision', 'moved')).data).toEqual({ code: 'wrong_expected_revision' });
  });
});
