import { childLoc, isObject, type Loc, type SpecDocuments, type SpecFlavor } from './document';

/**
 * A flavour-neutral view of the operations of one spec: Swagger 2.0 body/formData parameters become a
 * request body, its non-body parameters and headers get a schema-shaped node, responses get content
 * per media type. Views point back at the original nodes (Loc), so every change carries a real pointer.
 */

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

export interface ParameterView {
  /** Matching key: "path:<position>" (so renaming a path parameter is not a change), else "<in>:<name>". */
  key: string;
  name: string;
  in: string;
  /** Path parameters always are (OAS: `required: true` is mandatory for them), whatever is written. */
  required: boolean;
  /** `required: true` as written: what oasdiff reads (a path parameter without it counts as optional there). */
  requiredAsWritten: boolean;
  deprecated: boolean;
  /** `x-sunset` of the parameter (a YAML date becomes its ISO day). */
  sunset?: string;
  allowEmptyValue: boolean;
  /** style/explode (OAS 3) or collectionFormat (Swagger 2), normalized for comparison. */
  serialization: string;
  loc: Loc;
  /** Where the parameter is listed in the operation (or path item), before `$ref` resolution. */
  listedAt: Loc;
  schema: Loc;
}

export interface BodyView {
  required: boolean;
  loc: Loc;
  /** media type → schema (an empty node when the media type has no schema). */
  content: Map<string, Loc>;
}

export interface HeaderView {
  name: string;
  required: boolean;
  deprecated: boolean;
  loc: Loc;
  schema: Loc;
}

export interface ResponseView {
  status: string;
  loc: Loc;
  content: Map<string, Loc>;
  headers: Map<string, HeaderView>;
}

export interface SecurityRequirementView {
  /** Sorted scheme names joined with "+": one alternative of the OR-list. */
  key: string;
  scopes: Map<string, string[]>;
}

export interface OperationView {
  /** "GET /users/{}" for paths, "WEBHOOK name POST" for webhooks, "CALLBACK <operation> name <expression> POST" for callbacks. */
  key: string;
  /** What a reader sees: "GET /users/{id}" as written in this spec. */
  display: string;
  /** Webhooks and callbacks: the API sends the request and the subscriber answers (directions flip). */
  webhook: boolean;
  callback?: true;
  /** For a callback: the key of the operation that declares it. */
  owner?: string;
  loc: Loc;
  operationId?: string;
  tags: string[];
  deprecated: boolean;
  sunset?: string;
  /** `x-stability-level` (draft, alpha, beta, stable), as oasdiff reads it. */
  stability?: string;
  parameters: Map<string, ParameterView>;
  requestBody?: BodyView;
  responses: Map<string, ResponseView>;
  /** Effective requirements (operation-level, else document-level); [] or one empty requirement = public. */
  security: SecurityRequirementView[];
  securityLoc: Loc;
}

export interface SpecModel {
  flavor: SpecFlavor;
  docs: SpecDocuments;
  operations: Map<string, OperationView>;
  basePath?: string;
  /** Document-level server URLs (OAS 3), sorted. */
  servers: string[];
  /** Security schemes by name (components.securitySchemes / securityDefinitions), resolved. */
  securitySchemes: Map<string, Loc>;
}

/** "/users/{userId}/keys/{id}" → "/users/{}/keys/{}", plus the position of each parameter name. */
export function normalizePathTemplate(template: string): { normalized: string; positions: Map<string, number> } {
  const positions = new Map<string, number>();
  let index = 0;
  // By indexOf, as /\{([^}]*)\}/g would match: that regex retried every `{` of a key without a `}`
  // to the end of the key (quadratic: a path key of 40,000 `{` took 6.5 s to compare).
  let normalized = '';
  let at = 0;
  for (;;) {
    const open = template.indexOf('{', at);
    const close = open < 0 ? -1 : template.indexOf('}', open + 1);
    if (close < 0) break;
    positions.set(template.slice(open + 1, close), index++);
    normalized += `${template.slice(at, open)}{}`;
    at = close + 1;
  }
  return { normalized: normalized + template.slice(at), positions };
}

const SCHEMA_KEYWORDS_OF_SWAGGER2_PARAMS = [
  'type', 'format', 'items', 'enum', 'default', 'maximum', 'exclusiveMaximum', 'minimum', 'exclusiveMinimum',
  'maxLength', 'minLength', 'pattern', 'maxItems', 'minItems', 'uniqueItems', 'multipleOf', 'x-nullable',
];

