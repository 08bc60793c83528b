import * as crypto from 'node:crypto';

/**
 * JSON with object keys sorted at every level: the same value always gives the same bytes, so it is
 * what digests (idempotency payload checks, inputsDigest, fingerprints) and projection snapshots use.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === 'object' && !(value instanceof Date)) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value as Record<string, unknown>).sort()) {
      const v = (value as Record<string, unknown>)[key];
      if (v !== undefined) out[key] = sortKeys(v);
    }
    return out;
  }
  return value;
}

/** One-shot crypto.hash (Node ≥ 20.12; the engines field asks ≥ 20.19): cheaper than a Hash object per call. */
const oneShot = (crypto as unknown as { hash(alg: string, data: string | Buffer, enc: 'hex'): string }).hash;
export const sha256Hex = (input: string | Buffer): string => oneShot('sha256', input, 'hex');
export const digestOf = (value: unknown): string => sha256Hex(canonicalJson(value));
