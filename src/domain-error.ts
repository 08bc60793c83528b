import { ERROR_CODES, ErrorCode, ErrorStatus } from './errors/codes';

export type { ErrorCode, ErrorStatus } from './errors/codes';

/**
 * Errors are data: every refusal the ledger makes has a stable machine-readable `code` from the
 * registry (src/errors/codes.ts), a message that names the field or rule, and (where safe) the
 * offending value. The code decides the kind (`status`); transports map the kind to their own
 * vocabulary (HTTP 4xx, JSON-RPC error codes); the domain never knows about HTTP.
 */
export class DomainError extends Error {
  readonly status: ErrorStatus;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'DomainError';
    this.status = ERROR_CODES[code].status;
  }

  toJSON(): { code: ErrorCode; message: string; details?: Record<string, unknown> } {
    return this.details ? { code: this.code, message: this.message, details: this.details } : { code: this.code, message: this.message };
  }
}

export const isDomainError = (e: unknown): e is DomainError => e instanceof DomainError;

/** Turns a zod error into one DomainError whose message names every offending field and rule. */
export function validationError(issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string; code?: string }>, prefix = ''): DomainError {
  const parts = issues.map((i) => {
    const path = [prefix, ...i.path.map(String)].filter((p) => p !== '').join('.');
    return `${path || '(payload)'}: ${i.message}`;
  });
  return new DomainError('invalid_payload', parts.join('; '), {
    issues: issues.map((i) => ({ path: [prefix, ...i.path.map(String)].filter((p) => p !== '').join('.'), message: i.message, rule: i.code })),
  });
}
