import * as fs from 'node:fs';
import * as path from 'node:path';
import { extractFacts } from '../../src/codegraph/extract';
import { loadGrammar } from '../../src/codegraph/languages/grammar-runtime';

jest.setTimeout(120_000);

const ROOT = path.resolve(__dirname, '../..');

function sources(dir: string, ext: RegExp): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const abs = path.join(d, e.name);
      if (e.isDirectory()) walk(abs);
      else if (ext.test(e.name)) out.push(abs);
    }
  };
  walk(path.join(ROOT, dir));
  return out;
}

/**
 * The hand-written ECMAScript tags (ecma-tags.ts) replace the tags query on the hot path: on real code of
 * several styles (this repository's TypeScript, zod's, NestJS's and Babel's published JavaScript; the TSX
 * grammar on TypeScript sources too) both give the same facts, byte for byte, including the order of the
 * references the query returned.
 */
describe('hand-written ECMAScript tags = the tags query', () => {
  const cases: Array<[string, string, RegExp]> = [
    ['typescript', 'src', /\.ts$/],
    ['tsx', 'src/codegraph', /\.ts$/],
    ['typescript', 'node_modules/zod/src/v4/core', /\.ts$/],
    ['javascript', 'node_modules/@nestjs/core', /\.js$/],
    ['javascript', 'node_modules/@babel/core/lib', /\.js$/],
  ];
  it.each(cases)('%s on %s', async (language, dir, ext) => {
    const grammar = await loadGrammar(language);
    const files = sources(dir, ext);
    expect(files.length).toBeGreaterThan(10);
    let compared = 0;
    let withDefsAndRefs = 0;
    for (const file of files) {
      const text = fs.readFileSync(file, 'utf8');
      const byQuery = extractFacts(grammar, text, { tagsByQuery: true });
      const byHand = extractFacts(grammar, text);
      expect({ file, facts: JSON.stringify(byHand) }).toEqual({ file, facts: JSON.stringify(byQuery) });
      compared++;
      if (byQuery.defs.length && byQuery.refs.some((r) => r.kind !== 'use')) withDefsAndRefs++;
    }
    // The comparison is about real extraction, not empty facts.
    expect(withDefsAndRefs).toBeGreaterThan(compared / 3);
  });

  it('covers every pattern of the query: one source that uses each form', async () => {
    const ts = await loadGrammar('typescript');
    const source = [
      'export const answer = 42, handler = () => 1;',
      'var legacy = function () {};',
      'export default x = compute();',
      'let y = 1; y = () => 2;',
      'obj.prop = function named() {};',
      'const table = { run: () => go(), stop: function () {} };',
      'function* gen() { yield 1; }',
      'const e = function expr() {};',
      'abstract class Base extends Root { abstract size(): number; field = (a: Thing) => a; }',
      'interface Shape { area(): number }',
      'type Alias = string;',
      'enum Color { Red }',
      'namespace Space { export function inner() { return new Widget(); } }',
      'declare module Legacy { }',
      'declare function ambient(x: Input): void;',
      'class Impl { constructor() { this.start(); require("x"); } method() { return new ns.Klass(); } #hidden() {} }',
      'const k = class Named {};',
      'if (a) { const nested = () => 3; }',
      'foo(bar).baz(qux).quux`tpl`;',
      // Names the source scan must hand back to the tree: non-ASCII letters, unicode escapes.
      'const café = () => 1; function \\u0061bc() {} cafés(); naïve.run(); const x$1 = (v: Ünï) => v;',
    ].join('\n');
    const byQuery = extractFacts(ts, source, { tagsByQuery: true });
    const byHand = extractFacts(ts, source);
    expect(JSON.stringify(byHand)).toBe(JSON.stringify(byQuery));
    expect(byQuery.defs.map((d) => `${d.kind}:${d.qname}`)).toEqual(expect.arrayContaining(['constant:answer', 'function:handler', 'class:Base', 'method:Base.size', 'method:Base.field', 'interface:Shape', 'type:Alias', 'enum:Color', 'module:Space', 'function:Space.inner', 'function:ambient', 'method:Impl.method', 'function:gen', 'function:prop']));
    expect(byQuery.refs.map((r) => `${r.kind}:${r.qualifier ?? ''}.${r.name}`)).toEqual(expect.arrayContaining(['class:.Root', 'type:.Thing', 'class:.Widget', 'call:this.start', 'class:.ns.Klass', 'call:.foo', 'call:?.baz', 'call:?.quux', 'call:.cafés', 'call:?.run', 'type:.Ünï']));
    expect(byQuery.defs.map((d) => d.name)).toEqual(expect.arrayContaining(['café', '\\u0061bc', 'x$1']));

    const js = await loadGrammar('javascript');
    const jsSource = 'class A { handle = () => this.go(); static make = function () {}; }\nmodule.exports = function main() { return new A(); };\n';
    expect(JSON.stringify(extractFacts(js, jsSource))).toBe(JSON.stringify(extractFacts(js, jsSource, { tagsByQuery: true })));
  });
});
