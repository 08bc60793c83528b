import { diffSpecs } from '../../../src/axes/api-contract/diff';
import { loadSpecFromTexts } from '../../../src/axes/api-contract/document';
import { applyProfile, oasdiffChangelog, type ContractProfile } from '../../../src/axes/api-contract/profile';

type Json = Record<string, any>;

/**
 * Where we deliberately detect differently from oasdiff, the user chooses: `--profile review-ledger` (the
 * default) keeps our detection, `--profile oasdiff` detects as oasdiff does (docs/contract-rules.md,
 * "Detection under --profile oasdiff"). One case per difference, run under both profiles.
 */
function spec(edit: (s: Json) => void = () => {}): Json {
  const s: Json = {
    openapi: '3.0.3',
    info: { title: 't', version: '1' },
    paths: {
      '/orders/{orderId}': {
        put: {
          parameters: [{ name: 'orderId', in: 'path', required: true, schema: { type: 'string' } }],
          requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/OrderInput' } } } },
          responses: { '200': { description: 'ok', content: { 'application/json': { schema: { $ref: '#/components/schemas/Order' } } } } },
        },
      },
    },
    components: {
      schemas: {
        Base: { type: 'object', properties: { id: { type: 'string' } } },
        OrderInput: {
          allOf: [{ $ref: '#/components/schemas/Base' }, { type: 'object', properties: { note: { type: 'string' }, total: { type: 'integer', readOnly: true } } }],
        },
        Order: { type: 'object', required: ['id'], properties: { id: { type: 'string' }, secret: { type: 'string', writeOnly: true } } },
      },
    },
  };
  edit(s);
  return s;
}

const op = (s: Json) => s.paths['/orders/{orderId}'].put;

/** What `contract-diff --format oasdiff --profile P` prints, as "id LEVEL" (level 3 = ERR, 2 = WARN, 1 = INFO). */
async function printed(base: Json, head: Json, profile: ContractProfile): Promise<string[]> {
  const f = 'openapi.json';
  const d = diffSpecs(await loadSpecFromTexts(f, { [f]: JSON.stringify(base) }), await loadSpecFromTexts(f, { [f]: JSON.stringify(head) }), f, { asOf: '2026-06-01', profile });
  const LEVEL = { 3: 'ERR', 2: 'WARN', 1: 'INFO' } as const;
  return oasdiffChangelog(applyProfile(d.changes, d.oasdiff, profile), d.oasdiff, profile, f)
    .map((e) => `${e.id} ${LEVEL[e.level]}`)
    .sort();
}

async function both(base: Json, head: Json): Promise<{ ours: string[]; oasdiff: string[] }> {
  return { ours: await printed(base, head, 'review-ledger'), oasdiff: await printed(base, head, 'oasdiff') };
}

describe('detection differences are chosen by the profile', () => {
  it('a path parameter written without required: true: its default is no change for us, oasdiff reports it', async () => {
    const withDefault = (d: string) => (s: Json) => (op(s).parameters[0] = { name: 'orderId', in: 'path', schema: { type: 'string', default: d } });
    expect(await both(spec(withDefault('a')), spec(withDefault('b')))).toEqual({ ours: [], oasdiff: ['request-parameter-default-value-changed ERR'] });
    // written required: true, as OAS requires: nothing under either profile
    const declared = (d: string) => (s: Json) => (op(s).parameters[0].schema.default = d);
    expect(await both(spec(declared('a')), spec(declared('b')))).toEqual({ ours: [], oasdiff: [] });
  });

  it('`required` naming a property no side describes: we report it, oasdiff does not', async () => {
    const r = await both(spec(), spec((s) => (s.components.schemas.OrderInput.allOf[1].required = ['ghost'])));
    expect(r.ours).toEqual(['~request-property-became-required ERR'.replace('~', '')]);
    expect(r.oasdiff).toEqual([]);
  });

  it('a readOnly request property that becomes writable and required: skipped by us, request-property-became-required for oasdiff', async () => {
    const r = await both(
      spec(),
      spec((s) => {
        const inline = s.components.schemas.OrderInput.allOf[1];
        inline.properties.total = { type: 'integer' };
        inline.required = ['total'];
      }),
    );
    expect(r.ours).toEqual(['request-required-property-became-not-read-only INFO']);
    expect(r.oasdiff).toEqual(['request-property-became-required ERR', 'request-required-property-became-not-read-only INFO']);
  });

  it('an allOf branch listed twice: the same allOf for us (no change), an added allOf branch for oasdiff', async () => {
    const r = await both(spec(), spec((s) => s.components.schemas.OrderInput.allOf.push({ $ref: '#/components/schemas/Base' })));
    expect(r).toEqual({ ours: [], oasdiff: ['request-body-all-of-added ERR'] });
    // and the other way round: a repeat dropped
    const back = await both(spec((s) => s.components.schemas.OrderInput.allOf.push({ $ref: '#/components/schemas/Base' })), spec());
    expect(back.ours).toEqual([]);
    expect(back.oasdiff).toEqual(['request-body-all-of-removed WARN']);
  });

  it('a writeOnly response property removed or added: not a response change for us, oasdiff reports it (INFO)', async () => {
    const removed = await both(spec(), spec((s) => delete s.components.schemas.Order.properties.secret));
    expect(removed).toEqual({ ours: [], oasdiff: ['response-optional-write-only-property-removed INFO'] });
    const requiredSecret = (s: Json) => (s.components.schemas.Order.required = ['id', 'secret']);
    const removedRequired = await both(spec(requiredSecret), spec((s) => delete s.components.schemas.Order.properties.secret));
    expect(removedRequired).toEqual({ ours: [], oasdiff: ['response-required-write-only-property-removed INFO'] });
    const added = await both(spec((s) => delete s.components.schemas.Order.properties.secret), spec());
    expect(added).toEqual({ ours: [], oasdiff: ['response-optional-write-only-property-added INFO'] });
    const addedRequired = await both(spec((s) => delete s.components.schemas.Order.properties.secret), spec(requiredSecret));
    expect(addedRequired.oasdiff).toEqual(['response-required-write-only-property-added INFO']);
    expect(addedRequired.ours).not.toContain('response-required-write-only-property-added INFO');
  });

  it('the default profile of the engine is our detection', async () => {
    const f = 'openapi.json';
    const head = spec((s) => s.components.schemas.OrderInput.allOf.push({ $ref: '#/components/schemas/Base' }));
    const load = (x: Json) => loadSpecFromTexts(f, { [f]: JSON.stringify(x) });
    const implicit = diffSpecs(await load(spec()), await load(head), f, { asOf: '2026-06-01' });
    const explicit = diffSpecs(await load(spec()), await load(head), f, { asOf: '2026-06-01', profile: 'review-ledger' });
    expect(implicit.changes).toEqual(explicit.changes);
    expect(implicit.changes).toEqual([]);
    const asOasdiff = diffSpecs(await load(spec()), await load(head), f, { asOf: '2026-06-01', profile: 'oasdiff' });
    expect(asOasdiff.changes.map((c) => c.ruleId)).toEqual(['request-all-of-branch-added']);
  });
});
