import type { Site } from '../context';
import { canonicalJson } from '../context';
import { childLoc, isObject, type Loc } from '../document';
import { defineRule, familyRules, keywordFamily, type Effect } from '../rule';
import { nodeOf, show, type SchemaComparer } from './schema-comparer';

const F = 'schema types and values';

export const TYPE = keywordFamily(F, 'type', 'type', { narrower: 'narrowed', wider: 'widened', changed: 'changed' }, {
  narrower: [{ type: 'number' }, { type: 'integer' }],
  wider: [{ type: 'integer' }, { type: 'number' }],
  changed: [{ type: 'string' }, { type: 'integer' }],
});
export const NULLABLE = keywordFamily(F, 'nullable', 'nullable / type null', { narrower: 'removed', wider: 'added' }, {
  narrower: [{ type: ['string', 'null'] }, { type: 'string' }],
  wider: [{ type: 'string' }, { type: ['string', 'null'] }],
});
export const FORMAT = keywordFamily(F, 'format', 'format', { narrower: 'narrowed', wider: 'widened', changed: 'changed' }, {
  narrower: [{ type: 'integer', format: 'int64' }, { type: 'integer', format: 'int32' }],
  wider: [{ type: 'integer', format: 'int32' }, { type: 'integer', format: 'int64' }],
  changed: [{ type: 'string', format: 'uuid' }, { type: 'string', format: 'email' }],
});
export const ENUM = keywordFamily(F, 'enum', 'enum', { narrower: 'added', wider: 'removed' }, {
  narrower: [{ type: 'string' }, { type: 'string', enum: ['a', 'b'] }],
  wider: [{ type: 'string', enum: ['a', 'b'] }, { type: 'string' }],
});
export const ENUM_VALUE = keywordFamily(F, 'enum-value', 'enum value', { narrower: 'removed', wider: 'added' }, {
  narrower: [{ type: 'string', enum: ['a', 'b'] }, { type: 'string', enum: ['a'] }],
  wider: [{ type: 'string', enum: ['a'] }, { type: 'string', enum: ['a', 'b'] }],
});
export const CONST = keywordFamily(F, 'const', 'const', { narrower: 'added', wider: 'removed', changed: 'changed' }, {
  narrower: [{ type: 'string' }, { type: 'string', const: 'a' }],
  wider: [{ type: 'string', const: 'a' }, { type: 'string' }],
  changed: [{ type: 'string', const: 'a' }, { type: 'string', const: 'b' }],
});

export const CONTENT_ENCODING = keywordFamily(F, 'content-encoding', 'contentEncoding / contentMediaType', { narrower: 'added', wider: 'removed', changed: 'changed' }, {
  narrower: [{ type: 'string' }, { type: 'string', contentEncoding: 'base64' }],
  wider: [{ type: 'string', contentEncoding: 'base64' }, { type: 'string' }],
  changed: [{ type: 'string', contentMediaType: 'image/png' }, { type: 'string', contentMediaType: 'image/jpeg' }],
});

// x-extensible-enum (Zalando guidelines) promises clients that unknown values may appear: adding one
// to a response is therefore not breaking, unlike `enum`.
export const REQUEST_EXTENSIBLE_ENUM_VALUE_REMOVED = defineRule(F, 'request-extensible-enum-value-removed', 'request', 'breaking', 'A value of an `x-extensible-enum` in a request was removed: clients sending it may be refused.', '`{"x-extensible-enum": ["a", "b"]}` → `{"x-extensible-enum": ["a"]}`');
export const REQUEST_EXTENSIBLE_ENUM_VALUE_ADDED = defineRule(F, 'request-extensible-enum-value-added', 'request', 'non-breaking', 'A value was added to an `x-extensible-enum` in a request.', '`{"x-extensible-enum": ["a"]}` → `{"x-extensible-enum": ["a", "b"]}`');
export const RESPONSE_EXTENSIBLE_ENUM_VALUE_ADDED = defineRule(F, 'response-extensible-enum-value-added', 'response', 'non-breaking', 'A value was added to an `x-extensible-enum` in a response: clients were told to expect unknown values.', '`{"x-extensible-enum": ["a"]}` → `{"x-extensible-enum": ["a", "b"]}`');
export const RESPONSE_EXTENSIBLE_ENUM_VALUE_REMOVED = defineRule(F, 'response-extensible-enum-value-removed', 'response', 'non-breaking', 'A value of an `x-extensible-enum` in a response is no longer returned.', '`{"x-extensible-enum": ["a", "b"]}` → `{"x-extensible-enum": ["a"]}`');

