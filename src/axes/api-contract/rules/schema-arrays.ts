import type { Site } from '../context';
import { childLoc, type Loc } from '../document';
import { familyRules, keywordFamily } from '../rule';
import { boundEffect, nodeOf, num, show, type SchemaComparer } from './schema-comparer';

const F = 'schema arrays';
const A = (extra: Record<string, unknown>) => ({ type: 'array', ...extra });

export const PREFIX_ITEMS = keywordFamily(F, 'prefix-items', 'prefixItems', { narrower: 'added', wider: 'removed' }, {
  narrower: [A({ prefixItems: [{ type: 'string' }] }), A({ prefixItems: [{ type: 'string' }, { type: 'integer' }] })],
  wider: [A({ prefixItems: [{ type: 'string' }, { type: 'integer' }] }), A({ prefixItems: [{ type: 'string' }] })],
});
export const UNEVALUATED_ITEMS = keywordFamily(F, 'unevaluated-items', 'unevaluatedItems', { narrower: 'restricted', wider: 'allowed' }, {
  narrower: [A({ prefixItems: [{ type: 'string' }] }), A({ prefixItems: [{ type: 'string' }], unevaluatedItems: false })],
  wider: [A({ prefixItems: [{ type: 'string' }], unevaluatedItems: false }), A({ prefixItems: [{ type: 'string' }] })],
});

export const CONTAINS = keywordFamily(F, 'contains', 'contains', { narrower: 'added', wider: 'removed' }, {
  narrower: [A({ items: { type: 'string' } }), A({ items: { type: 'string' }, contains: { const: 'admin' } })],
  wider: [A({ items: { type: 'string' }, contains: { const: 'admin' } }), A({ items: { type: 'string' } })],
});
export const MIN_CONTAINS = keywordFamily(F, 'min-contains', 'minContains', { narrower: 'increased', wider: 'decreased' }, {
  narrower: [A({ contains: { const: 'a' }, minContains: 1 }), A({ contains: { const: 'a' }, minContains: 2 })],
  wider: [A({ contains: { const: 'a' }, minContains: 2 }), A({ contains: { const: 'a' }, minContains: 1 })],
});
export const MAX_CONTAINS = keywordFamily(F, 'max-contains', 'maxContains', { narrower: 'decreased', wider: 'increased' }, {
  narrower: [A({ contains: { const: 'a' }, maxContains: 3 }), A({ contains: { const: 'a' }, maxContains: 2 })],
  wider: [A({ contains: { const: 'a' }, maxContains: 2 }), A({ contains: { const: 'a' }, maxContains: 3 })],
});

export const schemaArrayFamilies = [PREFIX_ITEMS, UNEVALUATED_ITEMS, CONTAINS, MIN_CONTAINS, MAX_CONTAINS];
export const schemaArrayRules = schemaArrayFamilies.flatMap(familyRules);

const EMPTY_AT = (owner: Loc, key: string): Loc => ({ file: owner.file, ptr: `${owner.ptr}/${key}`, node: {}, synthetic: true });

/**
 * `items` (a schema; in 2019 drafts possibly an array, treated as prefixItems) is compared recursively,
 * against an empty schema where one side has none: "items: {type: string}" added reads as the type of
 * the elements narrowing from any to string.
 */
export function checkArray(cmp: SchemaComparer, site: Site, b: Loc, h: Loc): void {
  const bn = nodeOf(b);
  const hn = nodeOf(h);
  const bItems = bn.items;
  const hItems = hn.items;
  if ((bItems !== undefined && !Array.isArray(bItems)) || (hItems !== undefined && !Array.isArray(hItems))) {
    const bl = bItems !== undefined && !Array.isArray(bItems) ? childLoc(b, 'items') : EMPTY_AT(b, 'items');
    const hl = hItems !== undefined && !Array.isArray(hItems) ? childLoc(h, 'items') : EMPTY_AT(h, 'items');
    cmp.compare({ ...site, label: `${site.label}[]` }, bl, hl);
  }
  const bPrefixKey = Array.isArray(bn.prefixItems) ? 'prefixItems' : Array.isArray(bItems) ? 'items' : undefined;
  const hPrefixKey = Array.isArray(hn.prefixItems) ? 'prefixItems' : Array.isArray(hItems) ? 'items' : undefined;
  if (bPrefixKey || hPrefixKey) {
    const bList = bPrefixKey ? (bn[bPrefixKey] as unknown[]) : [];
    const hList = hPrefixKey ? (hn[hPrefixKey] as unknown[]) : [];
    const bl = bPrefixKey ? childLoc(b, bPrefixKey) : EMPTY_AT(b, 'prefixItems');
    const hl = hPrefixKey ? childLoc(h, hPrefixKey) : EMPTY_AT(h, 'prefixItems');
    const common = Math.min(bList.length, hList.length);
    for (let i = 0; i < common; i++) cmp.compare({ ...site, label: `${site.label}[${i}]` }, childLoc(bl, i), childLoc(hl, i));
    for (let i = common; i < hList.length; i++) cmp.emit(PREFIX_ITEMS, 'narrower', site, b, childLoc(hl, i), `positional item ${i} added`, String(i));
    for (let i = common; i < bList.length; i++) cmp.emit(PREFIX_ITEMS, 'wider', site, childLoc(bl, i), h, `positional item ${i} removed`, String(i));
  }
  if (bn.contains !== undefined || hn.contains !== undefined) {
    if (bn.contains === undefined) cmp.emit(CONTAINS, 'narrower', site, b, h, 'contains constraint added');
    else if (hn.contains === undefined) cmp.emit(CONTAINS, 'wider', site, b, h, 'contains constraint removed');
    else cmp.compare({ ...site, label: `${site.label}[contains]` }, childLoc(b, 'contains'), childLoc(h, 'contains'));
  }
  // minContains defaults to 1 and only applies with contains; maxContains is unbounded when absent
  const minC = (n: Record<string, unknown>) => (n.contains === undefined ? undefined : (num(n.minContains) ?? 1));
  const minE = boundEffect(minC(bn), minC(hn), false);
  if (minE && bn.contains !== undefined && hn.contains !== undefined) cmp.emit(MIN_CONTAINS, minE, site, b, h, `minContains changed from ${show(bn.minContains)} to ${show(hn.minContains)}`);
  const maxE = boundEffect(num(bn.maxContains), num(hn.maxContains), true);
  if (maxE) cmp.emit(MAX_CONTAINS, maxE, site, b, h, `maxContains changed from ${show(bn.maxContains)} to ${show(hn.maxContains)}`);
  const bu = bn.unevaluatedItems;
  const hu = hn.unevaluatedItems;
  if (bu !== hu) {
    const closed = (v: unknown) => v === false;
    if (closed(hu) && !closed(bu)) cmp.emit(UNEVALUATED_ITEMS, 'narrower', site, b, h, 'unevaluatedItems now refuses extra items');
    else if (closed(bu) && !closed(hu)) cmp.emit(UNEVALUATED_ITEMS, 'wider', site, b, h, 'unevaluatedItems no longer refuses extra items');
    else if (typeof bu === 'object' && typeof hu === 'object' && bu !== null && hu !== null) cmp.compare({ ...site, label: `${site.label}[unevaluated]` }, childLoc(b, 'unevaluatedItems'), childLoc(h, 'unevaluatedItems'));
  }
}
