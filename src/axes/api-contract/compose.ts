import { childLoc, isObject, type Loc, type SpecDocuments } from './document';

/**
 * What a client sees of a schema, as opposed to how the document spells it. Two rewritings, both memoized
 * per parsed node (so a rewritten node has one identity, which keeps the "each pair once" cycle guard of
 * the comparison working):
 *
 * - **allOf is composed**: `allOf: [A, B]` (with A and B followed through `$ref`s, nested allOf flattened)
 *   becomes one schema — properties united, `required` united, types intersected. A property moving from
 *   one branch to another, or a branch renamed with the same content, composes to the same schema.
 * - **nullability by composition** (OAS 3.1): `oneOf`/`anyOf` of one schema and `{type: 'null'}` is that
 *   schema, nullable.
 *
 * And a content digest that follows `$ref`s and ignores annotations, so "identical content" never depends
 * on a component's name.
 */

/** Keywords that describe a schema without constraining its values. */
export const ANNOTATION_KEYWORDS = new Set(['description', 'title', 'example', 'examples', 'externalDocs', '$comment', 'deprecated', 'readOnly', 'writeOnly', 'default', 'xml', '$id', '$schema', '$anchor']);
const isAnnotation = (k: string) => ANNOTATION_KEYWORDS.has(k) || (k.startsWith('x-') && k !== 'x-nullable' && k !== 'x-extensible-enum');

const MAX_DEPTH = 32;

/** Only these keywords make a schema's view differ from the schema itself. */
const mayRewrite = (n: Record<string, unknown>): boolean => n.allOf !== undefined || n.oneOf !== undefined || n.anyOf !== undefined;

const isNullSchema = (n: unknown): boolean => isObject(n) && (n.type === 'null' || (Array.isArray(n.type) && n.type.length === 1 && n.type[0] === 'null')) && Object.keys(n).every((k) => k === 'type' || isAnnotation(k));

export class Composer {
  private readonly normalized = new Map<object, object>();
  private readonly digests = new Map<object, string>();
  /** Where a node that sits inside a composed schema really is (for change pointers). */
  private readonly origins = new Map<object, Pick<Loc, 'file' | 'ptr'>>();
  private readonly inProgress = new Set<object>();
  private readonly digesting = new Set<object>();
  private readonly combos = new Map<string, object>();
  private readonly comboMembers = new Map<object, unknown[]>();
  private readonly ids = new Map<object, number>();

  constructor(readonly docs: SpecDocuments) {}

  /** The real location of a node seen through a composed schema, else the location given. */
  relocate<T extends Pick<Loc, 'file' | 'ptr'>>(loc: T): T {
    const node = (loc as Partial<Loc>).node;
    if (typeof node !== 'object' || node === null) return loc;
    const o = this.origins.get(node);
    return o ? { ...loc, file: o.file, ptr: o.ptr } : loc;
  }

  /** The schema a client sees at a dereferenced location (the node itself when nothing is rewritten). */
  view(loc: Loc): Loc {
    const node = loc.node;
    if (!isObject(node) || !mayRewrite(node)) return loc;
    const out = this.normalize(loc, 0);
    return out === node ? loc : { ...loc, node: out };
  }

  private normalize(loc: Loc, depth: number): Record<string, unknown> {
    const node = loc.node as Record<string, unknown>;
    const cached = this.normalized.get(node);
    if (cached) return cached as Record<string, unknown>;
    if (depth > MAX_DEPTH || this.inProgress.has(node)) return node; // an allOf cycle: stop composing
    this.inProgress.add(node);
    let out: Record<string, unknown> = node;
    try {
      const nullable = this.nullableWrapper(loc);
      if (nullable) out = nullable;
      else if (Array.isArray(node.allOf) && node.allOf.length > 0) out = this.composeAllOf(loc, depth);
      // a oneOf/anyOf the schema's own type already satisfies constrains nothing a client sees
      const vacuous = (['oneOf', 'anyOf'] as const).find((key) => vacuousComposition(this.docs, out, loc, key));
      if (vacuous) {
        const { [vacuous]: _gone, ...rest } = out;
        out = rest;
        this.vacuous.set(out, vacuous);
      }
    } finally {
      this.inProgress.delete(node);
    }
    this.normalized.set(node, out);
    return out;
  }

