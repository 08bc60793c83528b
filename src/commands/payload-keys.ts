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
    if (RESERVED_KEYS.has(k)) throw new DomainError('invalid_payload', `${path}.${k}: "${k}" is a reserved key and is not accepted anywhere in a payload`, 'invalid', { field: `${path}.${k}` });
    assertNoReservedKeys((value as Record<string, unknown>)[k], `${path}.${k}`, depth + 1);
  }
}

/** The top-level field names a schema accepts, or null when it is not a plain object schema. */
function fieldsOf(schema: z.ZodType): Set<string> | null {
  const shape = (schema as { shape?: Record<string, unknown> }).shape;
  return shape && typeof shape === 'object' ? new Set(Object.keys(shape)) : null;
}

type Def = { type: string; [k: string]: any };
const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;
const cloneWith = (schema: z.ZodType, def: Def): z.ZodType => (schema as unknown as { clone(def: Def): z.ZodType }).clone(def);

const strictCache = new WeakMap<z.ZodType, z.ZodType>();

/**
 * The same schema with every object in it strict (zod strips unknown keys by default, at any depth).
 * Objects that already say what extra keys do (`passthrough`, `catchall`) keep it; the two sides of an
 * intersection are left alone (each would refuse the other's keys). Checks, defaults and transforms are
 * kept: each node is cloned with its own definition.
 */
export function strictAtEveryDepth(schema: z.ZodType): z.ZodType {
  const hit = strictCache.get(schema);
  if (hit) return hit;
  const def = defOf(schema);
  const s = strictAtEveryDepth;
  let out: z.ZodType;
  switch (def.type) {
    case 'object': {
      const next: Def = { ...def, catchall: def.catchall ?? z.never() };
      let shape: Record<string, z.ZodType> | undefined;
      // Lazily, like zod's own shape getter: a schema may refer to itself.
      Object.defineProperty(next, 'shape', { enumerable: true, get: () => (shape ??= Object.fromEntries(Object.entries(def.shape as Record<string, z.ZodType>).map(([k, v]) => [k, s(v)]))) });
      out = cloneWith(schema, next);
      break;
    }
    case 'array':
      out = cloneWith(schema, { ...def, element: s(def.element) });
      break;
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
    case 'nonoptional':
    case 'readonly':
    case 'catch':
      out = cloneWith(schema, { ...def, innerType: s(def.innerType) });
      break;
    case 'union':
      out = cloneWith(schema, { ...def, options: (def.options as z.ZodType[]).map(s) });
      break;
    case 'record':
      out = cloneWith(schema, { ...def, valueType: s(def.valueType) });
      break;
    case 'tuple':
      out = cloneWith(schema, { ...def, items: (def.items as z.ZodType[]).map(s), rest: def.rest ? s(def.rest) : def.rest });
      break;
    case 'pipe':
      // `a.transform(f)` is a pipe into a transform: only what comes in is the caller's.
      out = cloneWith(schema, { ...def, in: s(def.in) });
      break;
    case 'lazy':
      out = z.lazy(() => s(def.getter()));
      break;
    default:
      out = schema;
  }
  strictCache.set(schema, out);
  return out;
}

type Issue = { code: string; path: PropertyKey[]; keys?: string[]; errors?: Issue[][] };

/** The first unknown key among the issues, with its full path; inside a union, of a branch that failed only for unknown keys. */
function firstUnknownKey(issues: readonly Issue[], prefix: PropertyKey[] = []): { path: PropertyKey[]; key: string } | null {
  for (const i of issues) {
    if (i.code === 'unrecognized_keys' && i.keys?.length) return { path: [...prefix, ...i.path], key: i.keys[0] };
  }
  for (const i of issues) {
    if (i.code !== 'invalid_union' || !i.errors) continue;
    for (const branch of i.errors) {
      if (branch.length && branch.every((b) => b.code === 'unrecognized_keys')) return firstUnknownKey(branch, [...prefix, ...i.path]);
    }
  }
  return null;
}

const showPath = (path: PropertyKey[]): string => path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p).slice(0, 100)}`)).join('');

/**
 * Refuses fields the schema does not define — at any depth; zod would silently drop them — naming the
 * first by its full path. A misspelt optional field (`approveOnShp`, `target.prNumbr`) is then an error
 * instead of a silently ignored choice. Other mistakes are left to the schema's own validation.
 */
export function assertKnownFields(schema: z.ZodType, payload: unknown, path = 'params', allowed: ReadonlySet<string> = new Set()): void {
  const fields = fieldsOf(schema);
  if (!payload || typeof payload !== 'object' || Array.isArray(payload)) return;
  if (fields) {
    for (const k of Object.keys(payload)) {
      if (!fields.has(k) && !allowed.has(k)) {
        throw new DomainError('unknown_field', `${path}.${k.slice(0, 100)}: not a field of this method (known: ${[...fields].join(', ') || 'none'})`, 'invalid', { field: k.slice(0, 100) });
      }
    }
  }
  let checked: unknown = payload;
  if (allowed.size) checked = Object.fromEntries(Object.entries(payload).filter(([k]) => !allowed.has(k)));
  const r = strictAtEveryDepth(schema).safeParse(checked);
  if (r.success) return;
  const unknown = firstUnknownKey(r.error.issues as unknown as Issue[]);
  if (!unknown) return;
  const field = `${showPath(unknown.path).replace(/^\./, '')}${unknown.path.length ? '.' : ''}${unknown.key.slice(0, 100)}`;
  throw new DomainError('unknown_field', `${path}.${field}: not a field here (unknown fields are refused at every depth)`, 'invalid', { field });
}
