import type { Site } from '../context';
import { childLoc, isObject, type Loc } from '../document';
import { defineRule, familyRules, keywordFamily, type Effect, type KeywordFamily } from '../rule';
import { nodeOf, type SchemaComparer } from './schema-comparer';

const F = 'schema objects and properties';
const O = (extra: Record<string, unknown>) => ({ type: 'object', ...extra });
const P = { id: { type: 'string' }, name: { type: 'string' } };

export const PROPERTY_REQUIRED = keywordFamily(F, 'property', 'required', { narrower: 'became-required', wider: 'became-optional' }, {
  narrower: [O({ properties: P }), O({ properties: P, required: ['name'] })],
  wider: [O({ properties: P, required: ['name'] }), O({ properties: P })],
});
export const ADDITIONAL_PROPERTIES = keywordFamily(F, 'additional-properties', 'additionalProperties', { narrower: 'restricted', wider: 'allowed' }, {
  narrower: [O({ properties: P }), O({ properties: P, additionalProperties: false })],
  wider: [O({ properties: P, additionalProperties: false }), O({ properties: P })],
});
export const UNEVALUATED_PROPERTIES = keywordFamily(F, 'unevaluated-properties', 'unevaluatedProperties', { narrower: 'restricted', wider: 'allowed' }, {
  narrower: [O({ properties: P }), O({ properties: P, unevaluatedProperties: false })],
  wider: [O({ properties: P, unevaluatedProperties: false }), O({ properties: P })],
});
export const DEPENDENT_REQUIRED = keywordFamily(F, 'dependent-required', 'dependentRequired', { narrower: 'added', wider: 'removed' }, {
  narrower: [O({ properties: P }), O({ properties: P, dependentRequired: { id: ['name'] } })],
  wider: [O({ properties: P, dependentRequired: { id: ['name'] } }), O({ properties: P })],
});
export const DEPENDENT_SCHEMAS = keywordFamily(F, 'dependent-schemas', 'dependentSchemas', { narrower: 'added', wider: 'removed' }, {
  narrower: [O({ properties: P }), O({ properties: P, dependentSchemas: { id: { required: ['name'] } } })],
  wider: [O({ properties: P, dependentSchemas: { id: { required: ['name'] } } }), O({ properties: P })],
});

export const REQUEST_PROPERTY_ADDED_REQUIRED = defineRule(F, 'request-property-added-required', 'request', 'breaking', 'A new required property in a request: existing clients do not send it.', '`{"properties": {"id": …}}` → `{"properties": {"id": …, "name": …}, "required": ["name"]}`');
export const REQUEST_PROPERTY_ADDED = defineRule(F, 'request-property-added', 'request', 'non-breaking', 'A new optional property in a request.', '`{"properties": {"id": …}}` → `{"properties": {"id": …, "name": …}}`');
export const REQUEST_PROPERTY_REMOVED = defineRule(F, 'request-property-removed', 'request', 'warning', 'A request property is no longer documented: the object still admits unknown properties, so a client sending it is not refused by the schema, but the server may now ignore or refuse it (oasdiff: WARN).', '`{"properties": {"id": …, "name": …}}` → `{"properties": {"id": …}}`');
export const REQUEST_PROPERTY_REMOVED_CLOSED = defineRule(F, 'request-property-removed-closed-object', 'request', 'breaking', 'A request property was removed from an object that refuses unknown properties: clients sending it are refused.', '`{"properties": {"id", "name"}}` → `{"properties": {"id"}, "additionalProperties": false}`');
export const RESPONSE_PROPERTY_ADDED = defineRule(F, 'response-property-added', 'response', 'non-breaking', 'A new property in a response.', '`{"properties": {"id": …}}` → `{"properties": {"id": …, "name": …}}`');
export const RESPONSE_PROPERTY_REMOVED = defineRule(F, 'response-property-removed', 'response', 'breaking', 'A response property was removed: clients reading it break.', '`{"properties": {"id": …, "name": …}}` → `{"properties": {"id": …}}`');
export const REQUEST_PROPERTY_BECAME_READ_ONLY = defineRule(F, 'request-property-became-read-only', 'request', 'non-breaking', 'A request property became readOnly: clients should stop sending it, and a server ignores what they still send (oasdiff: INFO).', '`{"name": {"type": "string"}}` → `{"name": {"type": "string", "readOnly": true}}`');
export const REQUEST_PROPERTY_READ_ONLY_REMOVED = defineRule(F, 'request-property-read-only-removed', 'request', 'non-breaking', 'A readOnly property became writable in requests.', '`{"readOnly": true}` → `{}`');
export const RESPONSE_PROPERTY_BECAME_WRITE_ONLY = defineRule(F, 'response-property-became-write-only', 'response', 'breaking', 'A response property became writeOnly: the server stops returning it.', '`{"name": {"type": "string"}}` → `{"name": {"type": "string", "writeOnly": true}}`');
export const RESPONSE_PROPERTY_WRITE_ONLY_REMOVED = defineRule(F, 'response-property-write-only-removed', 'response', 'non-breaking', 'A writeOnly property is now returned in responses.', '`{"writeOnly": true}` → `{}`');
export const PROPERTY_DEPRECATED = defineRule(F, 'property-deprecated', 'none', 'info', 'A property was marked deprecated.', '`{"name": {}}` → `{"name": {"deprecated": true}}`');

