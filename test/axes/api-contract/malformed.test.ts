import { diffSpecs } from '../../../src/axes/api-contract/diff';
import { loadSpecFromTexts, SpecParseError } from '../../../src/axes/api-contract/document';

/** mulberry32: seeded, so a failing case is replayed from its seed. */
function prng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// The vocabulary of OpenAPI and JSON Schema keys, so random trees hit the engine's code paths with wrong shapes.
const KEYS = [
  'paths', 'webhooks', 'components', 'schemas', 'parameters', 'requestBody', 'responses', 'content', 'application/json', 'schema', 'headers',
  'get', 'post', '/a', '/a/{id}', '200', 'default', 'name', 'in', 'required', 'type', 'format', 'enum', 'const', 'items', 'prefixItems',
  'properties', 'additionalProperties', 'allOf', 'oneOf', 'anyOf', 'not', 'if', 'then', 'discriminator', 'mapping', 'propertyName',
  'security', 'securitySchemes', 'callbacks', 'servers', 'url', 'deprecated', 'x-sunset', 'maximum', 'exclusiveMaximum', 'minLength',
  'pattern', 'readOnly', 'nullable', 'style', 'explode', 'dependentRequired', 'patternProperties', 'contains', 'minContains', '$ref',
];
const REFS = ['#/components/schemas/a', '#/paths', '#', '#/nope', 'other.yaml#/x', '#/components/schemas/a/properties/b', 'http://x/y'];

function randomTree(rand: () => number, depth: number): unknown {
  const r = rand();
  if (depth > 5 || r < 0.25) {
    const leaves: unknown[] = [null, true, false, 0, -1, 3.5, '', 'x', 'string', 'object', 'array', '2020-01-01', [], {}];
    return leaves[Math.floor(rand() * leaves.length)];
  }
  if (r < 0.35) return Array.from({ length: Math.floor(rand() * 4) }, () => randomTree(rand, depth + 1));
  const out: Record<string, unknown> = {};
  const n = 1 + Math.floor(rand() * 5);
  for (let i = 0; i < n; i++) {
    const key = KEYS[Math.floor(rand() * KEYS.length)];
    out[key] = key === '$ref' ? REFS[Math.floor(rand() * REFS.length)] : randomTree(rand, depth + 1);
  }
  return out;
}

/** Mostly the right skeleton (paths → operations → parameters/bodies/responses → schemas) with wrong shapes mixed in. */
function skeleton(rand: () => number): Record<string, unknown> {
  const maybe = (good: () => unknown) => (rand() < 0.75 ? good() : randomTree(rand, 3));
  const schema = (depth = 0): unknown =>
    maybe(() => {
      const s = randomTree(rand, 2) as Record<string, unknown>;
      const obj: Record<string, unknown> = typeof s === 'object' && s !== null && !Array.isArray(s) ? { ...s } : {};
      if (depth < 3 && rand() < 0.5) obj.properties = { a: schema(depth + 1), b: schema(depth + 1) };
      if (depth < 3 && rand() < 0.3) obj.items = schema(depth + 1);
      if (depth < 3 && rand() < 0.2) obj.oneOf = [schema(depth + 1), { $ref: REFS[Math.floor(rand() * REFS.length)] }];
      if (rand() < 0.2) obj.$ref = REFS[Math.floor(rand() * REFS.length)];
      return obj;
    });
  const content = () => maybe(() => ({ 'application/json': maybe(() => ({ schema: schema() })) }));
  const op = () =>
    maybe(() => ({
      parameters: maybe(() => [maybe(() => ({ name: 'id', in: rand() < 0.5 ? 'path' : 'query', required: randomTree(rand, 5), schema: schema() })), maybe(() => ({ name: 'q', in: 'header', schema: schema() }))]),
      requestBody: maybe(() => ({ required: randomTree(rand, 5), content: content() })),
      responses: maybe(() => ({ '200': maybe(() => ({ content: content(), headers: maybe(() => ({ 'X-A': maybe(() => ({ schema: schema() })) })) })), default: maybe(() => ({ content: content() })) })),
      security: maybe(() => [maybe(() => ({ oauth: maybe(() => ['read']) }))]),
      callbacks: maybe(() => ({ cb: maybe(() => ({ '{$url}': maybe(() => ({ post: maybe(() => ({ requestBody: { content: content() } })) })) })) })),
      deprecated: randomTree(rand, 5),
      'x-sunset': randomTree(rand, 5),
    }));
  return {
    paths: maybe(() => ({ '/a': maybe(() => ({ get: op(), post: op(), parameters: maybe(() => [randomTree(rand, 3)]) })), '/a/{id}': maybe(() => ({ get: op(), delete: op() })) })),
    webhooks: maybe(() => ({ hook: maybe(() => ({ post: op() })) })),
    components: maybe(() => ({ schemas: maybe(() => ({ a: schema() })), securitySchemes: maybe(() => ({ oauth: randomTree(rand, 3) })) })),
    servers: maybe(() => [maybe(() => ({ url: randomTree(rand, 5) }))]),
    security: maybe(() => [randomTree(rand, 3)]),
  };
}

describe('malformed but parsable specs', () => {
  it('never throws on 300 random pairs of wrongly shaped documents (the axis reports, it does not crash)', async () => {
    let changes = 0;
    for (let seed = 1; seed <= 300; seed++) {
      const rand = prng(seed);
      const doc = () => ({ openapi: rand() < 0.5 ? '3.0.3' : '3.1.0', ...skeleton(rand) });
      const files = (d: unknown) => ({ 'openapi.json': JSON.stringify(d), 'other.yaml': 'x: {type: string}\n' });
      try {
        const base = await loadSpecFromTexts('openapi.json', files(doc()));
        const head = await loadSpecFromTexts('openapi.json', files(doc()));
        const r = diffSpecs(base, head, 'openapi.json', { asOf: '2026-01-01' });
        for (const c of r.changes) expect(typeof c.changeId).toBe('string');
        changes += r.changes.length;
      } catch (err) {
        if (err instanceof SpecParseError) continue; // a refusal with a message is the specified outcome
        throw new Error(`seed ${seed}: ${(err as Error).stack}`);
      }
    }
    // the generated shapes do reach the comparison (operations, parameters, schemas), not only the loader
    expect(changes).toBeGreaterThan(500);
  });

  it('never throws on random Swagger 2.0 shapes either', async () => {
    let changes = 0;
    for (let seed = 501; seed <= 700; seed++) {
      const rand = prng(seed);
      const doc = () => {
        const s = skeleton(rand);
        return { swagger: '2.0', paths: s.paths, definitions: (s.components as { schemas?: unknown } | undefined)?.schemas ?? randomTree(rand, 1), consumes: randomTree(rand, 3), basePath: randomTree(rand, 5) };
      };
      try {
        const base = await loadSpecFromTexts('swagger.json', { 'swagger.json': JSON.stringify(doc()), 'other.yaml': 'x: {type: string}\n' });
        const head = await loadSpecFromTexts('swagger.json', { 'swagger.json': JSON.stringify(doc()), 'other.yaml': 'x: {type: string}\n' });
        changes += diffSpecs(base, head, 'swagger.json').changes.length;
      } catch (err) {
        if (err instanceof SpecParseError) continue;
        throw new Error(`seed ${seed}: ${(err as Error).stack}`);
      }
    }
    expect(changes).toBeGreaterThan(150);
  });
});
