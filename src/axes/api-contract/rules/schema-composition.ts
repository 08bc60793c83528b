import type { Site } from '../context';
import { canonicalJson } from '../context';
import { childLoc, isObject, type Loc } from '../document';
import { defineRule, familyRules, keywordFamily, type KeywordFamily } from './rule';
import { nodeOf, type SchemaComparer } from './schema-comparer';

const F = 'schema composition';
const CAT = { $ref: '#/components/schemas/Cat' };
const DOG = { $ref: '#/components/schemas/Dog' };

export const ONE_OF = keywordFamily(F, 'one-of', 'oneOf', { narrower: 'added', wider: 'removed' }, {
  narrower: [{ type: 'object' }, { type: 'object', oneOf: [CAT, DOG] }],
  wider: [{ type: 'object', oneOf: [CAT, DOG] }, { type: 'object' }],
});
export const ONE_OF_BRANCH = keywordFamily(F, 'one-of-branch', 'oneOf branch', { narrower: 'removed', wider: 'added' }, {
  narrower: [{ oneOf: [CAT, DOG] }, { oneOf: [CAT] }],
  wider: [{ oneOf: [CAT] }, { oneOf: [CAT, DOG] }],
});
export const ANY_OF = keywordFamily(F, 'any-of', 'anyOf', { narrower: 'added', wider: 'removed' }, {
  narrower: [{ type: 'object' }, { type: 'object', anyOf: [CAT, DOG] }],
  wider: [{ type: 'object', anyOf: [CAT, DOG] }, { type: 'object' }],
});
export const ANY_OF_BRANCH = keywordFamily(F, 'any-of-branch', 'anyOf branch', { narrower: 'removed', wider: 'added' }, {
  narrower: [{ anyOf: [CAT, DOG] }, { anyOf: [CAT] }],
  wider: [{ anyOf: [CAT] }, { anyOf: [CAT, DOG] }],
});
export const ALL_OF_BRANCH = keywordFamily(F, 'all-of-branch', 'allOf branch', { narrower: 'added', wider: 'removed' }, {
  narrower: [{ allOf: [CAT] }, { allOf: [CAT, DOG] }],
  wider: [{ allOf: [CAT, DOG] }, { allOf: [CAT] }],
});
export const NOT = keywordFamily(F, 'not', 'not', { narrower: 'added', wider: 'removed', changed: 'changed' }, {
  narrower: [{ type: 'string' }, { type: 'string', not: { enum: ['x'] } }],
  wider: [{ type: 'string', not: { enum: ['x'] } }, { type: 'string' }],
  changed: [{ type: 'string', not: { enum: ['x'] } }, { type: 'string', not: { enum: ['y'] } }],
});
export const CONDITIONAL = keywordFamily(F, 'conditional', 'if / then / else', { narrower: 'added', wider: 'removed', changed: 'changed' }, {
  narrower: [{ type: 'object' }, { type: 'object', if: { required: ['a'] }, then: { required: ['b'] } }],
  wider: [{ type: 'object', if: { required: ['a'] }, then: { required: ['b'] } }, { type: 'object' }],
  changed: [{ type: 'object', if: { required: ['a'] }, then: { required: ['b'] } }, { type: 'object', if: { required: ['a'] }, then: { required: ['c'] } }],
});

export const DISCRIMINATOR_PROPERTY_CHANGED = defineRule(F, 'discriminator-property-changed', 'none', 'breaking', 'The discriminator property name changed (or was added/removed): both sides pick the variant from a different field.', '`{"discriminator": {"propertyName": "kind"}}` → `{"discriminator": {"propertyName": "type"}}`');
export const DISCRIMINATOR_MAPPING_CHANGED = defineRule(F, 'discriminator-mapping-changed', 'none', 'breaking', 'A discriminator mapping value was removed or now points to another schema.', '`{"mapping": {"cat": "#/…/Cat"}}` → `{"mapping": {"cat": "#/…/Feline"}}`');

export const schemaCompositionFamilies = [ONE_OF, ONE_OF_BRANCH, ANY_OF, ANY_OF_BRANCH, ALL_OF_BRANCH, NOT, CONDITIONAL];
export const schemaCompositionRules = [...schemaCompositionFamilies.flatMap(familyRules), DISCRIMINATOR_PROPERTY_CHANGED, DISCRIMINATOR_MAPPING_CHANGED];

const refName = (node: unknown): string | undefined => (isObject(node) && typeof node.$ref === 'string' ? node.$ref.slice(node.$ref.lastIndexOf('/') + 1) : undefined);

