import { diffSpecs } from '../../../src/axes/api-contract/diff';
import { loadSpecFromTexts } from '../../../src/axes/api-contract/document';

type Json = Record<string, any>;

/** One operation whose request body or 200 response is `schema`, with `schemas` as components. */
const doc = (where: 'request' | 'response', schema: Json, schemas: Json = {}): Json => ({
  openapi: '3.1.0',
  info: { title: 't', version: '1' },
  paths: {
    '/p': {
      post: {
        ...(where === 'request' ? { requestBody: { content: { 'application/json': { schema } } } } : {}),
        responses: { '200': { description: 'ok', ...(where === 'response' ? { content: { 'application/json': { schema } } } : {}) } },
      },
    },
  },
  components: { schemas },
});

async function found(base: Json, head: Json): Promise<string[]> {
  const f = 'openapi.json';
  const d = diffSpecs(await loadSpecFromTexts(f, { [f]: JSON.stringify(base) }), await loadSpecFromTexts(f, { [f]: JSON.stringify(head) }), f, {});
  return d.changes.map((c) => `${c.ruleId} ${c.message.split(': ').slice(-1)[0]}`).sort();
}

const PROPS = { a: { type: 'string' }, b: { type: 'integer' }, c: { type: 'string' } };
const BRANCHES = {
  A: { type: 'object', properties: { ...PROPS, kind: { type: 'string' } } },
  B: { type: 'object', properties: { a: { type: 'string' }, b: { type: 'integer' }, c: { type: 'string' }, x: { type: 'string' } } },
};
const ONE_OF = { oneOf: [{ $ref: '#/components/schemas/A' }, { $ref: '#/components/schemas/B' }] };

describe('composition compared by content', () => {
  it.each(['request', 'response'] as const)('only the head uses oneOf (%s): the properties its branches still describe are not removed', async (where) => {
    const changes = await found(doc(where, { type: 'object', properties: PROPS }, BRANCHES), doc(where, { type: 'object', discriminator: { propertyName: 'kind' }, ...ONE_OF }, BRANCHES));
    expect(changes.filter((c) => /property-removed|type-/.test(c))).toEqual([]);
    expect(changes.filter((c) => c.startsWith(`${where}-one-of-added`))).toHaveLength(1);
    expect(changes.filter((c) => c.startsWith('discriminator-property-changed'))).toHaveLength(1); // the new discriminator is still said
  });

  it('only the base used oneOf, the head matches no branch: the keyword is reported once, no property as removed', async () => {
    const changes = await found(doc('response', ONE_OF, BRANCHES), doc('response', { type: 'object', properties: { ...PROPS, kind: { type: 'string' }, y: { type: 'string' } } }, BRANCHES));
    expect(changes.filter((c) => c.startsWith('response-property-removed'))).toEqual([]);
    expect(changes.filter((c) => c.startsWith('response-one-of-removed'))).toHaveLength(1);
  });

  it('an anyOf that disappears from an envelope while another allOf branch still fixes the type is no change', async () => {
    const envelope = (anyOf: boolean): Json => ({
      Envelope: { type: 'object', properties: { success: { type: 'boolean' }, result: anyOf ? { anyOf: [{ type: 'object' }, { type: 'array', items: {} }], nullable: true } : { nullable: true } } },
      Zone: { type: 'object', properties: { id: { type: 'string' } } },
    });
    const schema = { allOf: [{ $ref: '#/components/schemas/Envelope' }, { type: 'object', properties: { result: { $ref: '#/components/schemas/Zone' } } }] };
    // at most the info marker that the composed schema is unchanged
    expect((await found(doc('response', schema, envelope(true)), doc('response', schema, envelope(false)))).filter((c) => !c.startsWith('all-of-reorganized '))).toEqual([]);
    // and a oneOf/anyOf whose own type already picks a type-only branch says nothing either way
    expect(await found(doc('response', { type: 'object', anyOf: [{ type: 'object' }, { type: 'array' }] }), doc('response', { type: 'object' }))).toEqual([]);
  });

  it('an anyOf written on both sides is never "removed", even where it constrains nothing on one side only', async () => {
    const anyOf = { anyOf: [{ type: 'object' }, { type: 'array', items: {} }] };
    const changes = await found(doc('response', { allOf: [anyOf, { type: 'string' }] }), doc('response', { allOf: [anyOf, { type: 'object' }] }));
    expect(changes.filter((c) => c.includes('any-of'))).toEqual([]);
    expect(changes.some((c) => c.startsWith('response-type-'))).toBe(true);
  });

  it('an anyOf whose removal really admits more is still reported', async () => {
    expect(await found(doc('response', { anyOf: [{ type: 'string' }, { type: 'integer' }], description: 'x' }), doc('response', { description: 'x' }))).toEqual(['response-any-of-removed anyOf removed']);
  });
});
