/**
 * Errors are data: every refusal the ledger makes has a stable machine-readable `code`, a message that
 * names the field or rule, and (where safe) the offending value. Transports map `status` to their own
 * vocabulary (HTTP 4xx, JSON-RPC error data); the domain never knows about HTTP.
 */
export type ErrorStatus = 'invalid' | 'forbidden' | 'unauthorized' | 'not_found' | 'conflict' | 'too_large' | 'unavailable' | 'internal';

export class DomainError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status: ErrorStatus = 'invalid',
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'DomainError';
  }

  toJSON(): { code: string; message: string; details?: Record<string, unknown> } {
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
  return new DomainError('invalid_payload', parts.join('; '), 'invalid', {
    issues: issues.map((i) => ({ path: [prefix, ...i.path.map(String)].filter((p) => p !== '').join('.'), message: i.message, rule: i.code })),
  });
}