export interface BranchMatch {
  pairs: Array<[number, number]>;
  removed: number[];
  added: number[];
}

/**
 * Pairs composition branches by `$ref` name, then identical content, then title — never by position,
 * so reordering oneOf branches is not a change. A single leftover branch on each side is the same
 * branch edited in place.
 */
export function matchBranches(base: unknown[], head: unknown[], titleOf: (side: 'base' | 'head', i: number) => string | undefined): BranchMatch {
  const freeB = new Set(base.map((_, i) => i));
  const freeH = new Set(head.map((_, i) => i));
  const pairs: Array<[number, number]> = [];
  // one queue of head branches per key: the same $ref listed twice pairs up twice
  const pass = (keyB: (i: number) => string | undefined, keyH: (j: number) => string | undefined) => {
    const byKey = new Map<string, number[]>();
    for (const j of freeH) {
      const k = keyH(j);
      if (k === undefined) continue;
      const queue = byKey.get(k);
      if (queue) queue.push(j);
      else byKey.set(k, [j]);
    }
    for (const i of [...freeB]) {
      const k = keyB(i);
      if (k === undefined) continue;
      const j = byKey.get(k)?.shift();
      if (j === undefined) continue;
      pairs.push([i, j]);
      freeB.delete(i);
      freeH.delete(j);
    }
  };
  pass((i) => refName(base[i]), (j) => refName(head[j]));
  pass((i) => canonicalJson(base[i]), (j) => canonicalJson(head[j]));
  pass((i) => titleOf('base', i), (j) => titleOf('head', j));
  if (freeB.size === 1 && freeH.size === 1) {
    const i = [...freeB][0];
    const j = [...freeH][0];
    // a leftover $ref on either side names a different schema: that is a swap, not an edit
    if (refName(base[i]) === undefined || refName(head[j]) === undefined) {
      pairs.push([i, j]);
      freeB.clear();
      freeH.clear();
    }
  }
  return { pairs: pairs.sort((x, y) => x[0] - y[0]), removed: [...freeB].sort((a, b) => a - b), added: [...freeH].sort((a, b) => a - b) };
}

const branchLabel = (node: unknown, i: number): string => refName(node) ?? `#${i}`;

export function checkComposition(cmp: SchemaComparer, site: Site, b: Loc, h: Loc): void {
  const bn = nodeOf(b);
  const hn = nodeOf(h);
  const compositions: Array<[string, KeywordFamily | undefined, KeywordFamily]> = [
    ['oneOf', ONE_OF, ONE_OF_BRANCH],
    ['anyOf', ANY_OF, ANY_OF_BRANCH],
    // allOf absent is allOf [], so adding the keyword is adding branches
    ['allOf', undefined, ALL_OF_BRANCH],
  ];
  for (const [key, keywordRules, branchRules] of compositions) {
    const bList = Array.isArray(bn[key]) ? (bn[key] as unknown[]) : undefined;
    const hList = Array.isArray(hn[key]) ? (hn[key] as unknown[]) : undefined;
    if (!bList && !hList) continue;
    if (keywordRules && (!bList || !hList)) {
      cmp.emit(keywordRules, hList ? 'narrower' : 'wider', site, b, h, `${key} ${hList ? 'added' : 'removed'}`);
      continue;
    }
    const bl = childLoc(b, key);
    const hl = childLoc(h, key);
    const bItems = bList ?? [];
    const hItems = hList ?? [];
    const titleOf = (side: 'base' | 'head', i: number) => {
      const loc = side === 'base' ? cmp.ctx.base.deref(childLoc(bl, i, bItems[i])) : cmp.ctx.head.deref(childLoc(hl, i, hItems[i]));
      return isObject(loc.node) && typeof loc.node.title === 'string' ? loc.node.title : undefined;
    };
    const m = matchBranches(bItems, hItems, titleOf);
    for (const [i, j] of m.pairs) cmp.compare({ ...site, label: `${site.label}<${key} ${branchLabel(hItems[j], j)}>` }, childLoc(bl, i, bItems[i]), childLoc(hl, j, hItems[j]));
    for (const i of m.removed) cmp.emit(branchRules, key === 'allOf' ? 'wider' : 'narrower', site, childLoc(bl, i, bItems[i]), h, `${key} branch ${branchLabel(bItems[i], i)} removed`, `${key}-${canonicalJson(bItems[i])}`);
    for (const j of m.added) cmp.emit(branchRules, key === 'allOf' ? 'narrower' : 'wider', site, b, childLoc(hl, j, hItems[j]), `${key} branch ${branchLabel(hItems[j], j)} added`, `${key}-${canonicalJson(hItems[j])}`);
  }

  const bNot = bn.not;
  const hNot = hn.not;
  if (bNot !== undefined || hNot !== undefined) {
    if (bNot === undefined) cmp.emit(NOT, 'narrower', site, b, h, 'not added');
    else if (hNot === undefined) cmp.emit(NOT, 'wider', site, b, h, 'not removed');
    else if (canonicalJson(bNot) !== canonicalJson(hNot)) cmp.emit(NOT, 'changed', site, childLoc(b, 'not'), childLoc(h, 'not'), 'not changed');
  }

  const cond = (n: Record<string, unknown>) => (n.if === undefined ? undefined : canonicalJson([n.if, n.then, n.else]));
  const bc = cond(bn);
  const hc = cond(hn);
  if (bc !== hc) {
    const effect = bc === undefined ? 'narrower' : hc === undefined ? 'wider' : 'changed';
    cmp.emit(CONDITIONAL, effect, site, b, h, `if/then/else ${effect === 'narrower' ? 'added' : effect === 'wider' ? 'removed' : 'changed'}`);
  }

  const bd = isObject(bn.discriminator) ? bn.discriminator : undefined;
  const hd = isObject(hn.discriminator) ? hn.discriminator : undefined;
  if (bd || hd) {
    if (bd?.propertyName !== hd?.propertyName) {
      cmp.report(DISCRIMINATOR_PROPERTY_CHANGED, site, b, h, `discriminator property changed from ${String(bd?.propertyName ?? 'none')} to ${String(hd?.propertyName ?? 'none')}`);
    } else {
      const bm = isObject(bd?.mapping) ? bd!.mapping : {};
      const hm = isObject(hd?.mapping) ? hd!.mapping : {};
      for (const value of Object.keys(bm).sort()) {
        if (hm[value] === bm[value]) continue;
        cmp.report(DISCRIMINATOR_MAPPING_CHANGED, site, b, h, hm[value] === undefined ? `discriminator value ${value} removed` : `discriminator value ${value} now maps to ${String(hm[value])}`, value);
      }
    }
  }
}

