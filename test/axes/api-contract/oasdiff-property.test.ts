/**
 * Property test of the oasdiff finding model: spec pairs generated from a seed by known edits. Each rule
 * edit must print exactly its oasdiff id set, whatever neutral refactors (a component renamed, a path
 * parameter renamed, a property moved between allOf branches, an inline schema moved to a component,
 * properties reordered, a vacuous envelope anyOf) are applied on top; the refactors alone print nothing
 * graded ERR or WARN under either profile.
 */
import { diffSpecs } from '../../../src/axes/api-contract/diff';
import { loadSpecFromTexts } from '../../../src/axes/api-contract/document';
import { applyProfile } from '../../../src/axes/api-contract/profile';
import { needsDecision } from '../../../src/axes/types';
import { mulberry32 } from '../../support/prng';

type Json = Record<string, any>;

const rng = mulberry32;

const WORDS = ['title', 'isbn', 'pages', 'genre', 'author', 'year', 'shelf', 'price', 'label', 'note'];

/** A spec of n resources: GET /rK/{id} (query limit, header X-Mode, 200 with headers and an Item) and POST /rK (a New body). */
function baseSpec(seed: number): Json {
  const r = rng(seed);
  const n = 1 + Math.floor(r() * 3);
  const s: Json = { openapi: r() < 0.5 ? '3.0.3' : '3.1.0', info: { title: 'gen', version: '1' }, paths: {}, components: { schemas: { Meta: { type: 'object', properties: { created: { type: 'string' } } } } } };
  for (let k = 0; k < n; k++) {
    const names = WORDS.filter(() => r() < 0.6);
    while (names.length < 3) names.push(WORDS.find((w) => !names.includes(w))!);
    const props: Json = { id: { type: 'string' }, kind: { type: 'string', enum: ['a', 'b'] } };
    for (const w of names) props[w] = r() < 0.5 ? { type: 'string' } : { type: 'integer' };
    s.components.schemas[`Item${k}`] = { allOf: [{ $ref: '#/components/schemas/Meta' }, { type: 'object', required: ['id'], properties: props }] };
    s.components.schemas[`New${k}`] = { type: 'object', properties: Object.fromEntries(names.map((w) => [w, { ...props[w] }])) };
    s.paths[`/r${k}/{id}`] = {
      get: {
        parameters: [
          { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
          { name: 'limit', in: 'query', schema: { type: 'integer' } },
          { name: 'X-Mode', in: 'header', schema: { type: 'string' } },
        ],
        responses: {
          '200': {
            description: 'ok',
            headers: { 'X-Opt': { schema: { type: 'string' } }, 'X-Req': { required: true, schema: { type: 'string' } } },
            content: { 'application/json': { schema: { $ref: `#/components/schemas/Item${k}` } } },
          },
          '404': { description: 'none' },
        },
      },
    };
    s.paths[`/r${k}`] = { post: { requestBody: { content: { 'application/json': { schema: { $ref: `#/components/schemas/New${k}` } } } }, responses: { '201': { description: 'made' } } } };
  }
  return s;
}

const clone = (x: Json): Json => JSON.parse(JSON.stringify(x));
const resources = (s: Json) => Object.keys(s.components.schemas).filter((n) => n.startsWith('New')).length;
const get = (s: Json, k: number) => s.paths[`/r${k}/{id}`]?.get ?? s.paths[Object.keys(s.paths).find((p) => p.startsWith(`/r${k}/`))!].get;
const itemFields = (s: Json, k: number) => s.components.schemas[`Item${k}`].allOf[1];
const newBody = (s: Json, k: number) => s.components.schemas[`New${k}`];
const firstOther = (o: Json) => Object.keys(o.properties).find((p) => p !== 'id' && p !== 'kind')!;

/** Rule edits: what to change in head, and the exact oasdiff ids the diff must print. */
/** `item`: the edit changes the Item schema (an allOf) itself. */
const EDITS: Array<{ name: string; edit: (h: Json, k: number) => void; ids: string[]; item?: true }> = [
  { name: 'optional response header removed', edit: (h, k) => delete get(h, k).responses['200'].headers['X-Opt'], ids: ['optional-response-header-removed'] },
  { name: 'required response header removed', edit: (h, k) => delete get(h, k).responses['200'].headers['X-Req'], ids: ['required-response-header-removed'] },
  { name: 'response header type changed', edit: (h, k) => (get(h, k).responses['200'].headers['X-Opt'].schema.type = 'integer'), ids: ['response-header-type-changed'] },
  { name: 'query parameter type changed', edit: (h, k) => (get(h, k).parameters[1].schema.type = 'string'), ids: ['request-parameter-type-changed'] },
  { name: 'query parameter became required', edit: (h, k) => (get(h, k).parameters[1].required = true), ids: ['request-parameter-became-required'] },
  { name: 'query parameter default added', edit: (h, k) => (get(h, k).parameters[1].schema.default = 10), ids: ['request-parameter-default-value-added'] },
  { name: 'header parameter enum added', edit: (h, k) => (get(h, k).parameters[2].schema.enum = ['x', 'y']), ids: ['request-parameter-became-enum'] },
  { name: 'request property type changed', edit: (h, k) => { const b = newBody(h, k); const p = firstOther(b); b.properties[p] = { type: b.properties[p].type === 'string' ? 'boolean' : 'string' }; }, ids: ['request-property-type-changed'] },
  { name: 'request property became required', edit: (h, k) => (newBody(h, k).required = [firstOther(newBody(h, k))]), ids: ['request-property-became-required'] },
  { name: 'required request property added', edit: (h, k) => { const b = newBody(h, k); b.properties.extra = { type: 'string' }; b.required = ['extra']; }, ids: ['new-required-request-property'] },
  { name: 'optional request property added', edit: (h, k) => (newBody(h, k).properties.extra = { type: 'string' }), ids: ['new-optional-request-property'] },
  { name: 'request property deprecated', edit: (h, k) => (newBody(h, k).properties[firstOther(newBody(h, k))].deprecated = true), ids: ['request-property-deprecated'] },
  { name: 'request body became required', edit: (h, k) => (h.paths[`/r${k}`].post.requestBody.required = true), ids: ['request-body-became-required'] },
  { name: 'optional response property removed', edit: (h, k) => delete itemFields(h, k).properties[firstOther(itemFields(h, k))], ids: ['response-optional-property-removed'], item: true },
  { name: 'required response property removed', edit: (h, k) => { const f = itemFields(h, k); delete f.properties.id; f.required = []; }, ids: ['response-required-property-removed'], item: true },
  { name: 'response enum value added', edit: (h, k) => itemFields(h, k).properties.kind.enum.push('c'), ids: ['response-property-enum-value-added'], item: true },
  { name: 'response property became nullable', edit: (h, k) => (itemFields(h, k).properties.kind = { ...itemFields(h, k).properties.kind, ...(h.openapi.startsWith('3.0') ? { nullable: true } : { type: ['string', 'null'] }) }), ids: ['response-property-became-nullable'], item: true },
  { name: 'non-success status removed', edit: (h, k) => delete get(h, k).responses['404'], ids: ['response-non-success-status-removed'] },
];

/** Neutral refactors: what a client sees stays the same. */
const REFACTORS: Array<{ name: string; apply: (h: Json, k: number) => void }> = [
  {
    name: 'component renamed',
    apply: (h, k) => {
      const s = h.components.schemas;
      s[`Record${k}`] = s[`Item${k}`];
      delete s[`Item${k}`];
      const text = JSON.stringify(h.paths).split(`#/components/schemas/Item${k}"`).join(`#/components/schemas/Record${k}"`);
      h.paths = JSON.parse(text);
      // the helpers below look Item<k> up: keep an alias reference to the same object
      Object.defineProperty(s, `Item${k}`, { value: s[`Record${k}`], enumerable: false, configurable: true });
    },
  },
  {
    name: 'path parameter renamed',
    apply: (h, k) => {
      const item = h.paths[`/r${k}/{id}`];
      if (!item) return;
      delete h.paths[`/r${k}/{id}`];
      item.get.parameters[0].name = 'resourceId';
      h.paths[`/r${k}/{resourceId}`] = item;
    },
  },
  {
    name: 'property moved between allOf branches',
    apply: (h, k) => {
      // the shared Meta branch is replaced, for this item only, by a branch without its property, which moves
      const all = h.components.schemas[`Item${k}`].allOf;
      if (all[0].$ref === undefined) return;
      all[0] = { type: 'object', description: 'meta, inlined' };
      all[1].properties = { created: { type: 'string' }, ...all[1].properties };
    },
  },
  {
    name: 'properties reordered',
    apply: (h, k) => {
      const b = newBody(h, k);
      b.properties = Object.fromEntries(Object.entries(b.properties).reverse());
    },
  },
  {
    name: 'vacuous envelope anyOf',
    apply: (h, k) => {
      const f = itemFields(h, k);
      f.anyOf = [{ type: 'object' }, { type: 'array', items: {} }];
    },
  },
];

async function run(base: Json, head: Json) {
  const f = 'openapi.json';
  const d = diffSpecs(await loadSpecFromTexts(f, { [f]: JSON.stringify(base) }), await loadSpecFromTexts(f, { [f]: JSON.stringify(head) }), f, { asOf: '2026-06-01' });
  const ids = [...new Set(d.changes.map((c) => d.oasdiff?.get(c.changeId)?.id).filter((x): x is string => x !== undefined))].sort();
  const decisions = (['review-ledger', 'oasdiff'] as const).flatMap((p) => applyProfile(d.changes, d.oasdiff, p).filter((c) => needsDecision(c.severity)).map((c) => `${p}:${c.ruleId}: ${c.message}`));
  return { ids, decisions, changes: d.changes };
}

const SEEDS = Array.from({ length: 12 }, (_, i) => 1000 + i * 7919);

describe('oasdiff ids of generated spec pairs', () => {
  it.each(SEEDS)('seed %i: neutral refactors alone print nothing graded ERR or WARN, under either profile, and no removal', async (seed) => {
    const base = baseSpec(seed);
    const r = rng(seed ^ 0x5bd1e995);
    const head = clone(base);
    for (let k = 0; k < resources(base); k++) for (const f of REFACTORS) if (r() < 0.7) f.apply(head, k);
    const out = await run(base, head);
    expect(out.decisions).toEqual([]);
    expect(out.ids.filter((id) => /removed|type-changed/.test(id))).toEqual([]);
  });

  it.each(SEEDS)('seed %i: every rule edit prints exactly its oasdiff ids, with random neutral refactors on top', async (seed) => {
    const base = baseSpec(seed);
    const r = rng(seed);
    const failures: string[] = [];
    for (const e of EDITS) {
      const k = Math.floor(r() * resources(base));
      const head = clone(base);
      e.edit(head, k);
      const applied: string[] = [];
      for (const f of REFACTORS) if (r() < 0.5) {
        f.apply(head, k);
        applied.push(f.name);
      }
      const out = await run(base, head);
      // Moving a property out of a `$ref` branch while the same allOf really changes: the composed schema
      // differs, so its branches are reported too — info (as oasdiff grades allOf branch changes of a
      // response), and never more than these two ids.
      const expected = e.item && applied.includes('property moved between allOf branches') ? [...e.ids, 'response-body-all-of-added', 'response-body-all-of-removed'] : e.ids;
      if (JSON.stringify(out.ids) !== JSON.stringify([...expected].sort())) failures.push(`${e.name} [+ ${applied.join(', ') || 'no refactor'}]: got ${out.ids.join(', ') || 'none'} — ${out.changes.map((c) => c.message).join(' | ')}`);
    }
    expect(failures).toEqual([]);
  });
});
