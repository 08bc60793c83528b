import { extractFacts } from '../../src/codegraph/extract';
import { loadGrammar } from '../../src/codegraph/languages/grammar-runtime';
import { extractFactsWithTypeScript } from '../../src/codegraph/typescript-parser';

const CLEAN = `import { helper, type Opts } from './helper';
import * as ns from './ns';

export interface Store {
  get(key: string): number;
  set(key: string, value: number): void;
}

export class Cache implements Store {
  private map = new Map<string, number>();
  get(key: string): number {
    return this.map.get(key) ?? helper(key);
  }
  set(key: string, value: number): void {
    this.map.set(key, ns.normalize(value));
  }
  protected clear = () => this.map.clear();
}

export type Key = string;
export enum Mode { A, B }
export const DEFAULT = 3;
const local = 1;

export function build(opts: Opts): Cache {
  const inner = (x: number) => x + local;
  function nested(): number {
    return inner(DEFAULT);
  }
  nested();
  return new Cache();
}

export { local as exportedLocal };
export default build;
`;

const key = (f: ReturnType<typeof extractFacts>) => f.defs.map((d) => `${d.qname}|${d.kind}|${d.start}-${d.end}|${d.exported ? 'exported' : ''}`);

describe('TypeScript-parser fallback (files tree-sitter-typescript rejects)', () => {
  it('gives the same definitions, imports and export aliases as the tree-sitter path on a file both parse', async () => {
    const viaTreeSitter = extractFacts(await loadGrammar('typescript'), CLEAN);
    expect(viaTreeSitter.hasErrors).toBeUndefined();
    const viaTs = extractFactsWithTypeScript(CLEAN, 'typescript');
    expect(key(viaTs)).toEqual(key(viaTreeSitter));
    expect(viaTs.imports).toEqual(viaTreeSitter.imports);
    expect(viaTs.exportAliases).toEqual(viaTreeSitter.exportAliases);
    // The references the graph resolves: calls, `new`, uses of imported names with their qualifiers.
    const refs = (f: typeof viaTs) => new Set(f.refs.map((r) => `${r.qualifier ? `${r.qualifier}.` : ''}${r.name}@${r.line}`));
    for (const r of ['helper@12', 'ns.normalize@15', 'Cache@31', 'inner@28', 'nested@30']) {
      expect(refs(viaTreeSitter)).toContain(r);
      expect(refs(viaTs)).toContain(r);
    }
  });

  it('parses what 0.23.2 cannot: generic call signatures without semicolons, `export type * from`, `true | false extends (…)`', async () => {
    const text = `export type * from './types';\nexport interface IProduce {\n  <R extends Function>(\n    recipe: R\n  ): R\n  <S>(\n    recipe: (s: S) => S\n  ): (s: S) => S\n}\nexport type IfAvailable<T, F = void> =\n  true | false extends (T extends never ? true : false)\n    ? F\n    : T\nexport function after(): number {\n  return 1;\n}\n`;
    const grammar = await loadGrammar('typescript');
    const tree = grammar.parser.parse(text)!;
    expect(tree.rootNode.hasError).toBe(true);
    tree.delete();
    const facts = extractFacts(grammar, text);
    expect(facts.parser).toBe('typescript');
    expect(facts.hasErrors).toBeUndefined();
    expect(facts.defs.map((d) => [d.qname, d.kind, d.start, d.end])).toEqual([
      ['IProduce', 'interface', 2, 9],
      ['IfAvailable', 'type', 10, 13],
      ['after', 'function', 14, 16],
    ]);
    expect(facts.imports).toEqual([{ source: './types', bindings: [], reexport: true, star: true }]);
  });

  it('a text broken for TypeScript too keeps hasErrors, so the computation reports it', () => {
    expect(extractFactsWithTypeScript('export function h( {\n', 'typescript').hasErrors).toBe(true);
  });
});
