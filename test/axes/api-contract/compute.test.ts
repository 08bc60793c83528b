import { stringify } from 'yaml';
import { CHANGES_BYTE_BUDGET, computeApiContract, contractGate, specCandidates } from '../../../src/axes/api-contract';
import { apiContractComputationSchema } from '../../../src/events/catalogue/compute';
import { GitRepo } from '../../../src/git/repo';
import { GitFixture } from '../../support/git-fixture';

type Json = Record<string, unknown>;
const petstore = (extraPaths: Json = {}, petProps: Json = { name: { type: 'string' }, tag: { type: 'string' } }): Json => ({
  openapi: '3.0.3',
  info: { title: 'pets', version: '1' },
  paths: {
    '/pets': { get: { responses: { '200': { description: 'ok', content: { 'application/json': { schema: { type: 'array', items: { $ref: '#/components/schemas/Pet' } } } } } } } },
    '/pets/{petId}': { get: { parameters: [{ name: 'petId', in: 'path', required: true, schema: { type: 'string' } }], responses: { '200': { description: 'ok', content: { 'application/json': { schema: { $ref: '#/components/schemas/Pet' } } } } } } },
    ...extraPaths,
  },
  components: { schemas: { Pet: { type: 'object', properties: petProps } } },
});

describe('computeApiContract on a real repository', () => {
  let fx: GitFixture;
  let repo: GitRepo;
  beforeEach(async () => {
    fx = new GitFixture('rl-contract-');
    fx.write('README.md', 'hello\n');
  });
  afterEach(() => {
    repo?.close();
    fx.cleanup();
  });

  async function compute(base: string, head: string) {
    repo = await GitRepo.open(fx.dir);
    const changedFiles = await repo.diffNameStatus(base, head);
    return computeApiContract({ readFile: (c, p) => repo.readFileAt(c, p), baseSha: base, headSha: head, changedFiles, asOf: '2026-06-01' });
  }

  it('is not_applicable when no spec file changed', async () => {
    fx.write('api/openapi.yaml', stringify(petstore()));
    const base = fx.commit('base');
    fx.write('README.md', 'changed\n');
    const head = fx.commit('head');
    const r = await compute(base, head);
    expect(r.status).toBe('not_applicable');
    expect(contractGate(r, new Map()).status).toBe('not_applicable');
  });

  it('diffs a modified spec and gates its breaking changes until approved', async () => {
    fx.write('api/openapi.yaml', stringify(petstore()));
    const base = fx.commit('base');
    fx.write('api/openapi.yaml', stringify(petstore({}, { name: { type: 'string' } })));
    const head = fx.commit('head');
    const r = await compute(base, head);
    expect(r.status).toBe('pass');
    expect(r.specs).toEqual([{ path: 'api/openapi.yaml', change: 'modified' }]);
    expect(r.changes.map((c) => [c.ruleId, c.severity, c.specPath])).toEqual([['response-property-removed', 'breaking', 'api/openapi.yaml']]);
    const gate = contractGate(r, new Map());
    expect(gate.status).toBe('fail');
    expect(contractGate(r, new Map([[gate.undecidedBreaking[0], 'approved']])).status).toBe('warn');
  });

  it('reports every operation of a deleted spec as removed and breaking', async () => {
    fx.write('openapi.json', JSON.stringify(petstore()));
    const base = fx.commit('base');
    fx.remove('openapi.json');
    const head = fx.commit('head');
    const r = await compute(base, head);
    expect(r.status).toBe('pass');
    expect(r.specs).toEqual([{ path: 'openapi.json', change: 'deleted' }]);
    expect(r.changes.map((c) => [c.operation, c.ruleId, c.severity])).toEqual([
      ['GET /pets', 'api-removed-without-deprecation', 'breaking'],
      ['GET /pets/{}', 'api-removed-without-deprecation', 'breaking'],
    ]);
  });

  it('reports every operation of an added spec as added, nothing breaking', async () => {
    const base = fx.commit('base');
    fx.write('services/billing/billing-openapi.yml', stringify(petstore()));
    const head = fx.commit('head');
    const r = await compute(base, head);
    expect(r.specs).toEqual([{ path: 'services/billing/billing-openapi.yml', change: 'added' }]);
    expect(r.changes.every((c) => c.ruleId === 'api-added')).toBe(true);
    expect(contractGate(r, new Map()).status).toBe('pass');
  });

  it('never passes an unparsable spec: partial/unavailable with the parser message', async () => {
    fx.write('openapi.yaml', stringify(petstore()));
    const base = fx.commit('base');
    fx.write('openapi.yaml', 'openapi: 3.0.3\npaths: {\n  /pets: [\n');
    const head = fx.commit('head');
    const r = await compute(base, head);
    expect(['partial', 'unavailable']).toContain(r.status);
    expect(r.reason).toMatch(/openapi\.yaml: invalid YAML/);
    expect(r.specs[0].error).toMatch(/invalid YAML/);
    expect(contractGate(r, new Map()).status).not.toBe('pass');
  });

  it('keeps the changes of the specs it could read when another one is unparsable (partial)', async () => {
    fx.write('a/openapi.yaml', stringify(petstore()));
    fx.write('b/swagger.json', '{"swagger": "2.0", "paths": {}}');
    const base = fx.commit('base');
    fx.write('a/openapi.yaml', stringify(petstore({}, {})));
    fx.write('b/swagger.json', '{"swagger": "2.0", "paths": {');
    const head = fx.commit('head');
    const r = await compute(base, head);
    expect(r.status).toBe('partial');
    expect(r.changes.length).toBe(2);
    expect(r.specs.find((s) => s.path === 'b/swagger.json')!.error).toMatch(/invalid JSON/);
  });

  it('resolves $refs into other files of the repository at each commit', async () => {
    const spec = petstore();
    (spec.paths as Json)['/pets/{petId}'] = { get: { responses: { '200': { description: 'ok', content: { 'application/json': { schema: { $ref: './schemas/pet.yaml#/Pet' } } } } } } };
    fx.write('api/openapi.yaml', stringify(spec));
    fx.write('api/schemas/pet.yaml', stringify({ Pet: { type: 'object', required: ['id'], properties: { id: { type: 'integer' } } } }));
    const base = fx.commit('base');
    fx.write('api/openapi.yaml', stringify({ ...spec, info: { title: 'pets', version: '2' } }));
    fx.write('api/schemas/pet.yaml', stringify({ Pet: { type: 'object', properties: { id: { type: 'integer' } } } }));
    const head = fx.commit('head');
    const r = await compute(base, head);
    expect(r.status).toBe('pass');
    expect(r.changes.map((c) => [c.ruleId, c.basePointer])).toEqual([['response-property-became-optional', 'api/schemas/pet.yaml#/Pet/properties/id']]);
  });

  describe('a spec split over several files', () => {
    const split = () => {
      const spec = petstore();
      (spec.paths as Json)['/pets/{petId}'] = { get: { responses: { '200': { description: 'ok', content: { 'application/json': { schema: { $ref: 'schemas/pet.yaml#/Pet' } } } } } } };
      return stringify(spec);
    };
    const pet = (props: Json) => stringify({ Pet: { type: 'object', properties: props } });

    it('is diffed when only a file it references changed (the spec itself untouched)', async () => {
      fx.write('api/openapi.yaml', split());
      fx.write('api/schemas/pet.yaml', pet({ id: { type: 'integer' }, name: { type: 'string' } }));
      const base = fx.commit('base');
      fx.write('api/schemas/pet.yaml', pet({ id: { type: 'integer' } }));
      const head = fx.commit('head');
      const r = await compute(base, head);
      expect(r.status).toBe('pass');
      expect(r.specs).toEqual([{ path: 'api/openapi.yaml', change: 'modified' }]);
      expect(r.changes.map((c) => [c.ruleId, c.basePointer])).toEqual([['response-property-removed', 'api/schemas/pet.yaml#/Pet/properties/name']]);
    });

    it('is not diffed when the changed YAML file is not one it references', async () => {
      fx.write('api/openapi.yaml', split());
      fx.write('api/schemas/pet.yaml', pet({ id: { type: 'integer' } }));
      fx.write('api/config/settings.yaml', 'a: 1\n');
      const base = fx.commit('base');
      fx.write('api/config/settings.yaml', 'a: 2\n');
      const head = fx.commit('head');
      expect((await compute(base, head)).status).toBe('not_applicable');
    });

    it('is partial, naming the missing file, when a file it references was deleted', async () => {
      fx.write('api/openapi.yaml', split());
      fx.write('api/schemas/pet.yaml', pet({ id: { type: 'integer' } }));
      const base = fx.commit('base');
      fx.remove('api/schemas/pet.yaml');
      const head = fx.commit('head');
      const r = await compute(base, head);
      expect(['partial', 'unavailable']).toContain(r.status);
      expect(r.reason).toMatch(/schemas\/pet\.yaml not found/);
    });
  });

  it('diffs a renamed spec against its old path', async () => {
    fx.write('openapi.yaml', stringify(petstore()));
    const base = fx.commit('base');
    fx.git('mv', 'openapi.yaml', 'swagger.yaml');
    const head = fx.commit('head');
    const r = await compute(base, head);
    expect(r.specs).toEqual([{ path: 'swagger.yaml', change: 'renamed' }]);
    expect(r.changes).toEqual([]);
    expect(r.status).toBe('pass');
  });

  it('skips a loosely named file that is not an OpenAPI document (openapitools.json)', async () => {
    fx.write('openapitools.json', JSON.stringify({ generatorName: 'typescript' }));
    const base = fx.commit('base');
    fx.write('openapitools.json', JSON.stringify({ generatorName: 'go' }));
    const head = fx.commit('head');
    expect((await compute(base, head)).status).toBe('not_applicable');
  });

  describe('the record budget (the computation travels inside one ReviewComputed event)', () => {
    const many = (n: number) => {
      const paths: Json = {};
      for (let i = 0; i < n; i++) paths[`/resources/${i}/items/{itemId}/details`] = { get: { responses: { '200': { description: 'ok' } } } };
      return { openapi: '3.0.3', info: { title: 'big', version: '1' }, paths };
    };

    it('keeps every breaking change and drops non-breaking ones first, staying pass', async () => {
      fx.write('openapi.json', JSON.stringify(many(10)));
      const base = fx.commit('base');
      fx.write('openapi.json', JSON.stringify({ ...many(4000), paths: { ...(many(4000).paths as Json) } }));
      const head = fx.commit('head');
      const r = await compute(base, head);
      expect(r.status).toBe('pass');
      expect(r.reason).toMatch(/non-breaking\/info contract changes not recorded/);
      expect(JSON.stringify(r.changes).length).toBeLessThanOrEqual(CHANGES_BYTE_BUDGET);
      expect(r.changes.length).toBeGreaterThan(100);
      expect(apiContractComputationSchema.safeParse(r).success).toBe(true);
    });

    it('is partial when the breaking changes alone do not fit: an unseen breaking change must not open the gate', async () => {
      fx.write('openapi.json', JSON.stringify(many(4000)));
      const base = fx.commit('base');
      fx.remove('openapi.json');
      const head = fx.commit('head');
      const r = await compute(base, head);
      expect(r.status).toBe('partial');
      expect(r.reason).toMatch(/breaking and 0 other contract changes not recorded/);
      expect(contractGate(r, new Map(r.changes.map((c) => [c.changeId, 'approved' as const]))).status).toBe('partial');
      expect(apiContractComputationSchema.safeParse(r).success).toBe(true);
    });
  });

  it('returns the same changeIds when computed twice (decisions survive a recompute)', async () => {
    fx.write('openapi.yaml', stringify(petstore()));
    const base = fx.commit('base');
    fx.write('openapi.yaml', stringify(petstore({ '/owners': { get: { responses: {} } } }, { name: { type: 'integer' } })));
    const head = fx.commit('head');
    const a = await compute(base, head);
    const b = await compute(base, head);
    expect(b.changes.map((c) => c.changeId)).toEqual(a.changes.map((c) => c.changeId));
    expect(a.changes.length).toBeGreaterThan(1);
  });
});

