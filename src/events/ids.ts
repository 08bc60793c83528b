import { v7 as uuidv7 } from 'uuid';
import { DomainError } from '../domain-error';
import { sha256Hex } from './canonical-json';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** A key more than this far in the future is refused: it would outlive every dedupe window. */
export const MAX_KEY_FUTURE_MS = 5 * 60 * 1000;

export const newUuidV7 = (): string => uuidv7();

/** Milliseconds since the epoch encoded in the first 48 bits of a UUIDv7. */
export function uuidV7Time(id: string): number {
  return parseInt(timeHex(id), 16);
}

/** The first 12 characters of `id` without its dashes: in a UUID, the first 8 and, past the dash, the next 4 (no regex per command). */
function timeHex(id: string): string {
  return id.indexOf('-') === 8 && id.indexOf('-', 9) === 13 ? id.slice(0, 8) + id.slice(9, 13) : id.replace(/-/g, '').slice(0, 12);
}

/**
 * Validates a client idempotency key: a UUID whose version nibble is 7, RFC 4122 variant, with a
 * timestamp no more than 5 minutes ahead of the server clock. Throws a DomainError naming the field.
 */
export function assertIdempotencyKey(key: unknown, now: Date, field = 'idempotencyKey'): string {
  if (typeof key !== 'string' || key.length === 0) throw new DomainError('invalid_idempotency_key', `${field}: required, a client-generated UUIDv7`);
  if (!UUID_RE.test(key)) throw new DomainError('invalid_idempotency_key', `${field}: "${key.slice(0, 60)}" is not a UUID`);
  if (key[14] !== '7') throw new DomainError('invalid_idempotency_key', `${field}: must be a UUIDv7 (version nibble 7), got version ${key[14]}`);
  if (!'89abAB'.includes(key[19])) throw new DomainError('invalid_idempotency_key', `${field}: must have the RFC 9562 variant (10xx)`);
  if (uuidV7Time(key) > now.getTime() + MAX_KEY_FUTURE_MS) throw new DomainError('invalid_idempotency_key', `${field}: timestamp is more than 5 minutes in the future`);
  return key.toLowerCase();
}

/**
 * The id of the n-th event (n ≥ 1) produced by one command: deterministic from the key, so a retry
 * produces the same ids. Keeps the key's timestamp and the v7 version/variant bits.
 */
export function deriveEventId(key: string, n: number): string {
  if (n === 0) return key;
  const h = sha256Hex(`${key}/${n}`);
  const hex = timeHex(key) + '7' + h.slice(0, 3) + ((parseInt(h[3], 16) & 0x3) | 0x8).toString(16) + h.slice(4, 19);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}
