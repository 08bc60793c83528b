import { stringify } from 'yaml';
import { DiffContext } from '../../../src/axes/api-contract/context';
import { diffSpecs } from '../../../src/axes/api-contract/diff';
import { loadSpecFromTexts } from '../../../src/axes/api-contract/document';
import { buildModel } from '../../../src/axes/api-contract/model';
import { SchemaDiff } from '../../../src/axes/api-contract/rules/schema-diff';

type Json = Record<string, unknown>;
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
/** One GET returning Root and one POST sending Root, so every schema is compared in both directions. */
const spec = (schemas: Json, root = 'Root'): Json => ({
  openapi: '3.1.0',
  info: { title: 'cycles', version: '1' },
  paths: {
    '/r': {
      get: { responses: { '200': { description: 'ok', content: { 'application/json': { schema: ref(root) } } } } },
      post: { requestBody: { content: { 'application/json': { schema: ref(root) } } }, responses: { '204': { description: 'ok' } } },
    },
  },
  components: { schemas },
});

async function diffWithStats(base: Json, head: Json) {
  const b = await loadSpecFromTexts('openapi.json', { 'openapi.json': JSON.stringify(base) });
  const h = await loadSpecFromTexts('openapi.json', { 'openapi.json': JSON.stringify(head) });
  const result = diffSpecs(b, h, 'openapi.json');
  // the same comparison again, instrumented, to look at how many schema pairs it needed
  const ctx = new DiffContext(b.docs, h.docs, 'openapi.json');
  const schemas = new SchemaDiff(ctx);
  const bm = buildModel(b.docs, b.flavor);
  const hm = buildModel(h.docs, h.flavor);
  for (const [key, bo] of bm.operations) {
    const ho = hm.operations.get(key);
    if (!ho) continue;
    const bs = bo.requestBody?.content.get('application/json') ?? bo.responses.get('200')?.content.get('application/json');
    const hs = ho.requestBody?.content.get('application/json') ?? ho.responses.get('200')?.content.get('application/json');
    if (bs && hs) schemas.compare({ operation: key, display: key, direction: ho.requestBody ? 'request' : 'response', label: 'body' }, bs, hs);
  }
  return { ...result, comparedPairs: ctx.comparedPairs.size };
}

describe('$ref cycles terminate and changes inside them are found once', () => {
  it('self-reference through a property', async () => {
    const node = (extra: Json = {}) => ({ Root: { type: 'object', properties: { next: ref('Root'), value: { type: 'string', ...extra } } } });
    const r = await diffWithStats(spec(node()), spec(node({ maxLength: 5 })));
    expect(r.changes.map((c) => c.ruleId).sort()).toEqual(['request-max-length-decreased', 'response-max-length-decreased']);
  });

  it('mutual recursion A → B → A', async () => {
    const s = (bType: string) => ({ Root: { type: 'object', properties: { b: ref('B') } }, B: { type: 'object', properties: { a: ref('Root'), v: { type: bType } } } });
    const r = await diffWithStats(spec(s('integer')), spec(s('number')));
    expect(r.changes.map((c) => c.ruleId).sort()).toEqual(['request-type-widened', 'response-type-widened']);
  });

  it('through allOf', async () => {
    const s = (required: string[]) => ({ Root: { allOf: [ref('Root'), { type: 'object', required, properties: { x: { type: 'string' } } }] } });
    const r = await diffWithStats(spec(s([])), spec(s(['x'])));
    expect(r.changes.map((c) => c.ruleId).sort()).toEqual(['request-property-became-required', 'response-property-became-required']);
  });

  it('through items', async () => {
    const s = (min?: number) => ({ Root: { type: 'array', items: ref('Root'), ...(min ? { minItems: min } : {}) } });
    const r = await diffWithStats(spec(s()), spec(s(1)));
    expect(r.changes.map((c) => c.ruleId).sort()).toEqual(['request-min-items-increased', 'response-min-items-increased']);
  });

  it('through additionalProperties', async () => {
    const s = (extra: Json) => ({ Root: { type: 'object', additionalProperties: ref('Root'), ...extra } });
    const r = await diffWithStats(spec(s({})), spec(s({ maxProperties: 10 })));
    expect(r.changes.map((c) => c.ruleId).sort()).toEqual(['request-max-properties-decreased', 'response-max-properties-decreased']);
  });

  it('a $ref chain that only points at itself (A: $ref B, B: $ref A) resolves to nothing and is reported unresolved', async () => {
    const s = { Root: ref('B'), B: ref('Root') };
    const r = await diffWithStats(spec(s), spec(s));
    expect(r.changes).toEqual([]);
    expect(r.unresolvedRefs.length).toBeGreaterThan(0);
  });

  it('a cycle on one side only (base recursive, head flat) terminates', async () => {
    const base = { Root: { type: 'object', properties: { next: ref('Root') } } };
    const head = { Root: { type: 'object', properties: { next: { type: 'object', properties: { next: { type: 'object' } } } } } };
    const r = await diffWithStats(spec(base), spec(head));
    expect(r.comparedPairs).toBeLessThan(20);
  });
});

