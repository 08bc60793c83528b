import type { Site } from '../context';
import { canonicalJson } from '../context';
import type { Loc } from '../document';
import { defineRule, familyRules, keywordFamily, type Effect, type KeywordFamily } from '../rule';
import { boundEffect, nodeOf, num, show, type SchemaComparer } from './schema-comparer';

const F = 'schema constraints';
const S = (extra: Record<string, unknown>) => ({ type: 'string', ...extra });
const N = (extra: Record<string, unknown>) => ({ type: 'number', ...extra });
const A = (extra: Record<string, unknown>) => ({ type: 'array', items: { type: 'string' }, ...extra });
const O = (extra: Record<string, unknown>) => ({ type: 'object', ...extra });

const upperBound = (slug: string, keyword: string, make: (v: number) => Record<string, unknown>) =>
  keywordFamily(F, slug, keyword, { narrower: 'decreased', wider: 'increased' }, { narrower: [make(10), make(5)], wider: [make(5), make(10)] });
const lowerBound = (slug: string, keyword: string, make: (v: number) => Record<string, unknown>) =>
  keywordFamily(F, slug, keyword, { narrower: 'increased', wider: 'decreased' }, { narrower: [make(1), make(3)], wider: [make(3), make(1)] });

export const MAX_LENGTH = upperBound('max-length', 'maxLength', (v) => S({ maxLength: v }));
export const MIN_LENGTH = lowerBound('min-length', 'minLength', (v) => S({ minLength: v }));
export const MAX = upperBound('max', 'maximum / exclusiveMaximum', (v) => N({ maximum: v }));
export const MIN = lowerBound('min', 'minimum / exclusiveMinimum', (v) => N({ minimum: v }));
export const MAX_ITEMS = upperBound('max-items', 'maxItems', (v) => A({ maxItems: v }));
export const MIN_ITEMS = lowerBound('min-items', 'minItems', (v) => A({ minItems: v }));
export const MAX_PROPERTIES = upperBound('max-properties', 'maxProperties', (v) => O({ maxProperties: v }));
export const MIN_PROPERTIES = lowerBound('min-properties', 'minProperties', (v) => O({ minProperties: v }));
export const MULTIPLE_OF = keywordFamily(F, 'multiple-of', 'multipleOf', { narrower: 'tightened', wider: 'relaxed', changed: 'changed' }, {
  narrower: [N({ multipleOf: 2 }), N({ multipleOf: 4 })],
  wider: [N({ multipleOf: 4 }), N({ multipleOf: 2 })],
  changed: [N({ multipleOf: 2 }), N({ multipleOf: 3 })],
});
export const UNIQUE_ITEMS = keywordFamily(F, 'unique-items', 'uniqueItems', { narrower: 'added', wider: 'removed' }, {
  narrower: [A({}), A({ uniqueItems: true })],
  wider: [A({ uniqueItems: true }), A({})],
});
export const PATTERN = keywordFamily(F, 'pattern', 'pattern', { narrower: 'added', wider: 'removed', changed: 'changed' }, {
  narrower: [S({}), S({ pattern: '^[a-z]+$' })],
  wider: [S({ pattern: '^[a-z]+$' }), S({})],
  changed: [S({ pattern: '^[a-z]+$' }), S({ pattern: '^[0-9]+$' })],
}, { 'request-changed': 'warning', 'response-wider': 'info', 'response-changed': 'info' }, {
  'request-changed': 'A warning, as in oasdiff: the new pattern may or may not accept what clients send today.',
  // oasdiff grades both INFO: a response pattern documents what the server produces, clients seldom validate it.
  'response-wider': 'Graded info, as oasdiff does: a response pattern documents what the server produces and clients seldom validate against it.',
  'response-changed': 'Graded info, as oasdiff does: a response pattern documents what the server produces and clients seldom validate against it.',
});

export const REQUEST_DEFAULT_CHANGED = defineRule(F, 'request-default-changed', 'request', 'info', 'The default of a request body value changed: clients that omit it get a different behaviour (parameter defaults have their own, breaking rule).', '`{"default": 10}` → `{"default": 20}`');

const BOUND_FAMILIES: Array<[KeywordFamily, string, boolean]> = [
  [MAX_LENGTH, 'maxLength', true],
  [MIN_LENGTH, 'minLength', false],
  [MAX_ITEMS, 'maxItems', true],
  [MIN_ITEMS, 'minItems', false],
  [MAX_PROPERTIES, 'maxProperties', true],
  [MIN_PROPERTIES, 'minProperties', false],
];