  /** `oneOf|anyOf: [X, {type: null}]` with nothing else constraining → X, nullable. */
  private nullableWrapper(loc: Loc): Record<string, unknown> | undefined {
    const node = loc.node as Record<string, unknown>;
    for (const key of ['oneOf', 'anyOf'] as const) {
      const list = node[key];
      if (!Array.isArray(list) || list.length < 2) continue;
      if (!Object.keys(node).every((k) => k === key || isAnnotation(k) || k === 'nullable')) continue;
      const at = childLoc(loc, key);
      const branches = list.map((b, i) => this.docs.deref(childLoc(at, i, b)));
      const rest = branches.filter((b) => !isNullSchema(b.node));
      if (rest.length !== 1 || rest.length === branches.length || !isObject(rest[0].node)) continue;
      const inner = this.normalize(rest[0], 1);
      const out: Record<string, unknown> = { ...inner, nullable: true };
      for (const k of Object.keys(node)) if (k !== key && isAnnotation(k) && out[k] === undefined) out[k] = node[k];
      this.adoptChildren(rest[0], inner);
      return out;
    }
    return undefined;
  }

  /** The children of a rewritten node keep pointing at where they are written. */
  private adoptChildren(from: Loc, source: Record<string, unknown>): void {
    const props = source.properties;
    if (!isObject(props)) return;
    const propsLoc = childLoc(from, 'properties');
    for (const name of Object.keys(props)) {
      const v = props[name];
      if (typeof v === 'object' && v !== null && !this.origins.has(v)) this.origins.set(v, childLoc(propsLoc, name));
    }
  }

  private composeAllOf(loc: Loc, depth: number): Record<string, unknown> {
    const node = loc.node as Record<string, unknown>;
    const { allOf: _allOf, ...own } = node;
    const parts: Array<{ loc: Loc; node: Record<string, unknown> }> = [{ loc, node: own }];
    const list = childLoc(loc, 'allOf');
    (node.allOf as unknown[]).forEach((b, i) => {
      const at = this.docs.deref(childLoc(list, i, b));
      if (!isObject(at.node)) return;
      parts.push({ loc: at, node: this.normalize(at, depth + 1) });
    });
    const out: Record<string, unknown> = {};
    const properties: Record<string, unknown[]> = {};
    const required: string[] = [];
    const types: Array<Set<string>> = [];
    let anyNullableDeclared = false;
    let allBranchesNullable = parts.length > 1;
    parts.forEach((p, idx) => {
      const n = p.node;
      const props = n.properties;
      if (isObject(props)) {
        const propsLoc = childLoc(p.loc, 'properties');
        for (const name of Object.keys(props)) {
          const v = props[name];
          (properties[name] ??= []).push(v);
          if (typeof v === 'object' && v !== null && !this.origins.has(v)) this.origins.set(v, this.relocate(childLoc(propsLoc, name, v)));
        }
      }
      if (Array.isArray(n.required)) for (const r of n.required) if (typeof r === 'string' && !required.includes(r)) required.push(r);
      const t = n.type;
      if (t !== undefined) types.push(new Set((Array.isArray(t) ? t : [t]).map(String)));
      const nullable = n.nullable === true || n['x-nullable'] === true || (Array.isArray(t) && t.includes('null')) || t === 'null';
      if (idx === 0) anyNullableDeclared = nullable;
      else allBranchesNullable &&= nullable;
      for (const k of Object.keys(n)) {
        if (k === 'properties' || k === 'required' || k === 'type' || k === 'nullable' || k === 'x-nullable') continue;
        if (k === 'additionalProperties' || k === 'unevaluatedProperties') {
          if (n[k] === false || out[k] === undefined) out[k] = n[k];
          continue;
        }
        if (out[k] === undefined) out[k] = n[k];
      }
    });
    const names = Object.keys(properties);
    if (names.length > 0) {
      const merged: Record<string, unknown> = {};
      for (const name of names) {
        merged[name] = this.combine(properties[name]);
      }
      out.properties = merged;
    }
    if (required.length > 0) out.required = required;
    if (types.length > 0) {
      let acc = types[0];
      for (const t of types.slice(1)) acc = intersectTypes(acc, t);
      acc.delete('null');
      const list = [...acc];
      out.type = list.length === 1 ? list[0] : list;
    }
    if (anyNullableDeclared || allBranchesNullable) out.nullable = true;
    return out;
  }

  private readonly unions = new Map<object, Record<string, unknown>>();
  /** Views from which a vacuous oneOf/anyOf was dropped, and which keyword. */
  private readonly vacuous = new Map<object, 'oneOf' | 'anyOf'>();

