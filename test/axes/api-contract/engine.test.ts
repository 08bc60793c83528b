import { stringify } from 'yaml';
import { diffSpecs } from '../../../src/axes/api-contract/diff';
import { loadSpecFromTexts, SpecParseError } from '../../../src/axes/api-contract/document';
import { CONTRACT_RULES_DOC, handWrittenSection, renderContractRulesDoc } from '../../../src/axes/api-contract/generate-docs';
import * as fs from 'node:fs';

type Json = Record<string, unknown>;
const oas = (paths: Json, schemas: Json = {}, extra: Json = {}): Json => ({ openapi: '3.0.3', info: { title: 't', version: '1' }, paths, components: { schemas }, ...extra });
const getReturning = (schema: unknown, p = '/things') => ({ [p]: { get: { responses: { '200': { description: 'ok', content: { 'application/json': { schema } } } } } } });
const postSending = (schema: unknown, p = '/things') => ({ [p]: { post: { requestBody: { required: true, content: { 'application/json': { schema } } }, responses: { '204': { description: 'ok' } } } } });

async function diff(base: Json, head: Json, files: { base?: Record<string, string>; head?: Record<string, string> } = {}) {
  const b = await loadSpecFromTexts('openapi.yaml', { 'openapi.yaml': stringify(base), ...files.base });
  const h = await loadSpecFromTexts('openapi.yaml', { 'openapi.yaml': stringify(head), ...files.head });
  return diffSpecs(b, h, 'openapi.yaml', { asOf: '2026-06-01' });
}
const ids = (r: { changes: Array<{ ruleId: string }> }) => r.changes.map((c) => c.ruleId).sort();

describe('operation matching', () => {
  it('does not report a path parameter rename (/users/{id} ≡ /users/{userId})', async () => {
    const op = (name: string) => ({ [`/users/{${name}}`]: { get: { parameters: [{ name, in: 'path', required: true, schema: { type: 'string' } }], responses: { '200': { description: 'ok' } } } } });
    expect((await diff(oas(op('id')), oas(op('userId')))).changes).toEqual([]);
  });

  it('still reports a real change on a renamed path parameter (its type), under the same operation', async () => {
    const op = (name: string, type: string) => ({ [`/users/{${name}}`]: { get: { parameters: [{ name, in: 'path', required: true, schema: { type } }], responses: { '200': { description: 'ok' } } } } });
    const r = await diff(oas(op('id', 'string')), oas(op('userId', 'integer')));
    expect(ids(r)).toEqual(['request-type-changed']);
    expect(r.changes[0].operation).toBe('GET /users/{}');
  });

  it('reports every operation of a removed path as removed (breaking)', async () => {
    const r = await diff(oas({ '/a': { get: { responses: {} }, post: { responses: {} } }, '/b': { get: { responses: {} } } }), oas({ '/b': { get: { responses: {} } } }));
    expect(r.changes.map((c) => [c.operation, c.ruleId, c.severity])).toEqual([
      ['GET /a', 'api-removed-without-deprecation', 'breaking'],
      ['POST /a', 'api-removed-without-deprecation', 'breaking'],
    ]);
  });
});

describe('format independence', () => {
  it('finds zero changes between a spec and the same spec reformatted as JSON with keys reordered', async () => {
    const spec = oas(
      { '/users': { ...getReturning({ $ref: '#/components/schemas/User' }, '/users')['/users'], ...postSending({ $ref: '#/components/schemas/User' }, '/users')['/users'] } },
      { User: { type: 'object', required: ['id'], properties: { id: { type: 'integer', format: 'int64' }, tags: { type: 'array', items: { type: 'string', enum: ['a', 'b'] } } } } },
    );
    const reversed = (v: unknown): unknown =>
      Array.isArray(v) ? v.map(reversed) : typeof v === 'object' && v !== null ? Object.fromEntries(Object.entries(v).reverse().map(([k, x]) => [k, reversed(x)])) : v;
    const b = await loadSpecFromTexts('openapi.yaml', { 'openapi.yaml': stringify(spec) });
    const h = await loadSpecFromTexts('openapi.json', { 'openapi.json': JSON.stringify(reversed(spec)) });
    expect(diffSpecs(b, h, 'openapi.json').changes).toEqual([]);
  });
});

