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
} as const;

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