describe('no exponential expansion', () => {
  it('compares a 60-level diamond (2^60 paths if expanded) in linear time, reporting the deep change once per direction', async () => {
    const depth = 60;
    const chain = (lastType: string): Json => {
      const schemas: Json = {};
      for (let k = 0; k < depth; k++) {
        const next = ref(k + 1 < depth ? `S${k + 1}` : 'Leaf');
        schemas[k === 0 ? 'Root' : `S${k}`] = { type: 'object', properties: { a: next, b: next }, allOf: [next, next] };
      }
      schemas.Leaf = { type: lastType };
      return schemas;
    };
    const started = Date.now();
    const r = await diffWithStats(spec(chain('string')), spec(chain('integer')));
    expect(Date.now() - started).toBeLessThan(5000);
    expect(r.changes.map((c) => c.ruleId).sort()).toEqual(['request-type-changed', 'response-type-changed']);
    // linear: per level and direction, the composed schema and the composed property `a` (allOf of S(k+1)…)
    expect(r.comparedPairs).toBeLessThanOrEqual(4 * depth + 8);
  });
});

/** mulberry32: a seeded PRNG so every fuzz case can be replayed from its seed. */
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

function randomSchemas(rand: () => number, n: number): Json {
  const pick = <T>(xs: T[]) => xs[Math.floor(rand() * xs.length)];
  const name = (i: number) => (i === 0 ? 'Root' : `S${i}`);
  const anyRef = () => ref(name(Math.floor(rand() * n)));
  const leaf = () => pick([{ type: 'string' }, { type: 'integer' }, { type: 'number', maximum: 10 }, { type: 'string', enum: ['a', 'b'] }]);
  const sub = (): unknown => (rand() < 0.6 ? anyRef() : leaf());
  const schemas: Json = {};
  for (let i = 0; i < n; i++) {
    const shape = pick(['object', 'array', 'allOf', 'oneOf', 'map', 'alias', 'anyOf']);
    let s: unknown;
    switch (shape) {
      case 'object': {
        const properties: Json = {};
        const count = 1 + Math.floor(rand() * 4);
        for (let p = 0; p < count; p++) properties[`p${p}`] = sub();
        s = { type: 'object', properties, required: rand() < 0.5 ? ['p0'] : [] };
        break;
      }
      case 'array':
        s = { type: 'array', items: sub() };
        break;
      case 'allOf':
        s = { allOf: [sub(), sub()] };
        break;
      case 'oneOf':
        s = { oneOf: [anyRef(), anyRef(), sub()] };
        break;
      case 'anyOf':
        s = { anyOf: [sub(), sub()] };
        break;
      case 'map':
        s = { type: 'object', additionalProperties: sub() };
        break;
      default:
        s = anyRef(); // pure aliases, which can close ref-only cycles
    }
    schemas[name(i)] = s;
  }
  return schemas;
}

function mutate(rand: () => number, schemas: Json): Json {
  const out = JSON.parse(JSON.stringify(schemas)) as Record<string, Json>;
  const names = Object.keys(out);
  for (let m = 0; m < 1 + Math.floor(rand() * 6); m++) {
    const target = out[names[Math.floor(rand() * names.length)]];
    if (target.properties) {
      const props = target.properties as Json;
      const key = Object.keys(props)[0];
      if (rand() < 0.5) delete props[key];
      else props[`new${m}`] = ref(names[Math.floor(rand() * names.length)]);
    } else if (target.items) target.items = ref(names[Math.floor(rand() * names.length)]);
    else if (Array.isArray(target.oneOf)) (target.oneOf as unknown[]).reverse();
    else target.type = 'object';
  }
  return out;
}