describe('composition branches are matched by $ref name, content, then title — not position', () => {
  const schemas = { Cat: { type: 'object', properties: { meow: { type: 'boolean' } } }, Dog: { type: 'object', properties: { bark: { type: 'boolean' } } } };
  const pet = (...refs: string[]) => ({ oneOf: refs.map((r) => ({ $ref: `#/components/schemas/${r}` })) });

  it('treats reordered branches as no change', async () => {
    expect((await diff(oas(getReturning(pet('Cat', 'Dog')), schemas), oas(getReturning(pet('Dog', 'Cat')), schemas))).changes).toEqual([]);
  });

  it('pairs a $ref listed several times with each of its occurrences (found by the fuzz test)', async () => {
    expect((await diff(oas(getReturning(pet('Cat', 'Cat', 'Cat')), schemas), oas(getReturning(pet('Cat', 'Cat', 'Cat')), schemas))).changes).toEqual([]);
    expect(ids(await diff(oas(getReturning(pet('Cat', 'Cat', 'Dog')), schemas), oas(getReturning(pet('Cat', 'Dog')), schemas)))).toEqual(['response-one-of-branch-removed']);
  });

  it('compares the branch with the same $ref name even when it moved', async () => {
    const headSchemas = { ...schemas, Dog: { type: 'object', properties: {} } };
    const r = await diff(oas(getReturning(pet('Cat', 'Dog')), schemas), oas(getReturning(pet('Dog', 'Cat')), headSchemas));
    expect(ids(r)).toEqual(['response-property-removed']);
    expect(r.changes[0].basePointer).toBe('#/components/schemas/Dog/properties/bark');
  });

  it('matches inline branches by title', async () => {
    const inline = (title: string, type: string) => ({ title, type: 'object', properties: { v: { type } } });
    const r = await diff(
      oas(getReturning({ anyOf: [inline('A', 'string'), inline('B', 'string')] })),
      oas(getReturning({ anyOf: [inline('B', 'string'), inline('A', 'integer')] })),
    );
    expect(ids(r)).toEqual(['response-type-changed']);
    expect(r.changes[0].message).toContain('.v');
  });
});

describe('allOf', () => {
  const schemas = { Options: { type: 'object', properties: { runner: { type: 'string' } } } };
  const extra = { type: 'object', properties: { allowAdvanced: { type: 'boolean' } } };

  it('reads $ref: X → allOf: [$ref: X, extra] as one added branch, and compares the composed schema (X plus extra)', async () => {
    const r = await diff(oas(postSending({ $ref: '#/components/schemas/Options' }), schemas), oas(postSending({ allOf: [{ $ref: '#/components/schemas/Options' }, extra] }), schemas));
    expect(r.changes.map((c) => [c.ruleId, c.severity])).toEqual([
      ['request-all-of-branch-added', 'breaking'],
      ['request-property-added', 'non-breaking'],
    ]);
    expect(r.changes[0].headPointer).toBe('#/paths/~1things/post/requestBody/content/application~1json/schema/allOf/1');
  });

  it('still finds changes inside X when it gets wrapped', async () => {
    const headSchemas = { Options: { type: 'object', properties: { runner: { type: 'integer' } } } };
    const r = await diff(oas(getReturning({ allOf: [{ $ref: '#/components/schemas/Options' }, extra] }), schemas), oas(getReturning({ $ref: '#/components/schemas/Options' }), headSchemas));
    // the branch (info, as in oasdiff), what it took away (allowAdvanced) and the change inside X
    expect(ids(r)).toEqual(['response-all-of-branch-removed', 'response-property-removed', 'response-type-changed']);
  });

  it('takes the type of an allOf schema from its branches (allOf of objects ≡ object)', async () => {
    const r = await diff(
      oas(getReturning({ type: 'object', properties: { a: { allOf: [{ $ref: '#/components/schemas/Options' }], description: 'x' } } }), schemas),
      oas(getReturning({ type: 'object', properties: { a: { type: 'object', properties: { runner: { type: 'string' } } } } }), schemas),
    );
    expect(ids(r).filter((id) => id.includes('type'))).toEqual([]);
  });
});

