import { stringify } from 'yaml';
import { diffSpecs } from '../../../src/axes/api-contract/diff';
import { loadSpecFromTexts } from '../../../src/axes/api-contract/document';

/**
 * A schema pair that is the same as written on both sides is not compared further (schema-diff.ts,
 * SameAsWritten). "The same" has to follow every `$ref` to what it leads to, keep annotations and key
 * order, and never hold across a cycle or an unresolvable reference: each case below changes something
 * only such a check can miss, and the change must still be found.
 */
type Json = Record<string, unknown>;
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const spec = (schemas: Json, extra: Json = {}): Json => ({
  openapi: '3.0.3',
  info: { title: 'same', version: '1' },
  paths: {
    '/a': { get: { responses: { '200': { description: 'ok', content: { 'application/json': { schema: { type: 'object', properties: { a: ref('A') } } } } } } } },
    '/b': { get: { responses: { '200': { description: 'ok', content: { 'application/json': { schema: { type: 'object', properties: { a: ref('A') } } } } } } } },
    ...extra,
  },
  components: { schemas },
});

async function diff(base: Json, head: Json, ext: 'json' | 'yaml' = 'json') {
  const text = (d: Json) => (ext === 'json' ? JSON.stringify(d) : stringify(d));
  const file = `openapi.${ext}`;
  const b = await loadSpecFromTexts(file, { [file]: text(base) });
  const h = await loadSpecFromTexts(file, { [file]: text(head) });
  return diffSpecs(b, h, file, { asOf: '2026-12-01' });
}

describe('a pair the same as written is skipped only when nothing can be found below it', () => {
  it('follows the $ref: the referencing schemas are written alike, the component changed', async () => {
    const r = await diff(spec({ A: { type: 'object', properties: { x: { type: 'string' } } } }), spec({ A: { type: 'object', properties: {} } }));
    expect(r.changes.filter((c) => c.ruleId === 'response-property-removed').map((c) => c.operation)).toEqual(['GET /a']);
  });

  it('keeps annotations: a property only marked deprecated is still reported', async () => {
    const r = await diff(spec({ A: { type: 'object', properties: { x: { type: 'string' } } } }), spec({ A: { type: 'object', properties: { x: { type: 'string', deprecated: true } } } }));
    expect(r.changes.map((c) => c.ruleId)).toContain('property-deprecated');
  });

  it('tells two components with the same content apart by name: a renamed $ref is reported', async () => {
    const a = { type: 'object', properties: { x: { type: 'string' } } };
    const base = spec({ A: a });
    const head = spec({ A: a, B: a });
    (((head.paths as Json)['/a'] as Json).get as Json).responses = { '200': { description: 'ok', content: { 'application/json': { schema: { type: 'object', properties: { a: ref('B') } } } } } };
    const r = await diff(base, head);
    expect(r.changes.map((c) => c.ruleId)).toContain('schema-ref-renamed');
  });

  it('does not hold across a cycle: a change deep in a recursive schema is found', async () => {
    const node = (leaf: Json) => ({ A: { type: 'object', properties: { next: ref('A'), leaf } } });
    const r = await diff(spec(node({ type: 'string' })), spec(node({ type: 'integer' })));
    expect(r.changes.some((c) => c.ruleId.startsWith('response-type'))).toBe(true);
  });

  it('does not hold over an unresolvable $ref: it is still reported as unresolved', async () => {
    const broken = { A: { type: 'object', properties: { x: ref('Missing') } } };
    const r = await diff(spec(broken), spec(broken));
    expect(r.unresolvedRefs).toEqual(['base openapi.json: #/components/schemas/Missing', 'head openapi.json: #/components/schemas/Missing']);
  });
});

describe('unused components without a set of every node (no shared objects)', () => {
  const used = { A: { type: 'object', properties: { x: { type: 'string' } } } };
  it('reports an unused component that changed, and not a used one, in JSON and in YAML with aliases', async () => {
    for (const ext of ['json', 'yaml'] as const) {
      const base = spec({ ...used, Draft: { type: 'object', properties: { y: { type: 'string' } } } });
      const head = spec({ ...used, Draft: { type: 'object', properties: { y: { type: 'integer' } } } });
      const r = await diff(base, head, ext);
      expect(r.changes.filter((c) => c.ruleId.startsWith('component-schema')).map((c) => c.message)).toEqual(['unused schema Draft changed']);
    }
    // YAML aliases: one object at two places (a component and inline in an operation): it is used
    const yaml = (t: string) => `openapi: 3.0.3
info: {title: alias, version: '1'}
paths:
  /a:
    get:
      responses:
        '200':
          description: ok
          content:
            application/json:
              schema: &shared {type: object, properties: {z: {type: ${t}}}}
components:
  schemas:
    Shared: *shared
`;
    const b = await loadSpecFromTexts('openapi.yaml', { 'openapi.yaml': yaml('string') });
    const h = await loadSpecFromTexts('openapi.yaml', { 'openapi.yaml': yaml('integer') });
    expect(b.docs.sharesObjects).toBe(true);
    const r = diffSpecs(b, h, 'openapi.yaml');
    expect(r.changes.filter((c) => c.ruleId.startsWith('component-schema'))).toEqual([]);
    expect(r.changes.some((c) => c.ruleId.startsWith('response-type'))).toBe(true);
  });

  it('a component reached only through a $ref to its container is used', async () => {
    const base = spec({ ...used, Draft: { type: 'object' } });
    const head = spec({ ...used, Draft: { type: 'object', properties: { q: { type: 'string' } } } }, { '/c': { get: { responses: { '200': { description: 'ok', content: { 'application/json': { schema: { type: 'object', 'x-all': { $ref: '#/components/schemas' } } } } } } } } });
    (base.paths as Json)['/c'] = (head.paths as Json)['/c'];
    const r = await diff(base, head);
    expect(r.changes.filter((c) => c.ruleId.startsWith('component-schema'))).toEqual([]);
  });
});
