import { DomainError, ErrorStatus, isDomainError } from '../domain-error';

/** JSON-RPC 2.0 reserved codes. */
export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;

/**
 * Domain statuses map onto the implementation-defined server-error range; the stable machine-readable
 * reason is always `error.data.code` (e.g. `self_confirmation`, `forbidden`, `unknown_workspace`).
 */
const CODE_BY_STATUS: Record<ErrorStatus, number> = {
  invalid: INVALID_PARAMS,
  unauthorized: -32001,
  forbidden: -32003,
  not_found: -32004,
  conflict: -32009,
  too_large: -32013,
  unavailable: -32050,
  internal: INTERNAL_ERROR,
};

export interface RpcErrorObject {
  code: number;
  message: string;
  data?: { code: string; details?: Record<string, unknown> };
}

export class RpcError extends Error {
  constructor(readonly rpcCode: number, readonly reason: string, message: string, readonly details?: Record<string, unknown>) {
    super(message);
  }
}

export function toRpcError(err: unknown): RpcErrorObject {
  if (err instanceof RpcError) return { code: err.rpcCode, message: err.message, data: err.details ? { code: err.reason, details: err.details } : { code: err.reason } };
  if (isDomainError(err)) {
    const data: RpcErrorObject['data'] = err.details ? { code: err.code, details: err.details } : { code: err.code };
    return { code: CODE_BY_STATUS[err.status] ?? INTERNAL_ERROR, message: err.message, data };
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
  const status: ErrorStatus = isDomainError(err) ? err.status : 'internal';
  return { invalid: 400, unauthorized: 401, forbidden: 403, not_found: 404, conflict: 409, too_large: 413, unavailable: 503, internal: 500 }[status];
}

export const tooLarge = (what: string, limit: number): DomainError => new DomainError('payload_too_large', `${what}: exceeds the limit of ${limit}`, 'too_large', { limit });