describe('webhooks and callbacks flow the other way', () => {
  const payload = (required: string[]) => ({ type: 'object', required, properties: { id: { type: 'string' }, note: { type: 'string' } } });
  const withWebhook = (required: string[]) => ({ ...oas({}), openapi: '3.1.0', webhooks: { petAdded: { post: { requestBody: { content: { 'application/json': { schema: payload(required) } } }, responses: { '200': { description: 'ok' } } } } } });
  const withCallback = (required: string[]) =>
    oas({ '/subscribe': { post: { callbacks: { onEvent: { '{$request.body#/url}': { post: { requestBody: { content: { 'application/json': { schema: payload(required) } } }, responses: { '200': { description: 'ok' } } } } } }, responses: { '201': { description: 'ok' } } } } });

  it('classifies a webhook payload like a response: a property becoming optional breaks subscribers', async () => {
    const r = await diff(withWebhook(['id', 'note']), withWebhook(['id']));
    expect(r.changes.map((c) => [c.ruleId, c.severity])).toEqual([['response-property-became-optional', 'breaking']]);
    expect(r.changes[0].message).toContain('payload');
  });

  it('classifies a callback payload like a response, and names the callback', async () => {
    const r = await diff(withCallback(['id']), withCallback([]));
    expect(r.changes.map((c) => c.ruleId)).toEqual(['response-property-became-optional']);
    expect(r.changes[0].message).toContain('callback onEvent of POST /subscribe');
  });

  it('does not report the callbacks of a removed operation separately', async () => {
    const r = await diff(withCallback([]), oas({}));
    expect(r.changes.map((c) => c.ruleId)).toEqual(['api-removed-without-deprecation']);
  });
});

describe('readOnly and writeOnly', () => {
  it('ignores a readOnly property becoming required in a request', async () => {
    const schema = (required: string[]) => ({ type: 'object', required, properties: { id: { type: 'string', readOnly: true }, name: { type: 'string' } } });
    expect((await diff(oas(postSending(schema([]))), oas(postSending(schema(['id']))))).changes).toEqual([]);
  });

  it('ignores a writeOnly property removed from a response', async () => {
    const r = await diff(
      oas(getReturning({ type: 'object', properties: { password: { type: 'string', writeOnly: true }, name: { type: 'string' } } })),
      oas(getReturning({ type: 'object', properties: { name: { type: 'string' } } })),
    );
    expect(r.changes).toEqual([]);
  });

  it('classifies one edit of a shared schema per direction: required in the request, harmless in the response', async () => {
    const user = (required: string[]) => ({ User: { type: 'object', required, properties: { id: { type: 'string' }, email: { type: 'string' } } } });
    const paths = { '/users': { ...getReturning({ $ref: '#/components/schemas/User' }, '/users')['/users'], ...postSending({ $ref: '#/components/schemas/User' }, '/users')['/users'] } };
    const r = await diff(oas(paths, user(['id'])), oas(paths, user(['id', 'email'])));
    expect(r.changes.map((c) => [c.ruleId, c.severity])).toEqual(
      expect.arrayContaining([
        ['request-property-became-required', 'breaking'],
        ['response-property-became-required', 'non-breaking'],
      ]),
    );
    expect(r.changes).toHaveLength(2);
  });
});