export const PATTERN_PROPERTIES = keywordFamily(F, 'pattern-properties', 'patternProperties', { narrower: 'added', wider: 'removed' }, {
  narrower: [O({ properties: P }), O({ properties: P, patternProperties: { '^x-': { type: 'string' } } })],
  wider: [O({ properties: P, patternProperties: { '^x-': { type: 'string' } } }), O({ properties: P })],
});
export const PROPERTY_NAMES = keywordFamily(F, 'property-names', 'propertyNames', { narrower: 'added', wider: 'removed' }, {
  narrower: [O({ additionalProperties: { type: 'string' } }), O({ additionalProperties: { type: 'string' }, propertyNames: { pattern: '^[a-z]+$' } })],
  wider: [O({ additionalProperties: { type: 'string' }, propertyNames: { pattern: '^[a-z]+$' } }), O({ additionalProperties: { type: 'string' } })],
});

export const schemaObjectFamilies = [PROPERTY_REQUIRED, ADDITIONAL_PROPERTIES, UNEVALUATED_PROPERTIES, DEPENDENT_REQUIRED, DEPENDENT_SCHEMAS, PATTERN_PROPERTIES, PROPERTY_NAMES];
export const schemaObjectRules = [
  ...schemaObjectFamilies.flatMap(familyRules),
  REQUEST_PROPERTY_ADDED_REQUIRED,
  REQUEST_PROPERTY_ADDED,
  REQUEST_PROPERTY_REMOVED,
  REQUEST_PROPERTY_REMOVED_CLOSED,
  RESPONSE_PROPERTY_ADDED,
  RESPONSE_PROPERTY_REMOVED,
  REQUEST_PROPERTY_BECAME_READ_ONLY,
  REQUEST_PROPERTY_READ_ONLY_REMOVED,
  RESPONSE_PROPERTY_BECAME_WRITE_ONLY,
  RESPONSE_PROPERTY_WRITE_ONLY_REMOVED,
  PROPERTY_DEPRECATED,
];

interface PropertyFlags {
  readOnly: boolean;
  writeOnly: boolean;
  deprecated: boolean;
}

/** readOnly/writeOnly/deprecated may sit on the referenced schema or (3.1) beside the `$ref`. */
function flagsOf(raw: unknown, resolved: unknown): PropertyFlags {
  const r = isObject(raw) ? raw : {};
  const d = isObject(resolved) ? resolved : {};
  return {
    readOnly: r.readOnly === true || d.readOnly === true,
    writeOnly: r.writeOnly === true || d.writeOnly === true,
    deprecated: r.deprecated === true || d.deprecated === true,
  };
}

