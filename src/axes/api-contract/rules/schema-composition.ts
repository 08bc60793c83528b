import type { Site } from '../context';
import { vacuousComposition } from '../compose';
import { canonicalJson } from '../context';
import { childLoc, isObject, type Loc } from '../document';
import { defineRule, familyRules, keywordFamily, type KeywordFamily } from '../rule';
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
}, { 'request-wider': 'warning', 'response-wider': 'info' }, {
  'request-wider': 'A warning, as in oasdiff: clients still sending what the branch described may now be refused. What the branch took away is also reported property by property, on the composed schema.',
  'response-wider': 'Graded info, as oasdiff does: what the branch took away is reported property by property on the composed schema (a property that moved to another branch is not a change).',
});
export const ALL_OF_REORGANIZED = defineRule(F, 'all-of-reorganized', 'none', 'info', 'The allOf branches were reorganized (renamed components, a property moved between branches, branches merged or split) and the composed schema a client sees is the same.', '`allOf: [A{id}, B{name}]` → `allOf: [A{id, name}, B{}]`');
export const SCHEMA_REF_RENAMED = defineRule(F, 'schema-ref-renamed', 'none', 'info', 'A `$ref` now names another component with identical content (a rename): nothing a client sees changed, generated type names may.', '`$ref: #/components/schemas/Zone-1a2b` → `$ref: #/components/schemas/Zone-3c4d`');
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

export const DISCRIMINATOR_PROPERTY_CHANGED = defineRule(F, 'discriminator-property-changed', 'none', 'info', 'The discriminator property name changed (or was added/removed). Graded info, as oasdiff does: the payloads themselves are compared branch by branch, so a field that really appears or disappears is reported there.', '`{"discriminator": {"propertyName": "kind"}}` → `{"discriminator": {"propertyName": "type"}}`');
export const DISCRIMINATOR_MAPPING_CHANGED = defineRule(F, 'discriminator-mapping-changed', 'none', 'info', 'A discriminator mapping value was removed or now points to another schema. Graded info, as oasdiff does: what each branch admits is compared on its own.', '`{"mapping": {"cat": "#/…/Cat"}}` → `{"mapping": {"cat": "#/…/Feline"}}`');