describe('changeId', () => {
  it('is stable across recomputes and unaffected by unrelated operations being added', async () => {
    const base = oas(getReturning({ type: 'object', properties: { a: { type: 'string' }, b: { type: 'string' } } }));
    const head = oas(getReturning({ type: 'object', properties: { a: { type: 'string' } } }));
    const first = await diff(base, head);
    const again = await diff(base, head);
    const headWithMore = { ...head, paths: { ...(head.paths as Json), '/aaa': { get: { responses: {} } } } };
    const withMore = await diff(base, headWithMore);
    expect(again.changes.map((c) => c.changeId)).toEqual(first.changes.map((c) => c.changeId));
    expect(withMore.changes.map((c) => c.changeId)).toEqual(expect.arrayContaining(first.changes.map((c) => c.changeId)));
  });

  it('differs between two different changes of one rule at the same place (two enum values)', async () => {
    const r = await diff(oas(getReturning({ type: 'string', enum: ['a'] })), oas(getReturning({ type: 'string', enum: ['a', 'b', 'c'] })));
    expect(r.changes).toHaveLength(2);
    expect(new Set(r.changes.map((c) => c.changeId)).size).toBe(2);
  });
});

describe('references into other files of the same commit', () => {
  it('follows $ref into a sibling file and reports pointers into it', async () => {
    const spec = oas(getReturning({ $ref: 'schemas/user.yaml#/User' }));
    const user = (props: Json) => stringify({ User: { type: 'object', properties: props } });
    const r = await diff(spec, spec, {
      base: { 'schemas/user.yaml': user({ id: { type: 'string' }, email: { type: 'string' } }) },
      head: { 'schemas/user.yaml': user({ id: { type: 'string' } }) },
    });
    expect(ids(r)).toEqual(['response-property-removed']);
    expect(r.changes[0].basePointer).toBe('schemas/user.yaml#/User/properties/email');
  });

  it('refuses a reference that leaves the repository', async () => {
    await expect(loadSpecFromTexts('api/openapi.yaml', { 'api/openapi.yaml': stringify(oas(getReturning({ $ref: '../../etc/passwd#/x' }))) })).rejects.toThrow(SpecParseError);
  });

  it('fails loading with the missing file named', async () => {
    await expect(loadSpecFromTexts('openapi.yaml', { 'openapi.yaml': stringify(oas(getReturning({ $ref: 'missing.yaml#/X' }))) })).rejects.toThrow(/missing\.yaml not found/);
  });

  it('reports a dangling local $ref as unresolved instead of guessing', async () => {
    const spec = oas(getReturning({ $ref: '#/components/schemas/Nope' }));
    const r = await diff(spec, spec);
    expect(r.unresolvedRefs.length).toBeGreaterThan(0);
  });
});

describe('parsing', () => {
  it('rejects malformed YAML with the parser message', async () => {
    await expect(loadSpecFromTexts('openapi.yaml', { 'openapi.yaml': 'openapi: 3.0.0\npaths: [unclosed' })).rejects.toThrow(/openapi\.yaml: invalid YAML/);
  });

  it('rejects a YAML document that is not an OpenAPI or Swagger document', async () => {
    await expect(loadSpecFromTexts('openapi.yaml', { 'openapi.yaml': 'name: something else\n' })).rejects.toThrow(/not an OpenAPI 3\.x or Swagger 2\.0 document/);
  });
});

