import { z } from 'zod';
import { DomainError } from '../domain-error';

/**
 * Keys that name JavaScript object machinery rather than data. `JSON.parse` makes `"__proto__"` an own
 * key; any later `obj[k] = v` or `Object.assign` then replaces the target's prototype, so its fields are
 * read through inheritance (a command field supplied invisibly) while own-key walks — digests, limits —
 * never see them. Refused anywhere in a payload, by path.
 */
const RESERVED_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

export function assertNoReservedKeys(value: unknown, path = 'params', depth = 0): void {
  // assertWithinLimits bounds the depth first; this guard only keeps a direct caller safe.
  if (depth > 64 || !value || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) assertNoReservedKeys(value[i], `${path}[${i}]`, depth + 1);
    return;
  }
  for (const k of Object.keys(value)) {
    if (RESERVED_KEYS.has(k)) throw new DomainError('invalid_payload', `${path}.${k}: "${k}" is a reserved key and is not accepted anywhere in a payload`, { field: `${path}.${k}` });
    assertNoReservedKeys((value as Record<string, unknown>)[k], `${path}.${k}`, depth + 1);
  }
}

/** The top-level field names a schema accepts, or null when it is not a plain object schema. */
function fieldsOf(schema: z.ZodType): Set<string> | null {
  const shape = (schema as { shape?: Record<string, unknown> }).shape;
  return shape && typeof shape === 'object' ? new Set(Object.keys(shape)) : null;
}

/**
 * Refuses top-level fields the schema does not define (zod would silently drop them), naming the first.
 * A misspelt optional field (`approveOnShp`) is then an error instead of a silently ignored choice.
 */
export function assertKnownFields(schema: z.ZodType, payload: unknown, path = 'params', allowed: ReadonlySet<string> = new Set()): void {
  const fields = fieldsOf(schema);
  if (!fields || !payload || typeof payload !== 'object' || Array.isArray(payload)) return;
  for (const k of Object.keys(payload)) {
    if (!fields.has(k) && !allowed.has(k)) {
      throw new DomainError('unknown_field', `${path}.${k.slice(0, 100)}: not a field of this method (known: ${[...fields].join(', ') || 'none'})`, { field: k.slice(0, 100) });
    }
  }
}
