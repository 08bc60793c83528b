/** Helpers of the hostile-input tests (test/rpc/catalogue-fuzz.test.ts, test/webhooks/github.test.ts). */

/**
 * Every key path of a JSON value, parents before their children, down to `maxDepth` keys; `arrays`: walk
 * into arrays too (their indexes as keys).
 */
export function keyPaths(value: unknown, options: { maxDepth?: number; arrays?: boolean } = {}, prefix: string[] = []): string[][] {
  const { maxDepth = Infinity, arrays = false } = options;
  if (!value || typeof value !== 'object' || (Array.isArray(value) && !arrays)) return [];
  return Object.keys(value).flatMap((k) => {
    const p = [...prefix, k];
    return [p, ...(p.length < maxDepth ? keyPaths((value as Record<string, unknown>)[k], options, p) : [])];
  });
}

/** A deep copy of `value` (through JSON) with the key at `path` set to `x`, or removed when `x` is undefined. */
export function withValueAt<T extends object>(value: T, path: string[], x: unknown): T {
  const copy = JSON.parse(JSON.stringify(value));
  let t = copy;
  for (const k of path.slice(0, -1)) t = t[k];
  if (x === undefined) delete t[path[path.length - 1]];
  else t[path[path.length - 1]] = x;
  return copy;
}
