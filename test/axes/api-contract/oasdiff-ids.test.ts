import { diffSpecs } from '../../../src/axes/api-contract/diff';
import { loadSpecFromTexts } from '../../../src/axes/api-contract/document';
import { applyProfile, oasdiffChangelog } from '../../../src/axes/api-contract/profile';
import { OASDIFF_LEVELS } from '../../../src/axes/api-contract/oasdiff-registry';

type Json = Record<string, any>;

/** One operation with a path parameter, a query and a header parameter, a request body and a 200 with headers. */
function spec(edit: (op: Json, s: Json) => void = () => {}): Json {
  const s: Json = {
    openapi: '3.0.3',
    info: { title: 't', version: '1' },
    paths: {
      '/users/{userId}/keys/{keyId}': {
        post: {
          parameters: [
            { name: 'userId', in: 'path', required: true, schema: { type: 'string' } },
            { name: 'keyId', in: 'path', required: true, schema: { type: 'string' } },
            { name: 'limit', in: 'query', schema: { type: 'integer' } },
            { name: 'X-Opts', in: 'header', schema: { type: 'object', properties: { a: { type: 'string' } } } },
          ],
          requestBody: {
            content: { 'application/json': { schema: { type: 'object', discriminator: { propertyName: 'kind' }, properties: { kind: { type: 'string' }, n: { type: 'integer' }, d: { type: 'string' } } } } },
          },
          responses: {
            '200': {
              description: 'ok',
              headers: { 'X-Opt': { schema: { type: 'string' } }, 'X-Req': { required: true, schema: { type: 'string' } } },
              content: { 'application/json': { schema: { type: 'object', required: ['id'], properties: { id: { type: 'string' }, opt: { type: 'string' }, e: { type: 'string', enum: ['a'] } } } } },
            },
          },
        },
      },
    },
  };
  edit(s.paths['/users/{userId}/keys/{keyId}'].post, s);
  return s;
}

async function diff(base: Json, head: Json) {
  const f = 'openapi.json';
  return diffSpecs(await loadSpecFromTexts(f, { [f]: JSON.stringify(base) }), await loadSpecFromTexts(f, { [f]: JSON.stringify(head) }), f, { asOf: '2026-06-01' });
}

/** rule id → the oasdiff ids its findings print. */
async function oasdiffIds(edit: (op: Json, s: Json) => void, baseEdit: (op: Json, s: Json) => void = () => {}): Promise<string[]> {
  const d = await diff(spec(baseEdit), spec((op, s) => {
    baseEdit(op, s);
    edit(op, s);
  }));
  return d.changes.map((c) => d.oasdiff!.get(c.changeId)?.id ?? `~${c.ruleId}`).sort();
}

