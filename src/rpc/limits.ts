import { DEFAULT_MAX_RESPONSE_BYTES } from '../config';
import { DomainError } from '../domain-error';

/** Request limits (SPEC §16). One stored event is at most 1 MiB, so no request needs more. */
export const LIMITS = {
  /** Bytes of one HTTP body or WebSocket frame. */
  maxBodyBytes: 1024 * 1024 + 64 * 1024,
  /** Requests in one JSON-RPC batch. */
  maxBatch: 100,
  /** Cost units one batch may spend (see `requestCost`): what a batch may make the server do and send. */
  maxBatchCost: 100,
  /** Characters of any single string anywhere in the params. */
  maxStringLength: 256 * 1024,
  /** Nesting depth of params. */
  maxDepth: 32,
  /** Elements of any array / keys of any object in the params. */
  maxItems: 10_000,
  /** Subscriptions one connection may hold. */
  maxSubscriptionsPerConnection: 256,
  /** Subscriptions one principal may hold in a workspace over all its connections and transports. */
  maxSubscriptionsPerPrincipal: 1024,
  /**
   * Bytes of one response (a JSON-RPC answer or batch, a watch snapshot or update, an MCP tool result)
   * unless the operator sets another (REVIEW_LEDGER_MAX_RESPONSE_BYTES, config.maxResponseBytes): past
   * it the request fails with `response_too_large` instead of the server building the whole JSON text.
   */
  maxResponseBytes: DEFAULT_MAX_RESPONSE_BYTES,
} as const;

export function responseTooLarge(what: string, maxBytes: number, bytes?: number): DomainError {
  return new DomainError('response_too_large', `${what}: the response ${bytes === undefined ? 'would exceed' : `of ${bytes} bytes exceeds`} the limit of ${maxBytes} bytes (REVIEW_LEDGER_MAX_RESPONSE_BYTES); ask for less — a smaller limit, a narrower filter, the next page`, { limit: maxBytes });
}

/**
 * canonicalJson (keys sorted at every level) refusing to build text past `maxBytes`: the walk that sorts
 * the keys also adds up the characters the text will hold (keys, strings, numbers, brackets: a lower
 * bound, short only by escapes), and throws `response_too_large` as soon as that passes the limit —
 * before JSON.stringify runs. The text built is then measured exactly (UTF-8).
 */
export function canonicalJsonWithin(value: unknown, maxBytes: number, what: string, cap = maxBytes): string {
  let budget = maxBytes;
  const spend = (n: number): void => {
    budget -= n;
    if (budget < 0) throw responseTooLarge(what, cap);
  };
  const sortKeys = (v: unknown): unknown => {
    if (typeof v === 'string') {
      spend(v.length + 2);
      return v;
    }
    if (Array.isArray(v)) {
      spend(v.length + 1);
      return v.map(sortKeys);
    }
    if (v && typeof v === 'object' && !(v instanceof Date)) {
      const out: Record<string, unknown> = {};
      for (const key of Object.keys(v as Record<string, unknown>).sort()) {
        const x = (v as Record<string, unknown>)[key];
        if (x === undefined) continue;
        spend(key.length + 4);
        out[key] = sortKeys(x);
      }
      return out;
    }
    // Numbers, booleans and null as written (an escaped string may still come out longer than counted).
    spend(typeof v === 'number' ? String(v).length : v === false ? 5 : 4);
    return v;
  };
  const text = JSON.stringify(sortKeys(value));
  if (text.length * 3 > maxBytes) {
    const bytes = Buffer.byteLength(text);
    if (bytes > maxBytes) throw responseTooLarge(what, cap, bytes);
  }
  return text;
}

/** Refuses text already built (a command's stored response) past `maxBytes` (`cap`: the limit the message names). */
export function assertResponseWithin(text: string, maxBytes: number, what: string, cap = maxBytes): void {
  // Characters ≤ bytes ≤ 3 × characters: measure only when it could be over.
  if (text.length * 3 <= maxBytes) return;
  const bytes = Buffer.byteLength(text);
  if (bytes > maxBytes) throw responseTooLarge(what, cap, bytes);
}

/** Walks the params once and refuses the first string, array, object or nesting past a limit, by path. */
export function assertWithinLimits(value: unknown, path = 'params', depth = 0): void {
  if (depth > LIMITS.maxDepth) throw new DomainError('payload_too_large', `${path}: nested deeper than ${LIMITS.maxDepth} levels`);
  if (typeof value === 'string') {
    if (value.length > LIMITS.maxStringLength) throw new DomainError('string_too_long', `${path}: string of ${value.length} characters exceeds ${LIMITS.maxStringLength}`);
    return;
  }
  if (Array.isArray(value)) {
    if (value.length > LIMITS.maxItems) throw new DomainError('payload_too_large', `${path}: ${value.length} items exceed ${LIMITS.maxItems}`);
    for (let i = 0; i < value.length; i++) assertWithinLimits(value[i], `${path}[${i}]`, depth + 1);
    return;
  }
  if (value && typeof value === 'object') {
    const keys = Object.keys(value);
    if (keys.length > LIMITS.maxItems) throw new DomainError('payload_too_large', `${path}: ${keys.length} keys exceed ${LIMITS.maxItems}`);
    for (const k of keys) {
      if (k.length > 1000) throw new DomainError('string_too_long', `${path}: a key of ${k.length} characters`);
      assertWithinLimits((value as Record<string, unknown>)[k], `${path}.${k}`, depth + 1);
    }
  }
}

/**
 * What one request of a batch costs: `rpc.discover` answers with the whole catalogue (~140 KB), so it
 * costs a whole batch: it is answered alone; any other request counts 1.
 */
export const DISCOVER_COST = 100;
export function requestCost(req: unknown): number {
  return req && typeof req === 'object' && (req as { method?: unknown }).method === 'rpc.discover' ? DISCOVER_COST : 1;
}
