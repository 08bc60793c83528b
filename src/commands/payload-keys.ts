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

const fieldsCache = new WeakMap<z.ZodType, Set<string> | null>();

/** The top-level field names a schema accepts, or null when it is not a plain object schema. */
function fieldsOf(schema: z.ZodType): Set<string> | null {
  let fields = fieldsCache.get(schema);
  if (fields === undefined) {
    const shape = (schema as { shape?: Record<string, unknown> }).shape;
    fields = shape && typeof shape === 'object' ? new Set(Object.keys(shape)) : null;
    fieldsCache.set(schema, fields);
  }
  return fields;
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
export function assertKnownFields(schema: z.ZodType, payload: unknown, path = 'params', allowed: ReadonlySet<string> = NONE): void {
  strictParse(schema, payload, path, allowed);
}

const NONE: ReadonlySet<string> = new Set();

/** assertKnownFields' check; returns the strict schema's parse of the payload (undefined for a non-object payload). */
function strictParse(schema: z.ZodType, payload: unknown, path: string, allowed: ReadonlySet<string>): z.ZodSafeParseResult<unknown> | undefined {
  const fields = fieldsOf(schema);
  if (!payload || typeof payload !== 'object' || Array.isArray(payload)) return undefined;
  if (fields) {
    for (const k of Object.keys(payload)) {
      if (!fields.has(k) && !allowed.has(k)) {
        throw new DomainError('unknown_field', `${path}.${k.slice(0, 100)}: not a field of this method (known: ${[...fields].join(', ') || 'none'})`, { field: k.slice(0, 100) });
      }
    }
  }
  let checked: unknown = payload;
  if (allowed.size) checked = Object.fromEntries(Object.entries(payload).filter(([k]) => !allowed.has(k)));
  const r = strictAtEveryDepth(schema).safeParse(checked);
  if (r.success) return r;
  const unknown = firstUnknownKey(r.error.issues as unknown as Issue[]);
  if (!unknown) return r;
  const field = `${showPath(unknown.path).replace(/^\./, '')}${unknown.path.length ? '.' : ''}${unknown.key.slice(0, 100)}`;
  throw new DomainError('unknown_field', `${path}.${field}: not a field here (unknown fields are refused at every depth)`, { field });
}

/**
 * assertKnownFields, then the schema's own parse — one zod pass where the strict copy's answer is the
 * schema's: a payload the strict copy accepts has no unknown key anywhere, so stripping would have
 * removed nothing, and every check, default and transform is the schema's own. Where that does not hold
 * (a union or `catch` around objects: the strict copy may pick another branch or the fallback) and for
 * every refusal, the schema parses again, so answers and errors are exactly the two-pass ones.
 */
export function parseKnownFields<T>(schema: z.ZodType<T>, payload: unknown, path = 'params'): z.ZodSafeParseResult<T> {
  const strict = strictParse(schema, payload, path, NONE);
  if (strict?.success && strictParseIsExact(schema)) return strict as z.ZodSafeParseResult<T>;
  return schema.safeParse(payload);
}

const exactCache = new WeakMap<z.ZodType, boolean>();

/**
 * Whether the strict copy (strictAtEveryDepth) of `schema` returns what `schema` returns for every payload
 * the copy accepts. Objects alone cannot differ (nothing to strip); a union, intersection or `catch` with
 * an object inside can (another branch, the fallback), and `lazy` is not walked: those are not exact.
 */
export function strictParseIsExact(schema: z.ZodType): boolean {
  const hit = exactCache.get(schema);
  if (hit !== undefined) return hit;
  exactCache.set(schema, false); // a cycle (only through lazy, which is not exact anyway) reads false
  const out = exactWalk(schema);
  exactCache.set(schema, out);
  return out;
}

/** The schemas directly inside `schema` whose parse its own answer is made of (the strict copy's walk). */
function innerSchemas(def: Def): z.ZodType[] {
  switch (def.type) {
    case 'object':
      return [...Object.values(def.shape as Record<string, z.ZodType>), ...(def.catchall ? [def.catchall] : [])];
    case 'array':
      return [def.element];
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
    case 'nonoptional':
    case 'readonly':
    case 'catch':
      return [def.innerType];
    case 'record':
      return [def.valueType];
    case 'tuple':
      return [...(def.items as z.ZodType[]), ...(def.rest ? [def.rest] : [])];
    case 'pipe':
      return [def.in];
    case 'union':
      return def.options as z.ZodType[];
    case 'intersection':
      return [def.left, def.right];
    default:
      return [];
  }
}

function exactWalk(schema: z.ZodType): boolean {
  const def = defOf(schema);
  switch (def.type) {
    case 'union':
    case 'intersection':
    case 'catch':
      return !holdsObject(schema, new Set());
    case 'lazy':
      return false;
    default:
      return innerSchemas(def).every(strictParseIsExact);
  }
}

/** Whether an object schema appears anywhere inside (what strictness changes). Unknown shapes count as holding one. */
function holdsObject(schema: z.ZodType, seen: Set<z.ZodType>): boolean {
  if (seen.has(schema)) return true;
  seen.add(schema);
  const def = defOf(schema);
  if (def.type === 'object' || def.type === 'lazy') return true;
  return innerSchemas(def).some((x) => holdsObject(x, seen));
}