export const schemaConstraintFamilies = [MAX_LENGTH, MIN_LENGTH, MAX, MIN, MAX_ITEMS, MIN_ITEMS, MAX_PROPERTIES, MIN_PROPERTIES, MULTIPLE_OF, UNIQUE_ITEMS, PATTERN];
export const schemaConstraintRules = [...schemaConstraintFamilies.flatMap(familyRules), REQUEST_DEFAULT_CHANGED];

interface Bound {
  value: number;
  exclusive: boolean;
}

/** maximum with exclusiveMaximum as a boolean (2.0/3.0) or as a number (3.1), reduced to one bound. */
function effectiveBound(node: Record<string, unknown>, upper: boolean): Bound | undefined {
  const inclusiveKey = upper ? 'maximum' : 'minimum';
  const exclusiveKey = upper ? 'exclusiveMaximum' : 'exclusiveMinimum';
  const bounds: Bound[] = [];
  const inclusive = num(node[inclusiveKey]);
  if (inclusive !== undefined) bounds.push({ value: inclusive, exclusive: node[exclusiveKey] === true });
  const exclusive = num(node[exclusiveKey]);
  if (exclusive !== undefined) bounds.push({ value: exclusive, exclusive: true });
  if (bounds.length === 0) return undefined;
  // the tightest of the two applies
  return bounds.reduce((a, c) => (upper ? c.value < a.value || (c.value === a.value && c.exclusive) : c.value > a.value || (c.value === a.value && c.exclusive)) ? c : a);
}

function boundsEffect(base: Bound | undefined, head: Bound | undefined, upper: boolean): Effect | null {
  if (!base && !head) return null;
  if (!base) return 'narrower';
  if (!head) return 'wider';
  if (base.value === head.value) return base.exclusive === head.exclusive ? null : head.exclusive ? 'narrower' : 'wider';
  return (head.value < base.value) === upper ? 'narrower' : 'wider';
}

const showBound = (b: Bound | undefined, upper: boolean) => (b ? `${upper ? '<' : '>'}${b.exclusive ? '' : '='} ${b.value}` : 'unbounded');

export function checkConstraints(cmp: SchemaComparer, site: Site, b: Loc, h: Loc): void {
  const bn = nodeOf(b);
  const hn = nodeOf(h);
  for (const [family, key, upper] of BOUND_FAMILIES) {
    const e = boundEffect(num(bn[key]), num(hn[key]), upper);
    if (e) cmp.emit(family, e, site, b, h, `${key} changed from ${show(bn[key])} to ${show(hn[key])}`);
  }
  for (const upper of [true, false]) {
    const bb = effectiveBound(bn, upper);
    const hb = effectiveBound(hn, upper);
    const e = boundsEffect(bb, hb, upper);
    if (e) cmp.emit(upper ? MAX : MIN, e, site, b, h, `${upper ? 'maximum' : 'minimum'} changed from ${showBound(bb, upper)} to ${showBound(hb, upper)}`);
  }
  const bm = num(bn.multipleOf);
  const hm = num(hn.multipleOf);
  if (bm !== hm) {
    const effect: Effect =
      bm === undefined ? 'narrower' : hm === undefined ? 'wider' : isMultiple(hm, bm) ? 'narrower' : isMultiple(bm, hm) ? 'wider' : 'changed';
    cmp.emit(MULTIPLE_OF, effect, site, b, h, `multipleOf changed from ${show(bm)} to ${show(hm)}`);
  }
  const bu = bn.uniqueItems === true;
  const hu = hn.uniqueItems === true;
  if (bu !== hu) cmp.emit(UNIQUE_ITEMS, hu ? 'narrower' : 'wider', site, b, h, hu ? 'items must now be unique' : 'items no longer need to be unique');
  const bp = typeof bn.pattern === 'string' ? bn.pattern : undefined;
  const hp = typeof hn.pattern === 'string' ? hn.pattern : undefined;
  if (bp !== hp) {
    const effect: Effect = bp === undefined ? 'narrower' : hp === undefined ? 'wider' : 'changed';
    cmp.emit(PATTERN, effect, site, b, h, `pattern changed from ${show(bp)} to ${show(hp)}`);
  }
  if (site.direction === 'request' && !site.parameter && bn.default !== undefined && hn.default !== undefined && canonicalJson(bn.default) !== canonicalJson(hn.default)) {
    cmp.report(REQUEST_DEFAULT_CHANGED, site, b, h, `default changed from ${show(bn.default)} to ${show(hn.default)}`);
  }
}

/** a is a whole multiple of b (with float tolerance: multipleOf is often 0.01). */
function isMultiple(a: number, b: number): boolean {
  if (b === 0) return false;
  const q = a / b;
  return Math.abs(q - Math.round(q)) < 1e-9;
}