export const schemaTypeFamilies = [TYPE, NULLABLE, FORMAT, ENUM, ENUM_VALUE, CONST, CONTENT_ENCODING];
export const schemaTypeRules = [
  ...schemaTypeFamilies.flatMap(familyRules),
  REQUEST_EXTENSIBLE_ENUM_VALUE_REMOVED,
  REQUEST_EXTENSIBLE_ENUM_VALUE_ADDED,
  RESPONSE_EXTENSIBLE_ENUM_VALUE_ADDED,
  RESPONSE_EXTENSIBLE_ENUM_VALUE_REMOVED,
];

interface TypeSet {
  /** null: no `type` keyword (any type). */
  types: Set<string> | null;
  nullable: boolean;
}

const MAX_ALLOF_DEPTH = 8;

/**
 * The types a schema admits. Without its own `type`, an allOf schema admits what all its branches admit
 * (looked up through `$ref`s, a bounded number of levels deep so cycles cannot loop).
 */
function typeSetOf(node: Record<string, unknown>, deref: (loc: Loc) => Loc, at: Loc, depth = 0): TypeSet {
  const t = node.type;
  let types = t === undefined ? null : new Set((Array.isArray(t) ? t : [t]).map(String));
  let nullable = types?.has('null') === true || node.nullable === true || node['x-nullable'] === true;
  types?.delete('null');
  if (t === undefined && Array.isArray(node.allOf) && node.allOf.length > 0 && depth < MAX_ALLOF_DEPTH) {
    const list = childLoc(at, 'allOf');
    let allNullable = true;
    for (let i = 0; i < node.allOf.length; i++) {
      const branch = deref(childLoc(list, i, node.allOf[i]));
      if (!isObject(branch.node)) continue;
      const sub = typeSetOf(branch.node, deref, branch, depth + 1);
      allNullable &&= sub.nullable;
      if (sub.types === null) continue;
      types = types === null ? sub.types : intersect(types, sub.types);
    }
    nullable ||= allNullable;
  }
  // `type: "null"` alone is a null-only schema: no other type, nullable.
  return { types, nullable };
}

function intersect(a: Set<string>, b: Set<string>): Set<string> {
  const out = new Set<string>();
  for (const t of a) if (b.has(t)) out.add(t);
  if (a.has('integer') && b.has('number')) out.add('integer');
  if (b.has('integer') && a.has('number')) out.add('integer');
  return out;
}

/** An integer is a number: {integer} → {number} accepts more, {number} → {integer} accepts less. */
const covered = (t: string, set: Set<string>): boolean => set.has(t) || (t === 'integer' && set.has('number'));

function typeEffect(base: Set<string> | null, head: Set<string> | null): Effect | null {
  if (base === null && head === null) return null;
  if (base === null) return 'narrower';
  if (head === null) return 'wider';
  const headCoversBase = [...base].every((t) => covered(t, head));
  const baseCoversHead = [...head].every((t) => covered(t, base));
  if (headCoversBase && baseCoversHead) return null;
  if (headCoversBase) return 'wider';
  if (baseCoversHead) return 'narrower';
  return 'changed';
}

const showTypes = (s: Set<string> | null) => (s === null ? 'any' : [...s].sort().join('|') || 'none');

/** Format pairs where one accepts every value of the other. */
const FORMAT_WIDENINGS = new Set(['int32>int64', 'float>double', 'int32>double', 'int64>double', 'date>date-time']);

