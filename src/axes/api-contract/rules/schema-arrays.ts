import type { Site } from '../context';
import { childLoc, type Loc } from '../document';
import { familyRules, keywordFamily } from './rule';
import { nodeOf, type SchemaComparer } from './schema-comparer';

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

export const schemaArrayFamilies = [PREFIX_ITEMS, UNEVALUATED_ITEMS];
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
  const bu = bn.unevaluatedItems;
  const hu = hn.unevaluatedItems;
  if (bu !== hu) {
    const closed = (v: unknown) => v === false;
    if (closed(hu) && !closed(bu)) cmp.emit(UNEVALUATED_ITEMS, 'narrower', site, b, h, 'unevaluatedItems now refuses extra items');
    else if (closed(bu) && !closed(hu)) cmp.emit(UNEVALUATED_ITEMS, 'wider', site, b, h, 'unevaluatedItems no longer refuses extra items');
    else if (typeof bu === 'object' && typeof hu === 'object' && bu !== null && hu !== null) cmp.compare({ ...site, label: `${site.label}[unevaluated]` }, childLoc(b, 'unevaluatedItems'), childLoc(h, 'unevaluatedItems'));
  }
}