describe('spec detection (SPEC §11)', () => {
  it('takes the six default names anywhere and loose openapi/swagger names with a yaml/json extension', () => {
    const files = [
      'openapi.yaml', 'svc/openapi.yml', 'openapi.json', 'x/swagger.yaml', 'swagger.yml', 'SWAGGER.JSON',
      'api/petstore-openapi.json', 'docs/my_swagger_v2.yaml', 'openapi.md', 'docs/openapi/readme.yaml', 'src/openapi.ts', 'package.json',
    ].map((path) => ({ status: 'modified' as const, path }));
    expect(specCandidates(files).map((c) => c.headPath).sort()).toEqual(
      ['openapi.yaml', 'svc/openapi.yml', 'openapi.json', 'x/swagger.yaml', 'swagger.yml', 'SWAGGER.JSON', 'api/petstore-openapi.json', 'docs/my_swagger_v2.yaml'].sort(),
    );
  });

  it('counts added, deleted and renamed spec files', () => {
    const c = specCandidates([
      { status: 'added', path: 'new/openapi.yaml' },
      { status: 'deleted', path: 'old/swagger.json' },
      { status: 'renamed', path: 'b/openapi.yaml', oldPath: 'a/openapi.yaml' },
      { status: 'renamed', path: 'api.yaml', oldPath: 'openapi.yaml' },
    ]);
    expect(c.map((x) => [x.basePath, x.headPath, x.change])).toEqual([
      ['a/openapi.yaml', 'b/openapi.yaml', 'renamed'],
      [undefined, 'new/openapi.yaml', 'added'],
      ['old/swagger.json', undefined, 'deleted'],
      // renamed to a name that is not a spec name: the spec is gone
      ['openapi.yaml', undefined, 'deleted'],
    ]);
  });
});