const requiredSet = (node: Record<string, unknown>): Set<string> => new Set(Array.isArray(node.required) ? node.required.filter((n): n is string => typeof n === 'string') : []);
const keysOf = (v: unknown): string[] => (isObject(v) ? Object.keys(v) : []);
const has = (v: unknown, k: string): boolean => isObject(v) && Object.prototype.hasOwnProperty.call(v, k);
const childLabel = (site: Site, name: string): Site => ({ ...site, label: `${site.label}.${name}` });

type Openness = 'any' | 'none' | 'schema';
const openness = (v: unknown): Openness => (v === undefined || v === true ? 'any' : v === false ? 'none' : 'schema');

export function checkObject(cmp: SchemaComparer, site: Site, b: Loc, h: Loc): void {
  const bn = nodeOf(b);
  const hn = nodeOf(h);
  if (bn.properties === undefined && hn.properties === undefined && bn.required === undefined && hn.required === undefined) {
    checkOpenness(cmp, site, b, h);
    checkDependencies(cmp, site, b, h);
    return;
  }
  const bProps = childLoc(b, 'properties');
  const hProps = childLoc(h, 'properties');
  const bReq = requiredSet(bn);
  const hReq = requiredSet(hn);
  const headClosed = hn.additionalProperties === false || hn.unevaluatedProperties === false;
  const names = [...new Set([...keysOf(bProps.node), ...keysOf(hProps.node), ...bReq, ...hReq])].sort();
  const hidden = (f: PropertyFlags) => (site.direction === 'request' ? f.readOnly : f.writeOnly);
  // --profile oasdiff detects as oasdiff does where we deliberately differ (docs/contract-rules.md):
  // a writeOnly response property added or removed is reported (oasdiff's *-write-only-property-* ids, INFO);
  // a request property's `required` change is skipped only when the head marks it readOnly; `required`
  // naming a property not described on both sides changes nothing.
  const oasdiff = cmp.ctx.asOasdiff;
  const writeOnlyShown = (f: PropertyFlags) => oasdiff && site.direction === 'response' && f.writeOnly;
  for (const name of names) {
    const inBase = has(bProps.node, name);
    const inHead = has(hProps.node, name);
    const bp = inBase ? childLoc(bProps, name) : undefined;
    const hp = inHead ? childLoc(hProps, name) : undefined;
    const bFlags = bp ? flagsOf(bp.node, cmp.ctx.base.deref(bp).node) : undefined;
    const hFlags = hp ? flagsOf(hp.node, cmp.ctx.head.deref(hp).node) : undefined;
    const sub = childLabel(site, name);
    if (bp && !hp && hReq.has(name)) {
      // still required, no longer described: the property is there, its schema became "anything"
      cmp.compare(sub, bp, { file: h.file, ptr: `${h.ptr}/properties/${name}`, node: {}, synthetic: true });
      if (!bReq.has(name) && !oasdiff) cmp.emit(PROPERTY_REQUIRED, 'narrower', sub, bp, h, `property ${name} became required`);
      continue;
    }
    if (!bp && hp && bReq.has(name)) {
      cmp.compare(sub, { file: b.file, ptr: `${b.ptr}/properties/${name}`, node: {}, synthetic: true }, hp);
      if (!hReq.has(name) && !oasdiff) cmp.emit(PROPERTY_REQUIRED, 'wider', sub, b, hp, `property ${name} became optional`);
      continue;
    }
    if (bp && !hp) {
      if (writeOnlyShown(bFlags!)) {
        cmp.report(RESPONSE_PROPERTY_REMOVED, sub, bp, h, `writeOnly property ${name} removed`, undefined, { required: bReq.has(name), writeOnly: true });
        continue;
      }
      if (hidden(bFlags!)) continue;
      const rule = site.direction === 'request' ? (headClosed ? REQUEST_PROPERTY_REMOVED_CLOSED : REQUEST_PROPERTY_REMOVED) : RESPONSE_PROPERTY_REMOVED;
      cmp.report(rule, sub, bp, h, `property ${name} removed`, undefined, { required: bReq.has(name) });
      continue;
    }
    if (!bp && hp) {
      if (writeOnlyShown(hFlags!)) {
        cmp.report(RESPONSE_PROPERTY_ADDED, sub, b, hp, `writeOnly property ${name} added`, undefined, { required: hReq.has(name), writeOnly: true });
        continue;
      }
      if (hidden(hFlags!)) continue;
      const rule = site.direction === 'request' ? (hReq.has(name) ? REQUEST_PROPERTY_ADDED_REQUIRED : REQUEST_PROPERTY_ADDED) : RESPONSE_PROPERTY_ADDED;
      cmp.report(rule, sub, b, hp, `property ${name} added${hReq.has(name) ? ' as required' : ''}`, undefined, { required: hReq.has(name) });
      continue;
    }
    if (bFlags && hFlags) {
      if (site.direction === 'request') {
        if (!bFlags.readOnly && hFlags.readOnly) cmp.report(REQUEST_PROPERTY_BECAME_READ_ONLY, sub, bp, hp, `property ${name} became readOnly`, undefined, { required: hReq.has(name) });
        else if (bFlags.readOnly && !hFlags.readOnly) cmp.report(REQUEST_PROPERTY_READ_ONLY_REMOVED, sub, bp, hp, `property ${name} is no longer readOnly`, undefined, { required: hReq.has(name) });
      } else {
        if (!bFlags.writeOnly && hFlags.writeOnly) cmp.report(RESPONSE_PROPERTY_BECAME_WRITE_ONLY, sub, bp, hp, `property ${name} became writeOnly`, undefined, { required: hReq.has(name) });
        else if (bFlags.writeOnly && !hFlags.writeOnly) cmp.report(RESPONSE_PROPERTY_WRITE_ONLY_REMOVED, sub, bp, hp, `property ${name} is no longer writeOnly`, undefined, { required: hReq.has(name) });
      }
      if (oasdiff && site.direction === 'request' && !hFlags.readOnly && bFlags.readOnly && bReq.has(name) !== hReq.has(name)) {
        // oasdiff looks at the head only: a property that stops being readOnly and becomes required is
        // request-property-became-required for it (we skip it: it was not sent before)
        cmp.emit(PROPERTY_REQUIRED, hReq.has(name) ? 'narrower' : 'wider', sub, bp!, hp!, `property ${name} became ${hReq.has(name) ? 'required' : 'optional'}`);
      }
      if (hidden(bFlags) || hidden(hFlags)) continue;
      if (!bFlags.deprecated && hFlags.deprecated) cmp.report(PROPERTY_DEPRECATED, sub, bp, hp, `property ${name} deprecated`);
    }
    const bR = bReq.has(name);
    const hR = hReq.has(name);
    // under oasdiff, `required` naming a property neither side describes is no change
    if (bR !== hR && !(oasdiff && !bp && !hp)) cmp.emit(PROPERTY_REQUIRED, hR ? 'narrower' : 'wider', sub, bp ?? b, hp ?? h, `property ${name} became ${hR ? 'required' : 'optional'}`);
    if (bp && hp) cmp.compare(sub, bp, hp);
  }
  checkOpenness(cmp, site, b, h);
  checkDependencies(cmp, site, b, h);
}