/** Keywords that do not constrain values: a schema with only these besides allOf is a pure wrapper. */
const ANNOTATIONS = new Set(['allOf', 'description', 'title', 'nullable', 'readOnly', 'writeOnly', 'deprecated', 'example', 'examples', 'default', 'externalDocs', '$comment']);
const isAllOfWrapper = (node: unknown): node is { allOf: unknown[] } =>
  isObject(node) && Array.isArray(node.allOf) && Object.keys(node).every((k) => ANNOTATIONS.has(k) || k.startsWith('x-'));

/**
 * `$ref: X` on one side and `allOf: [$ref: X, …]` on the other is the same schema with branches added or
 * removed (a common way to extend a shared schema in place): compare X with X and report only the extra
 * branches, instead of "type changed" and "every branch added". Returns whether it handled the pair.
 */
export function checkAllOfWrapping(cmp: SchemaComparer, site: Site, rawBase: Loc, rawHead: Loc, b: Loc, h: Loc): boolean {
  const bRef = refName(rawBase.node);
  const hRef = refName(rawHead.node);
  if (bRef !== undefined && hRef === undefined && isAllOfWrapper(h.node)) {
    const list = h.node.allOf;
    const i = list.findIndex((x) => refName(x) === bRef);
    if (i === -1) return false;
    const hl = childLoc(h, 'allOf');
    cmp.compare(site, rawBase, childLoc(hl, i, list[i]));
    list.forEach((x, j) => {
      if (j !== i) cmp.emit(ALL_OF_BRANCH, 'narrower', site, b, childLoc(hl, j, x), `allOf branch ${branchLabel(x, j)} added around ${bRef}`, `allOf-${canonicalJson(x)}`);
    });
    return true;
  }
  if (hRef !== undefined && bRef === undefined && isAllOfWrapper(b.node)) {
    const list = b.node.allOf;
    const i = list.findIndex((x) => refName(x) === hRef);
    if (i === -1) return false;
    const bl = childLoc(b, 'allOf');
    cmp.compare(site, childLoc(bl, i, list[i]), rawHead);
    list.forEach((x, j) => {
      if (j !== i) cmp.emit(ALL_OF_BRANCH, 'wider', site, childLoc(bl, j, x), h, `allOf branch ${branchLabel(x, j)} around ${hRef} removed`, `allOf-${canonicalJson(x)}`);
    });
    return true;
  }
  return false;
}