describe('Swagger 2.0', () => {
  const sw = (opExtra: Json, definitions: Json = {}) => ({
    swagger: '2.0',
    info: { title: 't', version: '1' },
    basePath: '/v1',
    consumes: ['application/json'],
    produces: ['application/json'],
    paths: { '/pets/{petId}': { put: { parameters: [{ name: 'petId', in: 'path', required: true, type: 'integer', format: 'int64' }, ...((opExtra.parameters as unknown[]) ?? [])], responses: opExtra.responses ?? { '200': { description: 'ok', schema: { $ref: '#/definitions/Pet' }, headers: { 'X-Rate-Limit': { type: 'integer' } } } } } } },
    definitions: { Pet: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, tag: { type: 'string' } } }, ...definitions },
  });

  it('reads body, query and header parameters, response schemas and headers', async () => {
    const base = sw({ parameters: [{ name: 'body', in: 'body', schema: { $ref: '#/definitions/Pet' } }, { name: 'dryRun', in: 'query', type: 'boolean' }] });
    const head = sw(
      { parameters: [{ name: 'body', in: 'body', required: true, schema: { $ref: '#/definitions/Pet' } }, { name: 'dryRun', in: 'query', type: 'string', enum: ['yes', 'no'] }, { name: 'X-Tenant', in: 'header', required: true, type: 'string' }] },
      { Pet: { type: 'object', required: ['name'], properties: { name: { type: 'string', maxLength: 50 } } } },
    );
    const r = await diff(base, head);
    expect(ids(r)).toEqual(
      [
        'request-body-became-required',
        'request-enum-added',
        'request-max-length-decreased',
        'request-parameter-added-required',
        'request-property-removed',
        'request-type-changed',
        'response-max-length-decreased',
        'response-property-removed',
      ].sort(),
    );
    expect(r.changes.find((c) => c.ruleId === 'response-property-removed')!.basePointer).toBe('#/definitions/Pet/properties/tag');
  });

  it('treats formData parameters as the properties of a form body', async () => {
    const form = (required: boolean) => sw({ parameters: [{ name: 'file', in: 'formData', type: 'file' }, { name: 'note', in: 'formData', type: 'string', required }] });
    const base = { ...form(false), consumes: ['multipart/form-data'] };
    const head = { ...form(true), consumes: ['multipart/form-data'] };
    expect(ids(await diff(base, head))).toEqual(['request-body-became-required', 'request-property-became-required']);
  });

  it('reports a basePath change', async () => {
    expect(ids(await diff(sw({}), { ...sw({}), basePath: '/v2' }))).toEqual(['api-base-path-changed']);
  });

  it('compares a Swagger 2.0 base with its OpenAPI 3.0 migration without inventing changes', async () => {
    const swagger = sw({ parameters: [{ name: 'body', in: 'body', required: true, schema: { $ref: '#/definitions/Pet' } }] });
    const openapi = {
      openapi: '3.0.3',
      info: { title: 't', version: '1' },
      paths: {
        '/pets/{id}': {
          put: {
            parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer', format: 'int64' } }],
            requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/Pet' } } } },
            responses: { '200': { description: 'ok', headers: { 'X-Rate-Limit': { schema: { type: 'integer' } } }, content: { 'application/json': { schema: { $ref: '#/components/schemas/Pet' } } } } },
          },
        },
      },
      components: { schemas: (swagger as Json).definitions },
    };
    expect((await diff(swagger, openapi)).changes).toEqual([]);
  });
});

describe('Swagger 2.0 petstore pair on disk (fixtures/swagger2)', () => {
  it('classifies every edit of a realistic 2.0 document, and not the path parameter rename', async () => {
    const dir = `${__dirname}/fixtures/swagger2`;
    const load = (name: string) => loadSpecFromTexts('swagger.yaml', { 'swagger.yaml': fs.readFileSync(`${dir}/${name}.yaml`, 'utf8') });
    const r = diffSpecs(await load('base'), await load('head'), 'swagger.yaml', { asOf: '2026-06-01' });
    expect(r.changes.map((c) => [c.operation, c.ruleId, c.severity])).toEqual(
      expect.arrayContaining([
        ['DELETE /pets/{}', 'api-removed-without-deprecation', 'breaking'],
        ['GET /pets', 'request-max-decreased', 'breaking'],
        ['GET /pets', 'request-parameter-serialization-changed', 'breaking'],
        ['GET /pets', 'response-property-removed', 'breaking'],
        ['GET /pets', 'response-enum-value-added', 'breaking'],
        ['GET /pets', 'response-header-removed', 'breaking'],
        ['GET /pets', 'api-security-scope-added', 'breaking'],
        ['POST /pets/{}/photo', 'request-property-became-required', 'breaking'],
        ['GET /pets/{}', 'response-non-success-status-removed', 'info'],
        ['POST /pets', 'request-property-removed', 'warning'],
      ]),
    );
    expect(r.changes).toHaveLength(10);
  });
});

describe('docs/contract-rules.md', () => {
  it('is the rendering of the current registry (regenerate with src/axes/api-contract/generate-docs.ts)', () => {
    const current = fs.readFileSync(CONTRACT_RULES_DOC, 'utf8');
    expect(current).toBe(renderContractRulesDoc(handWrittenSection(current)));
  });
});