function checkOpenness(cmp: SchemaComparer, site: Site, b: Loc, h: Loc): void {
  for (const [key, family] of [
    ['additionalProperties', ADDITIONAL_PROPERTIES],
    ['unevaluatedProperties', UNEVALUATED_PROPERTIES],
  ] as Array<[string, KeywordFamily]>) {
    const bv = nodeOf(b)[key];
    const hv = nodeOf(h)[key];
    const bo = openness(bv);
    const ho = openness(hv);
    if (bo === 'schema' && ho === 'schema') {
      cmp.compare({ ...site, label: `${site.label}{${key}}` }, childLoc(b, key), childLoc(h, key));
      continue;
    }
    if (bo === ho) continue;
    // any ⊃ schema ⊃ none
    const rank: Record<Openness, number> = { any: 2, schema: 1, none: 0 };
    const effect: Effect = rank[ho] < rank[bo] ? 'narrower' : 'wider';
    cmp.emit(family, effect, site, b, h, `${key} changed from ${describeOpenness(bv)} to ${describeOpenness(hv)}`);
  }
}

const describeOpenness = (v: unknown) => (v === undefined ? 'unset' : v === true ? 'true' : v === false ? 'false' : 'a schema');

function checkDependencies(cmp: SchemaComparer, site: Site, b: Loc, h: Loc): void {
  const bn = nodeOf(b);
  const hn = nodeOf(h);
  if (bn.patternProperties !== undefined || hn.patternProperties !== undefined) {
    const bpp = childLoc(b, 'patternProperties');
    const hpp = childLoc(h, 'patternProperties');
    for (const pattern of [...new Set([...keysOf(bpp.node), ...keysOf(hpp.node)])].sort()) {
      const inB = has(bpp.node, pattern);
      const inH = has(hpp.node, pattern);
      if (inB && inH) cmp.compare({ ...site, label: `${site.label}{/${pattern}/}` }, childLoc(bpp, pattern), childLoc(hpp, pattern));
      else cmp.emit(PATTERN_PROPERTIES, inH ? 'narrower' : 'wider', site, b, h, `properties matching /${pattern}/ ${inH ? 'now constrained' : 'no longer constrained'}`, pattern);
    }
  }
  if (bn.propertyNames !== undefined || hn.propertyNames !== undefined) {
    if (bn.propertyNames === undefined) cmp.emit(PROPERTY_NAMES, 'narrower', site, b, h, 'propertyNames constraint added');
    else if (hn.propertyNames === undefined) cmp.emit(PROPERTY_NAMES, 'wider', site, b, h, 'propertyNames constraint removed');
    else cmp.compare({ ...site, label: `${site.label}{propertyNames}` }, childLoc(b, 'propertyNames'), childLoc(h, 'propertyNames'));
  }
  if (bn.dependentRequired !== undefined || hn.dependentRequired !== undefined) {
    const bd = isObject(bn.dependentRequired) ? bn.dependentRequired : {};
    const hd = isObject(hn.dependentRequired) ? hn.dependentRequired : {};
    for (const key of [...new Set([...Object.keys(bd), ...Object.keys(hd)])].sort()) {
      const bs = new Set(Array.isArray(bd[key]) ? (bd[key] as unknown[]).map(String) : []);
      const hs = new Set(Array.isArray(hd[key]) ? (hd[key] as unknown[]).map(String) : []);
      for (const n of hs) if (!bs.has(n)) cmp.emit(DEPENDENT_REQUIRED, 'narrower', site, b, h, `${n} became required when ${key} is present`, `${key}>${n}`);
      for (const n of bs) if (!hs.has(n)) cmp.emit(DEPENDENT_REQUIRED, 'wider', site, b, h, `${n} is no longer required when ${key} is present`, `${key}>${n}`);
    }
  }
  if (bn.dependentSchemas !== undefined || hn.dependentSchemas !== undefined) {
    const bds = childLoc(b, 'dependentSchemas');
    const hds = childLoc(h, 'dependentSchemas');
    for (const key of [...new Set([...keysOf(bds.node), ...keysOf(hds.node)])].sort()) {
      const inB = has(bds.node, key);
      const inH = has(hds.node, key);
      if (inB && inH) cmp.compare({ ...site, label: `${site.label}{dependentSchemas.${key}}` }, childLoc(bds, key), childLoc(hds, key));
      else cmp.emit(DEPENDENT_SCHEMAS, inH ? 'narrower' : 'wider', site, b, h, `dependent schema for ${key} ${inH ? 'added' : 'removed'}`, key);
    }
  }
}
