import { DomainError, isDomainError } from '../domain-error';
import { ErrorCode, httpStatusOfCode, INTERNAL_ERROR, INVALID_PARAMS, retryAfterMsOf, rpcCodeOf } from '../errors/codes';

export { PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR } from '../errors/codes';

/**
 * The JSON-RPC error object. `error.code` comes from the code's kind (src/errors/codes.ts, and the
 * table in docs/rpc.md generated from it); the stable machine-readable reason is always
 * `error.data.code` (e.g. `self_confirmation_refused`, `forbidden`, `unknown_workspace`).
 */
export interface RpcErrorObject {
  code: number;
  message: string;
  /** `retryAfterMs`: only for retryable codes (store_unavailable): wait this long, then resend the same request. */
  data?: { code: ErrorCode; details?: Record<string, unknown>; retryAfterMs?: number };
}

/** A JSON-RPC frame error (parse error, invalid request, unknown method): the code is JSON-RPC's. */
export class RpcError extends Error {
  constructor(readonly rpcCode: number, readonly reason: ErrorCode, message: string, readonly details?: Record<string, unknown>) {
    super(message);
  }
}

export function toRpcError(err: unknown): RpcErrorObject {
  if (err instanceof RpcError) return { code: err.rpcCode, message: err.message, data: err.details ? { code: err.reason, details: err.details } : { code: err.reason } };
  if (isDomainError(err)) {
    const data: RpcErrorObject['data'] = err.details ? { code: err.code, details: err.details } : { code: err.code };
    const retry = retryAfterMsOf(err.code);
    if (retry !== undefined) data.retryAfterMs = typeof err.details?.retryAfterMs === 'number' ? err.details.retryAfterMs : retry;
    return { code: rpcCodeOf(err.code), message: err.message, data };
  }
  // zod errors thrown by `.parse` at the edges are the caller's fault.
  if (err && typeof err === 'object' && (err as { name?: string }).name === 'ZodError') {
    const issues = (err as { issues: Array<{ path: PropertyKey[]; message: string }> }).issues;
    return { code: INVALID_PARAMS, message: issues.map((i) => `${i.path.map(String).join('.') || '(payload)'}: ${i.message}`).join('; '), data: { code: 'invalid_payload' } };
  }
  return { code: INTERNAL_ERROR, message: 'internal error', data: { code: 'internal' } };
}

/** HTTP status for transports that need one (SSE, webhooks, MCP over HTTP). */
export function httpStatusOf(err: unknown): number {
  return httpStatusOfCode(isDomainError(err) ? err.code : 'internal');
}

export const tooLarge = (what: string, limit: number): DomainError => new DomainError('payload_too_large', `${what}: exceeds the limit of ${limit}`, { limit });
