import * as fs from 'node:fs';
import * as path from 'node:path';
import { diffSpecs } from '../../../src/axes/api-contract/diff';
import { loadSpecFromTexts } from '../../../src/axes/api-contract/document';
import { needsDecision } from '../../../src/axes/types';

/**
 * Property: renaming a component — and every `$ref` to it — changes nothing a client sees, so it never
 * yields a breaking (or warning) change, whichever component is renamed and however many at once. Run over
 * every spec with components among the fixtures on disk plus generated specs with heavy allOf use.
 */
type Json = Record<string, unknown>;
const FIXTURES = path.join(__dirname, 'fixtures');

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

/** A copy of the spec with components renamed (old → new) and every $ref to them (and into them) rewritten. */
function renamed(spec: Json, names: Map<string, string>): Json {
  const prefix = spec.swagger ? '#/definitions/' : '#/components/schemas/';
  const rewrite = (ref: string): string => {
    if (!ref.startsWith(prefix)) return ref;
    const rest = ref.slice(prefix.length);
    const name = rest.split('/')[0];
    const to = names.get(name.replace(/~1/g, '/').replace(/~0/g, '~'));
    return to === undefined ? ref : `${prefix}${to.replace(/~/g, '~0').replace(/\//g, '~1')}${rest.slice(name.length)}`;
  };
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (typeof v !== 'object' || v === null) return v;
    const out: Json = {};
    for (const [k, x] of Object.entries(v)) out[k] = k === '$ref' && typeof x === 'string' ? rewrite(x) : walk(x);
    return out;
  };
  const out = walk(spec) as Json;
  const holder = (spec.swagger ? out : (out.components as Json)) as Json;
  const key = spec.swagger ? 'definitions' : 'schemas';
  const schemas = holder[key] as Json;
  holder[key] = Object.fromEntries(Object.entries(schemas).map(([n, s]) => [names.get(n) ?? n, s]));
  return out;
}

function componentNames(spec: Json): string[] {
  const schemas = spec.swagger ? spec.definitions : (spec.components as Json | undefined)?.schemas;
  return schemas && typeof schemas === 'object' ? Object.keys(schemas) : [];
}

/** Specs in the shape of generated ones: components composed through allOf chains, shared bases, oneOf unions. */
function generatedSpec(rand: () => number, n: number): Json {
  const pick = <T>(xs: T[]) => xs[Math.floor(rand() * xs.length)];
  const name = (i: number) => `Model_${i.toString(16)}${Math.floor(rand() * 1e6).toString(36)}`;
  const names = Array.from({ length: n }, (_, i) => name(i));
  const ref = (i: number) => ({ $ref: `#/components/schemas/${names[i]}` });
  const schemas: Json = {};
  names.forEach((nm, i) => {
    const later = () => ref(i + 1 + Math.floor(rand() * Math.max(1, n - i - 1)) >= n ? n - 1 : i + 1 + Math.floor(rand() * Math.max(1, n - i - 1)));
    const leaf = { type: 'object', properties: { [`f${i}`]: pick([{ type: 'string' }, { type: 'integer', maximum: 9 }, { type: 'string', enum: ['a', 'b'] }]) }, required: rand() < 0.5 ? [`f${i}`] : [] };
    schemas[nm] =
      i >= n - 2 ? leaf : pick([{ allOf: [later(), leaf] }, { allOf: [later(), later()] }, { oneOf: [later(), leaf] }, { type: 'object', properties: { child: later(), list: { type: 'array', items: later() } } }, leaf]);
  });
  const content = (schema: unknown) => ({ content: { 'application/json': { schema } } });
  return {
    openapi: rand() < 0.5 ? '3.0.3' : '3.1.0',
    info: { title: 'generated', version: '1' },
    paths: {
      '/a': { get: { responses: { '200': { description: 'ok', ...content(ref(0)) } } }, post: { requestBody: content(ref(1)), responses: { '201': { description: 'ok' } } } },
      '/b': { put: { requestBody: content({ allOf: [ref(2), ref(Math.min(3, n - 1))] }), responses: { '200': { description: 'ok', ...content(ref(Math.min(4, n - 1))) } } } },
    },
    components: { schemas },
  };
}

async function breakingOfRename(spec: Json, names: Map<string, string>) {
  const base = await loadSpecFromTexts('openapi.json', { 'openapi.json': JSON.stringify(spec) });
  const head = await loadSpecFromTexts('openapi.json', { 'openapi.json': JSON.stringify(renamed(spec, names)) });
  return diffSpecs(base, head, 'openapi.json', { asOf: '2026-06-01' }).changes.filter((c) => needsDecision(c.severity));
}

const fixtureSpecs = (): Array<[string, Json]> => {
  const out: Array<[string, Json]> = [];
  for (const set of ['families', 'rules']) {
    for (const d of fs.readdirSync(path.join(FIXTURES, set)).sort()) {
      for (const side of ['base', 'head']) {
        const spec = JSON.parse(fs.readFileSync(path.join(FIXTURES, set, d, `${side}.json`), 'utf8')) as Json;
        if (componentNames(spec).length > 0) out.push([`${set}/${d}/${side}`, spec]);
      }
    }
  }
  return out;
};

describe('property: renaming components never breaks anything', () => {
  it('renaming any single component of any fixture spec (and every ref to it) yields no breaking or warning change', async () => {
    const rand = prng(17);
    let renames = 0;
    for (const [where, spec] of fixtureSpecs()) {
      for (const name of componentNames(spec)) {
        const to = `${name}-${Math.floor(rand() * 0xffffffff).toString(16)}`;
        const found = await breakingOfRename(spec, new Map([[name, to]]));
        expect({ where, name, found }).toEqual({ where, name, found: [] });
        renames++;
      }
    }
    expect(renames).toBeGreaterThan(100);
  });

  it('renaming a random subset of the components of 60 generated allOf-heavy specs yields no breaking or warning change', async () => {
    for (let seed = 1; seed <= 60; seed++) {
      const rand = prng(seed);
      const spec = generatedSpec(rand, 6 + Math.floor(rand() * 20));
      const names = new Map(componentNames(spec).filter(() => rand() < 0.6).map((n) => [n, `${n.split('_')[0]}_${Math.floor(rand() * 1e9).toString(36)}`]));
      const found = await breakingOfRename(spec, names);
      expect({ seed, found }).toEqual({ seed, found: [] });
    }
  });

  it('is not vacuous: a real change next to the renames is still found', async () => {
    const spec = generatedSpec(prng(3), 12);
    const names = new Map(componentNames(spec).map((n) => [n, `${n}_renamed`]));
    const head = renamed(spec, names) as { paths: Record<string, Record<string, Json>> };
    head.paths['/a'].get.responses = { '204': { description: 'nothing' } };
    const b = await loadSpecFromTexts('openapi.json', { 'openapi.json': JSON.stringify(spec) });
    const h = await loadSpecFromTexts('openapi.json', { 'openapi.json': JSON.stringify(head) });
    const found = diffSpecs(b, h, 'openapi.json', { asOf: '2026-06-01' }).changes.filter((c) => needsDecision(c.severity));
    expect(found.map((c) => c.ruleId)).toEqual(['response-success-status-removed']);
  });
});