describe('oasdiff ids per finding: location, change and required/optional pick the exact twin', () => {
  it('a removed optional response header is optional-response-header-removed (WARN), a required one required-… (ERR)', async () => {
    const d = await diff(spec(), spec((op) => (op.responses['200'].headers = {})));
    const found = d.changes.map((c) => d.oasdiff!.get(c.changeId)!);
    expect(found.map((o) => `${o.id} ${o.level}`).sort()).toEqual(['optional-response-header-removed WARN', 'required-response-header-removed ERR']);
  });

  it('a type change is request-body-, request-property-, request-parameter-, request-parameter-property- or response-header-type-changed by where it sits', async () => {
    const stringBody = (op: Json) => (op.requestBody.content['application/json'].schema = { type: 'string' });
    expect(await oasdiffIds((op) => (op.requestBody.content['application/json'].schema.type = 'integer'), stringBody)).toEqual(['request-body-type-changed']);
    expect(await oasdiffIds((op) => (op.requestBody.content['application/json'].schema.properties.n.type = 'string'))).toEqual(['request-property-type-changed']);
    expect(await oasdiffIds((op) => (op.parameters[2].schema.type = 'string'))).toEqual(['request-parameter-type-changed']);
    expect(await oasdiffIds((op) => (op.parameters[3].schema.properties.a.type = 'integer'))).toEqual(['request-parameter-property-type-changed']);
    expect(await oasdiffIds((op) => (op.responses['200'].headers['X-Opt'].schema.type = 'integer'))).toEqual(['response-header-type-changed']);
    expect(await oasdiffIds((op) => (op.responses['200'].content['application/json'].schema.properties.opt.type = 'integer'))).toEqual(['response-property-type-changed']);
  });

  it('a request property deprecation and a request discriminator change print request-… ids, not response-…', async () => {
    expect(await oasdiffIds((op) => (op.requestBody.content['application/json'].schema.properties.d.deprecated = true))).toEqual(['request-property-deprecated']);
    expect(await oasdiffIds((op) => (op.requestBody.content['application/json'].schema.discriminator.propertyName = 'type'))).toEqual(['request-body-discriminator-property-name-changed']);
  });

  it('a removed response property is response-required-property-removed (ERR) or response-optional-property-removed (WARN)', async () => {
    const d = await diff(spec(), spec((op) => {
      const s = op.responses['200'].content['application/json'].schema;
      delete s.properties.id;
      delete s.properties.opt;
      delete s.required;
    }));
    expect(d.changes.map((c) => { const o = d.oasdiff!.get(c.changeId)!; return `${o.id} ${o.level}`; }).sort()).toEqual(['response-optional-property-removed WARN', 'response-required-property-removed ERR']);
  });

  it('a parameter default added or removed is request-parameter-default-value-added / -removed, not -changed', async () => {
    expect(await oasdiffIds((op) => (op.parameters[2].schema.default = 10))).toEqual(['request-parameter-default-value-added']);
    const withDefault = spec((op) => (op.parameters[2].schema.default = 10));
    const d = await diff(withDefault, spec());
    expect(d.changes.map((c) => d.oasdiff!.get(c.changeId)!.id)).toEqual(['request-parameter-default-value-removed']);
  });

  it('an operation removed with its whole path is api-path-removed-without-deprecation', async () => {
    const d = await diff(spec(), spec((_op, s) => (s.paths = { '/other': { get: { responses: { '200': { description: 'ok' } } } } })));
    expect(d.changes.filter((c) => c.ruleId === 'api-removed-without-deprecation').map((c) => d.oasdiff!.get(c.changeId)!.id)).toEqual(['api-path-removed-without-deprecation']);
  });

  it('names only ids of oasdiff\'s registry, with their default level, and the path with its parameter names', async () => {
    const d = await diff(spec(), spec((op) => {
      op.parameters[2].schema = { type: 'string', default: 'x' };
      op.requestBody.content['application/json'].schema.properties.n.type = 'string';
      op.responses['200'].headers = {};
      op.responses['200'].content['application/json'].schema.properties.e.enum = ['a', 'b'];
    }));
    expect(d.oasdiff!.size).toBeGreaterThanOrEqual(5);
    for (const o of d.oasdiff!.values()) {
      expect(OASDIFF_LEVELS.get(o.id)).toBe(o.level);
      expect(o).toMatchObject({ method: 'POST', path: '/users/{userId}/keys/{keyId}' });
    }
  });
});

describe('profiles', () => {
  it('review-ledger keeps our grades; oasdiff takes oasdiff\'s level of the exact id', async () => {
    const d = await diff(spec(), spec((op) => {
      op.responses['200'].content['application/json'].schema.properties.e.enum = ['a', 'b']; // ours breaking, oasdiff WARN
      delete op.responses['200'].headers['X-Opt']; // ours breaking, oasdiff WARN (optional header)
    }));
    const ours = applyProfile(d.changes, d.oasdiff, 'review-ledger').map((c) => `${c.ruleId} ${c.severity}`).sort();
    expect(ours).toEqual(['response-enum-value-added breaking', 'response-header-removed breaking']);
    const theirs = applyProfile(d.changes, d.oasdiff, 'oasdiff').map((c) => `${c.ruleId} ${c.severity}`).sort();
    expect(theirs).toEqual(['response-enum-value-added warning', 'response-header-removed warning']);
    expect(d.changes.map((c) => c.severity)).toEqual(['breaking', 'breaking']); // the engine's own output is untouched
  });

  it('oasdiff changelog entries: {id, text, level, operation, path, source}; under oasdiff what oasdiff has no rule for is absent', async () => {
    const d = await diff(spec(), spec((op) => {
      op.responses['200'].headers['X-Req'].required = false; // response-header-became-optional ERR
      op.requestBody.content['application/json'].schema.properties.n.multipleOf = 2; // no oasdiff rule
    }));
    const graded = applyProfile(d.changes, d.oasdiff, 'oasdiff');
    const entries = oasdiffChangelog(graded, d.oasdiff, 'oasdiff', 'new.yaml');
    expect(entries).toEqual([{ id: 'response-header-became-optional', text: expect.stringContaining('X-Req became optional'), level: 3, operation: 'POST', path: '/users/{userId}/keys/{keyId}', section: 'paths', source: 'new.yaml' }]);
    const ours = oasdiffChangelog(applyProfile(d.changes, d.oasdiff, 'review-ledger'), d.oasdiff, 'review-ledger', 'new.yaml');
    expect(ours.map((e) => e.id).sort()).toEqual(['response-header-became-optional', '~request-multiple-of-tightened'].sort());
  });
});