/** Swagger 2.0 non-body parameters and headers carry their schema keywords inline: lift them into a schema node at the same pointer. */
function inlineSchemaOf(loc: Loc): Loc {
  const node = loc.node as Record<string, unknown>;
  const schema: Record<string, unknown> = {};
  for (const k of SCHEMA_KEYWORDS_OF_SWAGGER2_PARAMS) if (node[k] !== undefined) schema[k] = node[k];
  return { file: loc.file, ptr: loc.ptr, node: schema };
}

const EMPTY = (at: Loc, key: string): Loc => ({ file: at.file, ptr: `${at.ptr}/${key}`, node: {}, synthetic: true });

function firstContentSchema(docs: SpecDocuments, at: Loc): Loc | undefined {
  const content = childLoc(at, 'content');
  if (!isObject(content.node)) return undefined;
  const first = Object.keys(content.node).sort()[0];
  if (first === undefined) return undefined;
  const media = docs.deref(childLoc(content, first));
  const schema = childLoc(media, 'schema');
  return schema.node === undefined ? EMPTY(media, 'schema') : schema;
}

const IGNORED_HEADERS = new Set(['accept', 'content-type', 'authorization']);

const normalizeMediaType = (m: string): string => m.toLowerCase().replace(/\s+/g, '');

export function buildModel(docs: SpecDocuments, flavor: SpecFlavor): SpecModel {
  const root = docs.root;
  const rootNode = root.node as Record<string, unknown>;
  const swagger2 = flavor === 'swagger-2.0';
  const operations = new Map<string, OperationView>();
  const globalConsumes = Array.isArray(rootNode.consumes) ? (rootNode.consumes as string[]) : undefined;
  const globalProduces = Array.isArray(rootNode.produces) ? (rootNode.produces as string[]) : undefined;
  const rootSecurity = childLoc(root, 'security');

  const addPathItems = (container: Loc, webhook: boolean) => {
    if (!isObject(container.node)) return;
    for (const name of Object.keys(container.node)) {
      if (!webhook && !name.startsWith('/')) continue; // x- extensions
      const item = docs.deref(childLoc(container, name));
      if (!isObject(item.node)) continue;
      const { normalized, positions } = webhook ? { normalized: name, positions: new Map<string, number>() } : normalizePathTemplate(name);
      for (const method of HTTP_METHODS) {
        const op = childLoc(item, method);
        if (!isObject(op.node)) continue;
        const key = webhook ? `WEBHOOK ${name} ${method.toUpperCase()}` : `${method.toUpperCase()} ${normalized}`;
        const display = webhook ? `webhook ${name} (${method.toUpperCase()})` : `${method.toUpperCase()} ${name}`;
        const view = buildOperation(op, item, key, display, webhook, positions);
        operations.set(key, view);
        if (!swagger2) addCallbacks(view);
      }
    }
  };

  /** OAS 3 callbacks: requests the API makes to a URL the client gave; compared like webhooks. */
  const addCallbacks = (owner: OperationView) => {
    const callbacks = childLoc(owner.loc, 'callbacks');
    if (!isObject(callbacks.node)) return;
    for (const name of Object.keys(callbacks.node)) {
      const cb = docs.deref(childLoc(callbacks, name));
      if (!isObject(cb.node)) continue;
      for (const expression of Object.keys(cb.node)) {
        if (expression.startsWith('x-')) continue;
        const item = docs.deref(childLoc(cb, expression));
        if (!isObject(item.node)) continue;
        for (const method of HTTP_METHODS) {
          const op = childLoc(item, method);
          if (!isObject(op.node)) continue;
          const key = `CALLBACK ${owner.key} ${name} ${expression} ${method.toUpperCase()}`;
          const view = buildOperation(op, item, key, `callback ${name} of ${owner.display} (${method.toUpperCase()} ${expression})`, true, new Map());
          operations.set(key, { ...view, callback: true, owner: owner.key });
        }
      }
    }
  };

  const buildOperation = (op: Loc, item: Loc, key: string, display: string, webhook: boolean, positions: Map<string, number>): OperationView => {
    const o = op.node as Record<string, unknown>;
    const parameters = new Map<string, ParameterView>();
    const formData: ParameterView[] = [];
    let body: BodyView | undefined;
    const consumes = (Array.isArray(o.consumes) ? (o.consumes as string[]) : globalConsumes) ?? ['application/json'];
    const produces = (Array.isArray(o.produces) ? (o.produces as string[]) : globalProduces) ?? ['application/json'];
    for (const owner of [item, op]) {
      const list = childLoc(owner, 'parameters');
      if (!Array.isArray(list.node)) continue;
      list.node.forEach((_p, i) => {
        const listedAt = childLoc(list, i);
        const p = docs.deref(listedAt);
        if (!isObject(p.node)) return;
        const pn = p.node;
        const name = String(pn.name ?? '');
        const where = String(pn.in ?? '');
        // OAS 3: header parameters named Accept, Content-Type or Authorization "SHALL be ignored"
        if (!swagger2 && where === 'header' && IGNORED_HEADERS.has(name.toLowerCase())) return;
        if (swagger2 && where === 'body') {
          const schema = childLoc(p, 'schema');
          const content = new Map<string, Loc>();
          for (const m of consumes) content.set(normalizeMediaType(m), schema.node === undefined ? EMPTY(p, 'schema') : schema);
          body = { required: pn.required === true, loc: p, content };
          return;
        }
        const schema = swagger2
          ? inlineSchemaOf(p)
          : pn.schema !== undefined
            ? childLoc(p, 'schema')
            : (firstContentSchema(docs, p) ?? EMPTY(p, 'schema'));
        const serialization = swagger2 ? swagger2Serialization(where, pn) : oas3Serialization(where, pn.style, pn.explode);
        const keyOf = where === 'path' && positions.has(name) ? `path:${positions.get(name)}` : `${where}:${where === 'header' ? name.toLowerCase() : name}`;
        const view: ParameterView = {
          key: keyOf,
          name,
          in: where,
          required: where === 'path' || pn.required === true,
          requiredAsWritten: pn.required === true,
          deprecated: pn.deprecated === true,
          sunset: sunsetOf(pn),
          allowEmptyValue: pn.allowEmptyValue === true,
          serialization,
          loc: p,
          listedAt,
          schema,
        };
        if (swagger2 && where === 'formData') {
          formData.push(view);
          return;
        }
        parameters.set(keyOf, view); // operation-level parameters override path-level ones with the same key
      });
    }
    if (formData.length > 0) body = formBody(op, formData, consumes);
    if (!swagger2 && o.requestBody !== undefined) {
      const rb = docs.deref(childLoc(op, 'requestBody'));
      if (isObject(rb.node)) body = { required: rb.node.required === true, loc: rb, content: contentOf(rb) };
    }
    const responses = new Map<string, ResponseView>();
    const responsesLoc = childLoc(op, 'responses');
    if (isObject(responsesLoc.node)) {
      for (const status of Object.keys(responsesLoc.node)) {
        if (status.startsWith('x-')) continue;
        const r = docs.deref(childLoc(responsesLoc, status));
        if (!isObject(r.node)) continue;
        let content: Map<string, Loc>;
        if (swagger2) {
          content = new Map();
          if (r.node.schema !== undefined) for (const m of produces) content.set(normalizeMediaType(m), childLoc(r, 'schema'));
        } else content = contentOf(r);
        const headers = new Map<string, HeaderView>();
        const hs = childLoc(r, 'headers');
        if (isObject(hs.node)) {
          for (const hn of Object.keys(hs.node)) {
            const h = docs.deref(childLoc(hs, hn));
            if (!isObject(h.node)) continue;
            const schema = swagger2 ? inlineSchemaOf(h) : h.node.schema !== undefined ? childLoc(h, 'schema') : (firstContentSchema(docs, h) ?? EMPTY(h, 'schema'));
            headers.set(hn.toLowerCase(), { name: hn, required: h.node.required === true, deprecated: h.node.deprecated === true, loc: h, schema });
          }
        }
        responses.set(status.toUpperCase(), { status, loc: r, content, headers });
      }
    }
    const ownSecurity = childLoc(op, 'security');
    const securityLoc = Array.isArray(ownSecurity.node) ? ownSecurity : rootSecurity;
    return {
      key,
      display,
      webhook,
      loc: op,
      operationId: typeof o.operationId === 'string' ? o.operationId : undefined,
      tags: Array.isArray(o.tags) ? (o.tags as unknown[]).map(String) : [],
      deprecated: o.deprecated === true,
      sunset: sunsetOf(o),
      stability: o['x-stability-level'] === undefined ? undefined : String(o['x-stability-level']),
      parameters,
      requestBody: body,
      responses,
      security: securityOf(securityLoc.node),
      securityLoc,
    };
  };

  const contentOf = (owner: Loc): Map<string, Loc> => {
    const out = new Map<string, Loc>();
    const content = childLoc(owner, 'content');
    if (!isObject(content.node)) return out;
    for (const m of Object.keys(content.node)) {
      const media = docs.deref(childLoc(content, m));
      const schema = childLoc(media, 'schema');
      out.set(normalizeMediaType(m), schema.node === undefined ? EMPTY(media, 'schema') : schema);
    }
    return out;
  };

  addPathItems(childLoc(root, 'paths'), false);
  if (!swagger2) addPathItems(childLoc(root, 'webhooks'), true);

  const securitySchemes = new Map<string, Loc>();
  const schemesLoc = swagger2 ? childLoc(root, 'securityDefinitions') : childLoc(childLoc(root, 'components'), 'securitySchemes');
  if (isObject(schemesLoc.node)) for (const n of Object.keys(schemesLoc.node)) securitySchemes.set(n, docs.deref(childLoc(schemesLoc, n)));

  return {
    flavor,
    docs,
    operations,
    basePath: swagger2 && typeof rootNode.basePath === 'string' ? rootNode.basePath : undefined,
    servers: Array.isArray(rootNode.servers) ? (rootNode.servers as unknown[]).map((x) => (isObject(x) ? String(x.url ?? '') : '')).sort() : [],
    securitySchemes,
  };
}