  /** Whether this view dropped `key` as vacuous (it is written there, but constrains nothing). */
  droppedAsVacuous(view: unknown, key: string): boolean {
    return typeof view === 'object' && view !== null && this.vacuous.get(view) === key;
  }

  /**
   * What a client can rely on across the branches of a `oneOf`/`anyOf` whose own keywords are annotations or
   * `type` (the other side of the comparison being a plain object schema): the wrapper's own keywords, the
   * properties any branch declares (the first branch declaring one wins; each keeps pointing where it is
   * written), `required` = its own plus what every branch requires, `type` its own or the branches' common one.
   * Memoized per node, so the pair guard of the comparison sees one identity.
   */
  unionOfBranches(loc: Loc, key: 'oneOf' | 'anyOf'): Record<string, unknown> | undefined {
    const node = loc.node as Record<string, unknown>;
    const cached = this.unions.get(node);
    if (cached) return cached;
    const list = node[key];
    if (!Array.isArray(list) || list.length === 0) return undefined;
    const at = childLoc(loc, key);
    const branches = list.map((b, i) => this.docs.deref(childLoc(at, i, b))).map((b) => ({ loc: b, node: isObject(b.node) ? this.normalize(b, 1) : undefined }));
    if (branches.some((b) => b.node === undefined || !isObject(b.node.properties))) return undefined;
    const { [key]: _list, discriminator: _d, ...own } = node;
    const out: Record<string, unknown> = { ...own };
    const properties: Record<string, unknown> = { ...(isObject(node.properties) ? node.properties : {}) };
    let common: Set<string> | undefined;
    const types = new Set<string>();
    for (const b of branches) {
      const n = b.node!;
      const props = n.properties as Record<string, unknown>;
      const propsLoc = childLoc(b.loc, 'properties');
      for (const name of Object.keys(props)) {
        if (name in properties) continue;
        properties[name] = props[name];
        const v = props[name];
        if (typeof v === 'object' && v !== null && !this.origins.has(v)) this.origins.set(v, this.relocate(childLoc(propsLoc, name, v)));
      }
      const req = new Set(Array.isArray(n.required) ? n.required.filter((r): r is string => typeof r === 'string') : []);
      common = common === undefined ? req : new Set([...common].filter((r) => req.has(r)));
      types.add(JSON.stringify(n.type ?? 'object'));
    }
    out.properties = properties;
    const required = [...new Set([...(Array.isArray(node.required) ? node.required : []), ...(common ?? [])])];
    if (required.length > 0) out.required = required;
    if (out.type === undefined && types.size === 1) out.type = JSON.parse([...types][0]);
    this.unions.set(node, out);
    return out;
  }

  private digestOfMap(map: unknown): string {
    if (!isObject(map)) return this.digestOf(map);
    let text = '{';
    for (const k of Object.keys(map).sort()) text += `${JSON.stringify(k)}:${this.digestOf(map[k])},`;
    return `${text}}`;
  }

  /**
   * One schema for a property several branches define: the single one when they are the same object, else
   * `allOf` of them. Combinations are shared by their members' identities (and nested ones flattened), so
   * composing deep chains builds each combination once — fresh objects at every level would defeat the
   * "each pair of nodes once" guard and grow with the number of paths.
   */
  private combine(members: unknown[]): unknown {
    const flat: unknown[] = [];
    for (const m of members) {
      const parts = typeof m === 'object' && m !== null ? this.comboMembers.get(m) : undefined;
      for (const x of parts ?? [m]) if (!flat.includes(x)) flat.push(x);
    }
    if (flat.length === 1) return flat[0];
    const key = flat.map((x) => this.idOf(x)).join(',');
    let combo = this.combos.get(key);
    if (!combo) {
      combo = { allOf: flat };
      this.combos.set(key, combo);
      this.comboMembers.set(combo, flat);
    }
    return combo;
  }

  private idOf(x: unknown): string {
    if (typeof x !== 'object' || x === null) return `=${JSON.stringify(x)}`;
    let id = this.ids.get(x);
    if (id === undefined) {
      id = this.ids.size + 1;
      this.ids.set(x, id);
    }
    return String(id);
  }