export const schemaCompositionFamilies = [ONE_OF, ONE_OF_BRANCH, ANY_OF, ANY_OF_BRANCH, ALL_OF_BRANCH, NOT, CONDITIONAL];
export const schemaCompositionRules = [...schemaCompositionFamilies.flatMap(familyRules), ALL_OF_REORGANIZED, SCHEMA_REF_RENAMED, DISCRIMINATOR_PROPERTY_CHANGED, DISCRIMINATOR_MAPPING_CHANGED];

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
export function matchBranches(
  base: unknown[],
  head: unknown[],
  titleOf: (side: 'base' | 'head', i: number) => string | undefined,
  /** What a branch admits, `$ref`s followed (so a renamed component with the same content pairs up). */
  contentOf?: (side: 'base' | 'head', i: number) => string,
): BranchMatch {
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
  if (contentOf) pass((i) => contentOf('base', i), (j) => contentOf('head', j));
  else pass((i) => canonicalJson(base[i]), (j) => canonicalJson(head[j]));
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
    // allOf never reaches here: the schemas compared are composed views (see checkAllOfBranches)
  ];
  for (const [key, keywordRules, branchRules] of compositions) {
    const bList = Array.isArray(bn[key]) ? (bn[key] as unknown[]) : undefined;
    const hList = Array.isArray(hn[key]) ? (hn[key] as unknown[]) : undefined;
    if (!bList && !hList) continue;
    if (keywordRules && (!bList || !hList)) {
      if (vacuousOn(cmp, bList ? 'base' : 'head', bList ? bn : hn, bList ? b : h, key)) continue;
      // the other side still writes the keyword, it only constrains nothing there: not an addition or removal of it
      if (bList ? cmp.ctx.headView.droppedAsVacuous(hn, key) : cmp.ctx.baseView.droppedAsVacuous(bn, key)) continue;
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
    const contentOf = (side: 'base' | 'head', i: number) =>
      side === 'base' ? cmp.ctx.baseView.digestOf(bItems[i], childLoc(bl, i, bItems[i])) : cmp.ctx.headView.digestOf(hItems[i], childLoc(hl, i, hItems[i]));
    const m = matchBranches(bItems, hItems, titleOf, contentOf);
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

  checkDiscriminator(cmp, site, b, h);
}

/** Discriminator property name and mapping (info, as oasdiff grades them): the branches say what really changed. */
function checkDiscriminator(cmp: SchemaComparer, site: Site, b: Loc, h: Loc): void {
  const bn = nodeOf(b);
  const hn = nodeOf(h);
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

/** Keywords that do not constrain values: a schema with only these besides a composition is a pure wrapper. */
const ANNOTATIONS = new Set(['description', 'title', 'nullable', 'readOnly', 'writeOnly', 'deprecated', 'example', 'examples', 'default', 'externalDocs', '$comment', 'discriminator']);
const onlyAnnotationsBesides = (node: Record<string, unknown>, key: string, typeToo = false): boolean =>
  Object.keys(node).every((k) => k === key || ANNOTATIONS.has(k) || k.startsWith('x-') || (typeToo && k === 'type'));

/** The plain side against the union of the wrapper's branches (Composer.unionOfBranches), plus the keyword once. */
function compareWithUnion(cmp: SchemaComparer, site: Site, key: 'oneOf' | 'anyOf', b: Loc, h: Loc, wrapperIsHead: boolean): boolean {
  const plain = nodeOf(wrapperIsHead ? b : h);
  if (!isObject(plain.properties)) return false;
  const wrapper = wrapperIsHead ? h : b;
  const union = (wrapperIsHead ? cmp.ctx.headView : cmp.ctx.baseView).unionOfBranches(wrapper, key);
  if (!union) return false;
  const at: Loc = { file: wrapper.file, ptr: wrapper.ptr, node: union };
  const label = { ...site, label: `${site.label}<${key}>` };
  if (wrapperIsHead) cmp.compare(label, b, at);
  else cmp.compare(label, at, h);
  cmp.emit(key === 'oneOf' ? ONE_OF : ANY_OF, wrapperIsHead ? 'narrower' : 'wider', site, b, h, `${key} ${wrapperIsHead ? 'added' : 'removed'}; its branches together describe the former properties`);
  checkDiscriminator(cmp, site, b, h);
  return true;
}

/** A oneOf/anyOf its own side's type already satisfies (see compose.ts): adding or removing it is no change. */
function vacuousOn(cmp: SchemaComparer, side: 'base' | 'head', node: Record<string, unknown>, at: Loc, key: string): boolean {
  return (key === 'oneOf' || key === 'anyOf') && vacuousComposition(side === 'base' ? cmp.ctx.base : cmp.ctx.head, node, at, key);
}

/**
 * allOf at branch level. What a client sees — the composed schema — is compared by the caller; here only
 * the branches themselves: matched by `$ref` name, then by content (refs followed, so a renamed component
 * pairs with its old name), duplicates ignored (listing a branch twice is the same allOf). Unmatched
 * branches are reported with the allOf-branch rules, unless the composed schemas are identical: then the
 * whole reshuffle is one info change. A side without allOf counts as one branch: itself.
 */
export function checkAllOfBranches(cmp: SchemaComparer, site: Site, rawBase: Loc, rawHead: Loc, b: Loc, h: Loc): void {
  const bn = b.node;
  const hn = h.node;
  const bHas = isObject(bn) && Array.isArray(bn.allOf);
  const hHas = isObject(hn) && Array.isArray(hn.allOf);
  if (!bHas && !hHas) return;
  const branches = (has: boolean, raw: Loc, at: Loc): Loc[] => {
    if (!has) return [raw];
    const list = childLoc(at, 'allOf');
    return ((at.node as Record<string, unknown>).allOf as unknown[]).map((x, i) => childLoc(list, i, x));
  };
  const bAll = branches(bHas, rawBase, b);
  const hAll = branches(hHas, rawHead, h);
  if (sameBranchesAsWritten(bAll, hAll)) {
    // The same components (and identical inline branches) on both sides — the common case, settled without
    // digesting whole schemas. What changed inside them is found on the composed schema; a property that
    // moved between them is a reorganization when the composed schemas turn out identical.
    if (ownPropertyNames(cmp, bAll, 'base') !== ownPropertyNames(cmp, hAll, 'head') && cmp.ctx.baseView.digestOf(bn, b) === cmp.ctx.headView.digestOf(hn, h)) {
      cmp.report(ALL_OF_REORGANIZED, site, b, h, 'allOf branches reorganized; the composed schema is unchanged');
    }
    return;
  }
  const dedupe = (locs: Loc[], digest: (l: Loc) => string) => locs.filter((l, i) => locs.findIndex((m) => digest(m) === digest(l)) === i);
  const bd = (l: Loc) => cmp.ctx.baseView.digestOf(l.node, l);
  const hd = (l: Loc) => cmp.ctx.headView.digestOf(l.node, l);
  // listing a branch twice is the same allOf, so duplicates are dropped before matching; oasdiff (without
  // --flatten-allof) keeps them: under --profile oasdiff a repeated branch is an added (or removed) branch
  const oasdiff = cmp.ctx.asOasdiff;
  const bList = oasdiff ? bAll : dedupe(bAll, bd);
  const hList = oasdiff ? hAll : dedupe(hAll, hd);
  const titleOf = (side: 'base' | 'head', i: number) => {
    const loc = side === 'base' ? cmp.ctx.base.deref(bList[i]) : cmp.ctx.head.deref(hList[i]);
    return isObject(loc.node) && typeof loc.node.title === 'string' ? loc.node.title : undefined;
  };
  const m = matchBranches(
    bList.map((l) => l.node),
    hList.map((l) => l.node),
    titleOf,
    (side, i) => (side === 'base' ? bd(bList[i]) : hd(hList[i])),
  );
  // One branch replaced by one other is the same branch edited (or renamed and edited): the composed
  // schema says what changed. A plain side that matches no branch was restructured into (or out of) an
  // allOf: again, only the composed schema can say what changed, branch by branch it is noise.
  if (m.removed.length === 1 && m.added.length === 1) {
    m.pairs.push([m.removed[0], m.added[0]]);
    m.removed = [];
    m.added = [];
  }
  const plainUnmatched = (!bHas || !hHas) && m.pairs.length === 0;
  for (const [i, j] of m.pairs) checkRefRename(cmp, site, bList[i], hList[j], cmp.ctx.base.deref(bList[i]), cmp.ctx.head.deref(hList[j]));
  const reorganized = m.removed.length > 0 || m.added.length > 0 || m.pairs.some(([i, j]) => bd(bList[i]) !== hd(hList[j]));
  if (!reorganized || plainUnmatched) return;
  // the composed schemas admit the same values: a reshuffle, whatever the branches look like
  if (cmp.ctx.baseView.digestOf(bn, b) === cmp.ctx.headView.digestOf(hn, h)) {
    if (oasdiff) {
      // a branch repeating an earlier one of its side is what oasdiff reports (added or removed allOf branch)
      const repeats = (list: Loc[], i: number, digest: (l: Loc) => string) => list.slice(0, i).some((l) => digest(l) === digest(list[i]));
      const removed = m.removed.filter((i) => repeats(bList, i, bd));
      const added = m.added.filter((j) => repeats(hList, j, hd));
      for (const i of removed) cmp.emit(ALL_OF_BRANCH, 'wider', site, bList[i], h, `allOf branch ${branchLabel(bList[i].node, i)} removed (it was listed twice)`, `allOf-${bd(bList[i])}`);
      for (const j of added) cmp.emit(ALL_OF_BRANCH, 'narrower', site, b, hList[j], `allOf branch ${branchLabel(hList[j].node, j)} added (it is listed twice)`, `allOf-${hd(hList[j])}`);
      const onlyRepeats = removed.length === m.removed.length && added.length === m.added.length && m.pairs.every(([i, j]) => bd(bList[i]) === hd(hList[j]));
      if (removed.length + added.length > 0 && onlyRepeats) return;
    }
    cmp.report(ALL_OF_REORGANIZED, site, b, h, 'allOf branches reorganized; the composed schema is unchanged');
    return;
  }
  for (const i of m.removed) cmp.emit(ALL_OF_BRANCH, 'wider', site, bList[i], h, `allOf branch ${branchLabel(bList[i].node, i)} removed`, `allOf-${bd(bList[i])}`);
  for (const j of m.added) cmp.emit(ALL_OF_BRANCH, 'narrower', site, b, hList[j], `allOf branch ${branchLabel(hList[j].node, j)} added`, `allOf-${hd(hList[j])}`);
}

/** The same `$ref`s and the same inline branches, as written, in any order (a multiset comparison). */
function sameBranchesAsWritten(b: Loc[], h: Loc[]): boolean {
  if (b.length !== h.length) return false;
  // "the same" is an equivalence, so pairing each base branch with the first free equal head branch
  // decides the multiset comparison; equality is decided without building any text (a branch's
  // canonical text only when a cycle makes the walk unsure)
  const free = h.map(() => true);
  for (const x of b) {
    const j = h.findIndex((y, i) => free[i] && sameBranch(x.node, y.node));
    if (j === -1) return false;
    free[j] = false;
  }
  return true;
}

const pureRef = (n: unknown): string | undefined => (isObject(n) && typeof n.$ref === 'string' && Object.keys(n).length === 1 ? n.$ref : undefined);

/** Whether two branches have the same key in the comparison above: the same pure `$ref`, else the same canonical JSON. */
function sameBranch(a: unknown, b: unknown): boolean {
  const ra = pureRef(a);
  const rb = pureRef(b);
  if (ra !== undefined || rb !== undefined) return ra === rb;
  const same = sameCanonically(a, b, new Set(), new Set());
  return same === undefined ? canonicalJson(a) === canonicalJson(b) : same;
}

/**
 * canonicalJson(a) === canonicalJson(b) without the texts: keys in any order, arrays in order, primitives by
 * their JSON (undefined reads as null there). undefined when a cycle is met (the texts mark cycles by where
 * the walk entered them: only they can say).
 */
function sameCanonically(a: unknown, b: unknown, onA: Set<object>, onB: Set<object>): boolean | undefined {
  const aObj = typeof a === 'object' && a !== null;
  const bObj = typeof b === 'object' && b !== null;
  if (!aObj || !bObj) return aObj === bObj && (JSON.stringify(a) ?? 'null') === (JSON.stringify(b) ?? 'null');
  if (onA.has(a) || onB.has(b)) return undefined;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  onA.add(a);
  onB.add(b);
  try {
    if (Array.isArray(a)) {
      const bb = b as unknown[];
      if (a.length !== bb.length) return false;
      for (let i = 0; i < a.length; i++) {
        const same = sameCanonically(a[i], bb[i], onA, onB);
        if (same !== true) return same;
      }
      return true;
    }
    const ao = a as Record<string, unknown>;
    const bo = b as Record<string, unknown>;
    const keys = Object.keys(ao);
    if (keys.length !== Object.keys(bo).length) return false;
    for (const k of keys) if (!Object.prototype.hasOwnProperty.call(bo, k)) return false;
    for (const k of keys) {
      const same = sameCanonically(ao[k], bo[k], onA, onB);
      if (same !== true) return same;
    }
    return true;
  } finally {
    onA.delete(a);
    onB.delete(b);
  }
}

/** Which branch declares which property (shallow, refs followed once): tells a property move apart. */
function ownPropertyNames(cmp: SchemaComparer, list: Loc[], side: 'base' | 'head'): string {
  const docs = side === 'base' ? cmp.ctx.base : cmp.ctx.head;
  return list
    .map((l) => {
      const n = docs.deref(l).node;
      const key = isObject(l.node) && typeof l.node.$ref === 'string' ? l.node.$ref : '';
      return `${key}:${isObject(n) && isObject(n.properties) ? Object.keys(n.properties).sort().join(',') : ''}`;
    })
    .sort()
    .join('|');
}

/**
 * A `$ref` on both sides naming different components with the same content: a rename. Reported once per
 * pair of components (the pointers are the components', not the operation's).
 */
export function checkRefRename(cmp: SchemaComparer, site: Site, rawBase: Loc, rawHead: Loc, b: Loc, h: Loc): void {
  const bRef = isObject(rawBase.node) && typeof rawBase.node.$ref === 'string' ? rawBase.node.$ref : undefined;
  const hRef = isObject(rawHead.node) && typeof rawHead.node.$ref === 'string' ? rawHead.node.$ref : undefined;
  if (bRef === undefined || hRef === undefined || refName(rawBase.node) === refName(rawHead.node)) return;
  if (cmp.ctx.baseView.digestOf(b.node, b) !== cmp.ctx.headView.digestOf(h.node, h)) return;
  cmp.report(SCHEMA_REF_RENAMED, site, b, h, `${refName(rawBase.node)} renamed to ${refName(rawHead.node)} (same content)`);
}

/**
 * One side a plain schema, the other a pure `oneOf`/`anyOf` wrapper (nothing else constraining): compare
 * the plain schema with its matching branch (same content, else the only branch of the same type) and
 * report the other branches as added or removed — instead of "oneOf added" plus every keyword of the plain
 * schema "removed". Returns whether it handled the pair.
 */
export function checkCompositionWrapping(cmp: SchemaComparer, site: Site, b: Loc, h: Loc): boolean {
  const bn = nodeOf(b);
  const hn = nodeOf(h);
  for (const [key, family] of [
    ['oneOf', ONE_OF_BRANCH],
    ['anyOf', ANY_OF_BRANCH],
  ] as Array<[string, KeywordFamily]>) {
    const bList = Array.isArray(bn[key]) ? (bn[key] as unknown[]) : undefined;
    const hList = Array.isArray(hn[key]) ? (hn[key] as unknown[]) : undefined;
    if (!!bList === !!hList) continue;
    const wrapperIsHead = !!hList;
    const wrapper = wrapperIsHead ? h : b;
    const plain = wrapperIsHead ? b : h;
    if (vacuousOn(cmp, wrapperIsHead ? 'head' : 'base', nodeOf(wrapper), wrapper, key)) continue;
    if (!onlyAnnotationsBesides(nodeOf(wrapper), key)) {
      // a wrapper that also states its `type`: only the comparison by content applies (the plain schema
      // against the union of the branches), and only when the head introduced it
      if (!onlyAnnotationsBesides(nodeOf(wrapper), key, true) || !wrapperIsHead) continue;
      if (Array.isArray(nodeOf(b).oneOf) || Array.isArray(nodeOf(b).anyOf)) continue;
      if (!compareWithUnion(cmp, site, key as 'oneOf' | 'anyOf', b, h, true)) continue;
      return true;
    }
    const plainNode = nodeOf(plain);
    if (Array.isArray(plainNode.oneOf) || Array.isArray(plainNode.anyOf)) continue;
    const list = (wrapperIsHead ? hList : bList)!;
    const at = childLoc(wrapper, key);
    const view = wrapperIsHead ? cmp.ctx.headView : cmp.ctx.baseView;
    const docs = wrapperIsHead ? cmp.ctx.head : cmp.ctx.base;
    const branches = list.map((x, i) => childLoc(at, i, x));
    const plainDigest = (wrapperIsHead ? cmp.ctx.baseView : cmp.ctx.headView).digestOf(plain.node, plain);
    let match = branches.findIndex((l) => view.digestOf(l.node, l) === plainDigest);
    if (match === -1) {
      const typeOf = (n: unknown) => (isObject(n) ? JSON.stringify(n.type ?? (n.properties ? 'object' : undefined)) : undefined);
      const plainType = typeOf(plainNode);
      const sameType = branches.filter((l) => typeOf(docs.deref(l).node) === plainType);
      if (plainType === undefined || sameType.length === 0) continue;
      if (sameType.length > 1) {
        // several object branches and none is the former schema: compare by content — the plain schema
        // against what the branches describe together — so a property every branch still carries (or one
        // branch adds) is not "removed"; the keyword itself is reported once
        // (only when the head introduced the oneOf: narrowing a union to one plain schema is the keyword's removal)
        if (!wrapperIsHead || !compareWithUnion(cmp, site, key as 'oneOf' | 'anyOf', b, h, true)) continue;
        return true;
      }
      match = branches.indexOf(sameType[0]);
    }
    const label = { ...site, label: `${site.label}<${key} ${branchLabel(list[match], match)}>` };
    if (wrapperIsHead) cmp.compare(label, b, branches[match]);
    else cmp.compare(label, branches[match], h);
    branches.forEach((l, i) => {
      if (i === match) return;
      // a branch more in the head's oneOf admits more values; a branch fewer in the head, fewer
      if (wrapperIsHead) cmp.emit(family, 'wider', site, b, l, `${key} branch ${branchLabel(list[i], i)} added around the former schema`, `${key}-${view.digestOf(l.node, l)}`);
      else cmp.emit(family, 'narrower', site, l, h, `${key} branch ${branchLabel(list[i], i)} removed; the schema is now its former ${branchLabel(list[match], match)} branch`, `${key}-${view.digestOf(l.node, l)}`);
    });
    return true;
  }
  return false;
}