/** `x-sunset` as text: YAML parsers may hand a bare date over as a Date. */
export function sunsetOf(node: Record<string, unknown>): string | undefined {
  const v = node['x-sunset'];
  if (v === undefined || v === null) return undefined;
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? String(v) : v.toISOString().slice(0, 10);
  return String(v);
}

/** The x-stability-level values oasdiff knows, least stable first. */
export const STABILITY_LEVELS = ['draft', 'alpha', 'beta', 'stable'] as const;

function defaultStyle(where: string): string {
  return where === 'query' || where === 'cookie' ? 'form' : 'simple';
}

function oas3Serialization(where: string, style: unknown, explode: unknown): string {
  const s = typeof style === 'string' ? style : defaultStyle(where);
  return `${s}/${typeof explode === 'boolean' ? explode : s === 'form'}`;
}

/** Swagger 2.0 collectionFormat expressed as the OAS 3 style/explode it became, so a 2.0 → 3.x migration compares equal. */
function swagger2Serialization(where: string, p: Record<string, unknown>): string {
  if (p.type !== 'array') return oas3Serialization(where, undefined, undefined);
  const form = where === 'query' || where === 'formData';
  switch (p.collectionFormat ?? 'csv') {
    case 'multi':
      return oas3Serialization(where, 'form', true);
    case 'ssv':
      return oas3Serialization(where, 'spaceDelimited', false);
    case 'pipes':
      return oas3Serialization(where, 'pipeDelimited', false);
    case 'tsv':
      return 'tsv/false';
    default:
      return oas3Serialization(where, form ? 'form' : 'simple', false);
  }
}