  /**
   * A digest of what a schema admits: `$ref`s followed, allOf composed, annotations ignored, keys sorted.
   * Memoized per node; a reference cycle contributes a fixed marker.
   */
  digestOf(value: unknown, at?: Loc): string {
    if (typeof value !== 'object' || value === null) return JSON.stringify(value) ?? 'null';
    const cached = this.digests.get(value);
    if (cached) return cached;
    const loc: Loc = at ?? { file: this.docs.rootFile, ptr: '', node: value };
    let node: unknown = value;
    if (isObject(value) && typeof value.$ref === 'string') node = this.docs.deref(loc).node;
    if (typeof node !== 'object' || node === null) return JSON.stringify(node) ?? 'null';
    if (this.digesting.has(value)) return '@cycle';
    this.digesting.add(value);
    let text: string;
    try {
      if (Array.isArray(node)) text = `[${node.map((v) => this.digestOf(v)).join(',')}]`;
      else {
        const obj = node as Record<string, unknown>;
        const view = mayRewrite(obj) ? this.normalize({ ...loc, node }, 0) : obj;
        const keys = Object.keys(view).sort();
        text = '{';
        for (const k of keys) {
          if (isAnnotation(k)) continue;
          const v = view[k];
          text += `${k}:${k === 'enum' || k === 'required' ? canonicalSet(v) : NAME_MAPS.has(k) ? this.digestOfMap(v) : this.digestOf(v)},`;
        }
        text += '}';
      }
    } finally {
      this.digesting.delete(value);
    }
    const digest = text.length <= 40 ? text : hash53(text);
    this.digests.set(value, digest);
    return digest;
  }
}

/**
 * cyrb53, a fast 53-bit string hash (two 32-bit multiplicative lanes) plus the length: a digest only has to
 * tell apart the schemas of two documents, and sha1 through node:crypto cost a tenth of a large diff.
 */
function hash53(text: string): string {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return `#${(4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(36)}.${text.length.toString(36)}`;
}

/** Keywords whose value maps names to schemas: the names are data, not keywords to filter. */
const NAME_MAPS = new Set(['properties', 'patternProperties', 'dependentSchemas', '$defs', 'definitions']);

/** enum and required are sets: their order is not part of the content. */
function canonicalSet(v: unknown): string {
  return Array.isArray(v) ? `[${v.map((x) => JSON.stringify(x)).sort().join(',')}]` : JSON.stringify(v);
}

function intersectTypes(a: Set<string>, b: Set<string>): Set<string> {
  const out = new Set<string>();
  for (const t of a) if (b.has(t)) out.add(t);
  if (a.has('integer') && b.has('number')) out.add('integer');
  if (b.has('integer') && a.has('number')) out.add('integer');
  return out;
}

/** JSON types a branch that constrains nothing but `type` admits ('*': anything); undefined when it constrains more. */
function typeOnlyBranch(node: unknown): Set<string> | undefined {
  if (node === true) return new Set(['*']);
  if (!isObject(node)) return undefined;
  for (const k of Object.keys(node)) {
    if (k === 'type' || isAnnotation(k)) continue;
    if (k === 'items' && (node.items === true || (isObject(node.items) && Object.keys(node.items).length === 0))) continue;
    return undefined;
  }
  if (node.type === undefined) return new Set(['*']);
  return new Set((Array.isArray(node.type) ? node.type : [node.type]).map(String));
}

/**
 * A `oneOf`/`anyOf` that constrains nothing: the schema's own `type` already picks a branch that says nothing
 * but a type (an envelope's `result: {anyOf: [{type: object}, {type: array}]}` once another allOf branch fixed
 * `result` to an object). For oneOf exactly one branch may be so picked.
 */
export function vacuousComposition(docs: SpecDocuments, node: Record<string, unknown>, at: Pick<Loc, 'file' | 'ptr'>, key: 'oneOf' | 'anyOf'): boolean {
  const list = node[key];
  if (!Array.isArray(list) || list.length === 0) return false;
  const t = node.type;
  if (t === undefined) return false;
  const own = new Set((Array.isArray(t) ? t : [t]).map(String));
  own.delete('null');
  if (own.size === 0) return false;
  const listLoc: Loc = { file: at.file, ptr: `${at.ptr}/${key}`, node: list };
  let implied = 0;
  list.forEach((x, i) => {
    const types = typeOnlyBranch(docs.deref(childLoc(listLoc, i, x)).node);
    if (types !== undefined && (types.has('*') || [...own].every((o) => types.has(o) || (o === 'integer' && types.has('number'))))) implied++;
  });
  return key === 'oneOf' ? implied === 1 : implied >= 1;
}