describe('docs/contract-rules.md documents both profiles rule by rule', () => {
  it('lists every oasdiff twin a rule can print with the level --profile oasdiff gives it', () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { renderContractRulesDoc } = require('../../../src/axes/api-contract/generate-docs') as typeof import('../../../src/axes/api-contract/generate-docs');
    const doc = renderContractRulesDoc();
    const row = doc.split('\n').find((l) => l.startsWith('| `response-header-removed` |'))!;
    expect(row).toContain('| breaking |');
    expect(row).toContain('`optional-response-header-removed` WARN');
    expect(row).toContain('`required-response-header-removed` ERR');
    expect(doc).toContain('`--profile review-ledger` (the default)');
    // a parameter rule has no body or property twin
    const param = doc.split('\n').find((l) => l.startsWith('| `request-parameter-became-optional` |'))!;
    expect(param).toContain('| `request-parameter-became-optional` INFO |');
  });
});

describe('a change inside a component several operations reach', () => {
  /** Pet is the response body of GET /pets/{id}, an array item of GET /pets and, through Owner.pet, a property of GET /owner. */
  const shared = (pet: Json): Json => ({
    openapi: '3.0.3',
    info: { title: 't', version: '1' },
    paths: {
      '/pets': { get: { responses: { '200': { description: 'ok', content: { 'application/json': { schema: { type: 'array', items: { $ref: '#/components/schemas/Pet' } } } } } } } },
      '/pets/{id}': {
        get: {
          parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
          responses: { '200': { description: 'ok', content: { 'application/json': { schema: { $ref: '#/components/schemas/Pet' } } } } },
        },
      },
      '/owner': { get: { responses: { '200': { description: 'ok', content: { 'application/json': { schema: { $ref: '#/components/schemas/Owner' } } } } } } },
    },
    components: { schemas: { Pet: pet, Owner: { type: 'object', properties: { pet: { $ref: '#/components/schemas/Pet' } } } } },
  });
  const base = { allOf: [{ type: 'object', properties: { id: { type: 'string' } } }, { type: 'object', properties: { name: { type: 'string' } } }] };
  const head = { allOf: [base.allOf[0]] };

  it('is one change for us but one oasdiff finding per operation, with the id it has there', async () => {
    const d = await diff(shared(base), shared(head));
    // our own view: the change is tracked once (one changeId each), whatever the number of operations
    const ours = applyProfile(d.changes, d.oasdiff, 'review-ledger');
    expect(ours.filter((c) => c.ruleId === 'response-property-removed')).toHaveLength(1);
    expect(oasdiffChangelog(ours, d.oasdiff, 'review-ledger', 'new.json').filter((e) => e.id.endsWith('-property-removed'))).toHaveLength(1);
    // oasdiff's: at each operation, the allOf branch removed from a body is response-body-all-of-removed,
    // from an item or property response-property-all-of-removed, and the property removed everywhere
    const entries = oasdiffChangelog(applyProfile(d.changes, d.oasdiff, 'oasdiff'), d.oasdiff, 'oasdiff', 'new.json');
    const at = (id: string) => entries.filter((e) => e.id === id).map((e) => `${e.operation} ${e.path} ${e.level}`).sort();
    expect(at('response-body-all-of-removed')).toEqual(['GET /pets/{id} 1']);
    expect(at('response-property-all-of-removed')).toEqual(['GET /owner 1', 'GET /pets 1']);
    expect(at('response-optional-property-removed')).toEqual(['GET /owner 2', 'GET /pets 2', 'GET /pets/{id} 2']);
  });
});