/** Swagger 2.0 formData parameters are the properties of one form body. */
function formBody(op: Loc, params: ParameterView[], consumes: string[]): BodyView {
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  for (const p of params) {
    properties[p.name] = p.schema.node;
    if (p.required) required.push(p.name);
  }
  const schema: Loc = { file: op.file, ptr: `${op.ptr}/parameters`, node: { type: 'object', properties, required } };
  const media = consumes.filter((m) => /form/.test(m));
  const content = new Map<string, Loc>();
  for (const m of media.length > 0 ? media : ['application/x-www-form-urlencoded']) content.set(normalizeMediaType(m), schema);
  return { required: required.length > 0, loc: schema, content };
}

function securityOf(node: unknown): SecurityRequirementView[] {
  if (!Array.isArray(node)) return [];
  const out: SecurityRequirementView[] = [];
  for (const req of node) {
    if (!isObject(req)) continue;
    const names = Object.keys(req).sort();
    const scopes = new Map<string, string[]>();
    for (const n of names) scopes.set(n, Array.isArray(req[n]) ? (req[n] as unknown[]).map(String) : []);
    out.push({ key: names.join('+'), scopes });
  }
  return out;
}

/**
 * The instant an `x-sunset` names, or undefined when it is not a date. oasdiff accepts an RFC 3339 date
 * (2026-01-31) or date-time; so do we — `Date.parse` alone would also take "March 7" or "2026".
 */
export function sunsetTime(sunset: string | undefined): number | undefined {
  if (sunset === undefined || !/^\d{4}-\d{2}-\d{2}([Tt ].*)?$/.test(sunset)) return undefined;
  const t = Date.parse(sunset);
  return Number.isNaN(t) ? undefined : t;
}