describe('fuzz: generated cyclic specs', () => {
  it('terminates with bounded work and memory on 200 random cyclic specs', async () => {
    const heapBefore = process.memoryUsage().heapUsed;
    let maxPairs = 0;
    for (let seed = 1; seed <= 200; seed++) {
      const rand = prng(seed);
      const n = 5 + Math.floor(rand() * 60);
      const base = randomSchemas(rand, n);
      const head = mutate(rand, base);
      const r = await diffWithStats(spec(base), spec(head));
      // every pair is compared at most once per direction: never more than directions × base nodes × head nodes
      const nodes = (s: Json) => JSON.stringify(s).split('{').length;
      const bound = 2 * nodes(base) * nodes(head);
      if (r.comparedPairs > bound) throw new Error(`seed ${seed}: ${r.comparedPairs} pairs > ${bound}`);
      maxPairs = Math.max(maxPairs, r.comparedPairs);
      expect(r.changes.length).toBeLessThan(20 * n);
    }
    const heapGrowthMiB = (process.memoryUsage().heapUsed - heapBefore) / 1024 / 1024;
    expect(heapGrowthMiB).toBeLessThan(256);
    expect(maxPairs).toBeGreaterThan(0);
  });
});

describe('fuzz: properties of the diff on generated cyclic specs', () => {
  it('finds nothing between a generated spec and itself, a copy with every key order reversed, or that copy written as YAML', async () => {
    const reversed = (v: unknown): unknown =>
      Array.isArray(v) ? v.map(reversed) : typeof v === 'object' && v !== null ? Object.fromEntries(Object.entries(v).reverse().map(([k, x]) => [k, reversed(x)])) : v;
    for (let seed = 1000; seed < 1100; seed++) {
      const rand = prng(seed);
      const schemas = randomSchemas(rand, 5 + Math.floor(rand() * 40));
      const self = await diffWithStats(spec(schemas), spec(schemas));
      const reordered = await diffWithStats(spec(schemas), reversed(spec(schemas)) as Json);
      const asYaml = diffSpecs(
        await loadSpecFromTexts('openapi.json', { 'openapi.json': JSON.stringify(spec(schemas)) }),
        await loadSpecFromTexts('openapi.yaml', { 'openapi.yaml': stringify(reversed(spec(schemas))) }),
        'openapi.yaml',
      );
      const found = [...self.changes, ...reordered.changes, ...asYaml.changes];
      if (found.length > 0) throw new Error(`seed ${seed}: ${JSON.stringify(found[0])}`);
    }
  });

  it('gives the same changes and changeIds on every run', async () => {
    for (let seed = 2000; seed < 2030; seed++) {
      const rand = prng(seed);
      const base = randomSchemas(rand, 5 + Math.floor(rand() * 40));
      const head = mutate(rand, base);
      const first = await diffWithStats(spec(base), spec(head));
      const second = await diffWithStats(spec(base), spec(head));
      expect(second.changes).toEqual(first.changes);
    }
  });
});

describe('YAML aliases', () => {
  it('terminates on a YAML alias that points at its own ancestor (a cyclic object graph, no $ref at all)', async () => {
    const text = (t: string) =>
      [
        'openapi: 3.0.3',
        'info: {title: t, version: "1"}',
        'paths:',
        '  /n:',
        '    get:',
        '      responses:',
        '        "200":',
        '          description: ok',
        '          content:',
        '            application/json:',
        '              schema: &node',
        '                type: object',
        '                properties:',
        `                  v: {type: ${t}}`,
        '                  next: *node',
      ].join('\n');
    const b = await loadSpecFromTexts('openapi.yaml', { 'openapi.yaml': text('string') });
    const h = await loadSpecFromTexts('openapi.yaml', { 'openapi.yaml': text('integer') });
    expect(diffSpecs(b, h, 'openapi.yaml').changes.map((c) => c.ruleId)).toEqual(['response-type-changed']);
  });

  it('survives a YAML document whose aliases share objects across the spec', async () => {
    const text = [
      'openapi: 3.0.3',
      'info: {title: t, version: "1"}',
      'paths:',
      '  /a:',
      '    get:',
      '      responses:',
      '        "200": &ok',
      '          description: ok',
      '          content: {application/json: {schema: {type: string}}}',
      '  /b:',
      '    get:',
      '      responses:',
      '        "200": *ok',
    ].join('\n');
    const b = await loadSpecFromTexts('openapi.yaml', { 'openapi.yaml': text });
    const h = await loadSpecFromTexts('openapi.yaml', { 'openapi.yaml': stringify(JSON.parse(JSON.stringify(b.docs.root.node))) });
    expect(diffSpecs(b, h, 'openapi.yaml').changes).toEqual([]);
  });
});