export function checkTypesAndValues(cmp: SchemaComparer, site: Site, b: Loc, h: Loc): void {
  const bn = nodeOf(b);
  const hn = nodeOf(h);
  const bt = typeSetOf(bn, (l) => cmp.ctx.base.deref(l), b);
  const ht = typeSetOf(hn, (l) => cmp.ctx.head.deref(l), h);
  const te = typeEffect(bt.types, ht.types);
  if (te) cmp.emit(TYPE, te, site, b, h, `type changed from ${showTypes(bt.types)} to ${showTypes(ht.types)}`);
  if (bt.nullable !== ht.nullable) cmp.emit(NULLABLE, ht.nullable ? 'wider' : 'narrower', site, b, h, ht.nullable ? 'became nullable' : 'is no longer nullable');

  const bf = typeof bn.format === 'string' ? bn.format : undefined;
  const hf = typeof hn.format === 'string' ? hn.format : undefined;
  if (bf !== hf) {
    const effect: Effect =
      bf === undefined ? 'narrower' : hf === undefined ? 'wider' : FORMAT_WIDENINGS.has(`${bf}>${hf}`) ? 'wider' : FORMAT_WIDENINGS.has(`${hf}>${bf}`) ? 'narrower' : 'changed';
    cmp.emit(FORMAT, effect, site, b, h, `format changed from ${bf ?? 'none'} to ${hf ?? 'none'}`);
  }

  const be = Array.isArray(bn.enum) ? bn.enum : undefined;
  const he = Array.isArray(hn.enum) ? hn.enum : undefined;
  if (be && !he) cmp.emit(ENUM, 'wider', site, b, h, 'enum constraint removed');
  else if (!be && he) cmp.emit(ENUM, 'narrower', site, b, h, `enum constraint added: ${he.map((v) => JSON.stringify(v)).join(', ')}`);
  else if (be && he) {
    const bs = new Set(be.map(canonicalJson));
    const hs = new Set(he.map(canonicalJson));
    for (const v of bs) if (!hs.has(v)) cmp.emit(ENUM_VALUE, 'narrower', site, b, h, `enum value ${v} removed`, v);
    for (const v of hs) if (!bs.has(v)) cmp.emit(ENUM_VALUE, 'wider', site, b, h, `enum value ${v} added`, v);
  }

  const bx = Array.isArray(bn['x-extensible-enum']) ? (bn['x-extensible-enum'] as unknown[]) : undefined;
  const hx = Array.isArray(hn['x-extensible-enum']) ? (hn['x-extensible-enum'] as unknown[]) : undefined;
  if (bx && hx) {
    const bs = new Set(bx.map(canonicalJson));
    const hs = new Set(hx.map(canonicalJson));
    const request = site.direction === 'request';
    for (const v of bs) if (!hs.has(v)) cmp.report(request ? REQUEST_EXTENSIBLE_ENUM_VALUE_REMOVED : RESPONSE_EXTENSIBLE_ENUM_VALUE_REMOVED, site, b, h, `x-extensible-enum value ${v} removed`, v);
    for (const v of hs) if (!bs.has(v)) cmp.report(request ? REQUEST_EXTENSIBLE_ENUM_VALUE_ADDED : RESPONSE_EXTENSIBLE_ENUM_VALUE_ADDED, site, b, h, `x-extensible-enum value ${v} added`, v);
  }
  for (const key of ['contentEncoding', 'contentMediaType']) {
    const bv = typeof bn[key] === 'string' ? (bn[key] as string) : undefined;
    const hv = typeof hn[key] === 'string' ? (hn[key] as string) : undefined;
    if (bv === hv) continue;
    cmp.emit(CONTENT_ENCODING, bv === undefined ? 'narrower' : hv === undefined ? 'wider' : 'changed', site, b, h, `${key} changed from ${bv ?? 'none'} to ${hv ?? 'none'}`, key);
  }
  const hasBc = Object.prototype.hasOwnProperty.call(bn, 'const');
  const hasHc = Object.prototype.hasOwnProperty.call(hn, 'const');
  if (hasBc && !hasHc) cmp.emit(CONST, 'wider', site, b, h, `const ${show(bn.const)} removed`);
  else if (!hasBc && hasHc) cmp.emit(CONST, 'narrower', site, b, h, `const ${show(hn.const)} added`);
  else if (hasBc && hasHc && canonicalJson(bn.const) !== canonicalJson(hn.const)) cmp.emit(CONST, 'changed', site, b, h, `const changed from ${show(bn.const)} to ${show(hn.const)}`);
}
