import * as path from 'node:path';
import { extractFacts } from '../../src/codegraph/extract';
import type { Definition, FileFacts, ImportDecl, Reference } from '../../src/codegraph/facts';
import { CodeGraph, symbolId, type SymbolInfo } from '../../src/codegraph/graph';
import { tsPathConfigOf, type CommitIndex, type IndexedFile, type TsPathConfig } from '../../src/codegraph/indexer';
import { loadGrammar } from '../../src/codegraph/languages/grammar-runtime';

jest.setTimeout(60_000);

/**
 * The graph's lookups are indexed (a file's definitions by name, a module's aliases and bindings, a
 * package's top-level names, a tsconfig's `paths` patterns) so that a reviewed commit's files cannot make
 * them superlinear. The indexes must not change any answer: a graph whose lookups are the scans they
 * replaced (copied below from graph.ts as it was) must produce the same edges, name matches, statistics
 * and resolutions, in the same order, on random facts; and the hostile shapes that took seconds now finish.
 */

function isWithin(infos: SymbolInfo[], from: number, candidate: SymbolInfo): boolean {
  for (let i = from; i >= 0; i = infos[i].def.parent) if (infos[i].def.parent === candidate.def.parent) return true;
  return false;
}

/** The scans the indexes replaced, as graph.ts had them (`this` is the graph). */
/* eslint-disable @typescript-eslint/no-explicit-any */
const scans: Record<string, (this: any, ...args: any[]) => unknown> = {
  // resolveReference's `infos.find(...)` for the file's own definitions.
  resolveReference(this: any, file: IndexedFile, ref: Reference, bindings: unknown, stars: ImportDecl[], infos: SymbolInfo[]) {
    const scope = {
      topLevel: (name: string) => infos.find((s) => s.def.name === name && s.def.parent === -1),
      visibleFrom: (name: string, from: number) => infos.find((s) => s.def.name === name && from >= 0 && isWithin(infos, from, s)),
    };
    return (CodeGraph.prototype as any).resolveReference.call(this, file, ref, bindings, stars, infos, scope);
  },
  // resolveFile's `byName.get(name).filter(...)`, of which the first five were kept.
  definedElsewhere(this: any, name: string, file: string, limit: number) {
    return ((this.byName.get(name) ?? []) as string[]).filter((id) => !id.startsWith(`${file}#`)).slice(0, limit);
  },
  // topLevelIn's (and the Go sibling / `dir:` loops') walk over the package's files.
  firstTopLevel(this: any, files: string[], name: string, accept: (file: string, s: SymbolInfo) => boolean) {
    for (const f of files) {
      const s = this.symbols.get(symbolId(f, name)) as SymbolInfo | undefined;
      if (s && s.def.parent === -1 && accept(f, s)) return s.id;
    }
    return undefined;
  },
  lookupExport(this: any, target: string, name: string, depth: number) {
    if (target.startsWith('dir:')) {
      for (const f of this.dirFiles.get(target.slice(4)) ?? []) {
        if (!f.endsWith('.go')) continue;
        const s = this.symbols.get(symbolId(f, name));
        if (s && s.def.parent === -1) return s.id;
      }
      return undefined;
    }
    if (target.startsWith('csns:')) {
      const [fromKey, ns] = this.splitTarget(target.slice(5));
      return this.topLevelIn(this.csNamespaces.get(ns) ?? [], name, undefined, this.keyFilter('csharp', fromKey));
    }
    if (target.startsWith('swift:')) return this.topLevelIn(this.swiftModules.get(target.slice(6)) ?? [], name);
    if (target.startsWith('pkg:')) {
      const [fromKey, pkg] = this.splitTarget(target.slice(4));
      return this.topLevelIn(this.javaPackages.get(pkg) ?? [], name, undefined, this.keyFilter('kotlin', fromKey));
    }
    const file = this.index.files.get(target);
    if (!file) return undefined;
    const facts: FileFacts = file.facts;
    const local = facts.exportAliases.find(([exported]) => exported === name)?.[1] ?? name;
    const own = this.symbols.get(symbolId(target, local));
    if (own && own.def.parent === -1) return own.id;
    for (const decl of facts.imports) {
      const reexported = decl.reexport || file.language === 'python' || file.language === 'rust' || local !== name || facts.exportAliases.some(([, l]) => l === local);
      if (!reexported) continue;
      const b = decl.bindings.find((x) => x.local === (decl.reexport ? name : local));
      if (!b || b.imported === '*') continue;
      const next = this.resolveModule(file, decl.source);
      if (next) {
        const found = this.resolveExport(next, b.imported, depth + 1);
        if (found) return found;
      }
    }
    for (const decl of facts.imports) {
      if (!decl.star || !(decl.reexport || ['python', 'rust', 'c', 'cpp'].includes(file.language))) continue;
      const next = this.resolveModule(file, decl.source);
      if (!next) continue;
      const found = this.resolveExport(next, name, depth + 1);
      if (found) return found;
    }
    return undefined;
  },
  mappedModule(this: any, filePath: string, source: string, extensions: string[]) {
    const config = (this.index.tsPathConfigs as TsPathConfig[]).filter((c) => c.dir === '' || filePath.startsWith(`${c.dir}/`)).sort((a, b) => b.dir.length - a.dir.length)[0];
    if (!config) return undefined;
    for (const { pattern, targets } of config.paths) {
      const star = pattern.indexOf('*');
      let captured: string | undefined;
      if (star < 0) captured = pattern === source ? '' : undefined;
      else if (source.startsWith(pattern.slice(0, star)) && source.endsWith(pattern.slice(star + 1)) && source.length >= pattern.length - 1) captured = source.slice(star, source.length - (pattern.length - star - 1));
      if (captured === undefined) continue;
      for (const t of targets) {
        const found = this.probe(t.replace('*', captured), extensions, ['index']);
        if (found) return found;
      }
    }
    return config.baseUrl !== undefined ? this.probe(config.baseUrl ? `${config.baseUrl}/${source}` : source, extensions, ['index']) : undefined;
  },
};

/** A CodeGraph whose lookups are the old scans. */
class ScanningGraph extends CodeGraph {}
for (const [method, scan] of Object.entries(scans)) {
  if (typeof (CodeGraph.prototype as any)[method] !== 'function') throw new Error(`CodeGraph has no ${method} to stand in for`);
  (ScanningGraph.prototype as any)[method] = scan;
}
/* eslint-enable @typescript-eslint/no-explicit-any */

function indexOf(files: IndexedFile[], tsPathConfigs: TsPathConfig[] = [], goModules: CommitIndex['goModules'] = []): CommitIndex {
  return {
    commit: 'c',
    files: new Map(files.map((f) => [f.path, f])),
    unsupported: [],
    skipped: [],
    languages: {},
    fileCount: files.length,
    symbolCount: 0,
    parsedBlobs: 0,
    cachedBlobs: 0,
    goModules,
    tsPathConfigs,
    dartPackages: [],
    psr4Roots: [],
    csProjects: [],
    gradleModules: [],
  } as unknown as CommitIndex;
}

/** A small deterministic generator (mulberry32), so a failing seed can be replayed. */
function random(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)];
  return { next, int, pick, chance: (p: number) => next() < p };
}

const NAMES = ['a', 'b', 'c', 'd', 'e', 'f', 'default', 'Box', 'run', 'x'];

/** Random facts for one commit: TypeScript/JavaScript modules with tsconfig paths, Python, a Go package and a Kotlin package (both over 8 files). */
function randomCommit(seed: number): CommitIndex {
  const r = random(seed);
  const oddIds = r.chance(0.2); // a `#` in a qualified name, or a clipped id: the package index must step aside
  // `pkg/d` and `src/lib/c` exist as .ts and .js: TypeScript and JavaScript importers resolve them differently.
  const ecma = ['src/a.ts', 'src/b.ts', 'src/lib/c.ts', 'src/lib/c.js', 'src/lib/index.ts', 'pkg/d.ts', 'pkg/d.js', 'pkg/e.js', 'app/f.ts', 'app/g.js', 'root.ts'];
  // A Python file in the Go package's directory: a Go import of the directory sees only its .go files.
  const python = ['py/__init__.py', 'py/m1.py', 'py/m2.py', 'py/sub/__init__.py', 'py/sub/m3.py', 'go/p/gen.py'];
  const go = Array.from({ length: 9 + r.int(4) }, (_, i) => `go/p/g${i}.go`).concat(['go/q/h0.go', 'go/q/h1.go']);
  const kotlin = Array.from({ length: 9 + r.int(4) }, (_, i) => `kt/app/K${i}.kt`).concat(['kt/other/L0.kt']);
  if (oddIds && r.chance(0.5)) go.push(`go/p/${'long'.repeat(500)}.go`);
  const ecmaSources = ['./a', './b', './lib', './lib/c', '../pkg/d', '../pkg/e.js', './missing', '@app/c', '@app/lib/c', 'exact', 'k1', 'kx-suf', 'lib/c', 'pkg/d', 'react', ''];
  const sourcesOf: Record<string, string[]> = {
    python: ['.m1', '.m2', '.sub', '.sub.m3', '..py', 'py.m1', 'os'],
    go: ['example.com/m/p', 'example.com/m/q', 'fmt'],
    kotlin: ['app', 'app.K0', 'app.K1', 'other', 'other.L0', 'java.util'],
  };
  const fileOf = (p: string, language: string, packageName?: string): IndexedFile => {
    const defs: Definition[] = [];
    for (let i = 0, n = r.int(9); i < n; i++) {
      const parent = i > 0 && r.chance(0.5) ? r.int(i) : -1;
      const name = r.pick(NAMES);
      const qname = parent < 0 ? name : `${defs[parent].qname}${oddIds && r.chance(0.2) ? '#' : '.'}${name}`;
      defs.push({ name, qname, kind: r.pick(['function', 'class', 'method', 'interface']), start: i + 1, end: i + 1 + r.int(5), exported: r.chance(0.5), parent });
    }
    const sources = sourcesOf[language] ?? ecmaSources;
    const imports: ImportDecl[] = [];
    for (let i = 0, n = r.int(6); i < n; i++) {
      const bindings = Array.from({ length: r.int(4) }, () => ({ local: r.pick(NAMES), imported: r.chance(0.2) ? '*' : r.pick(NAMES) }));
      imports.push({ source: r.pick(sources), bindings, ...(r.chance(0.4) ? { reexport: true } : {}), ...(r.chance(0.3) ? { star: true } : {}), ...(r.chance(0.15) ? { require: true } : {}) });
    }
    const locals = imports.flatMap((d) => d.bindings.map((b) => b.local));
    const refs: Reference[] = [];
    for (let i = 0, n = r.int(12); i < n; i++) {
      const qualifier = r.chance(0.5) ? undefined : r.pick(['this', ...locals, ...NAMES, 'ns', 'p::q']);
      refs.push({ name: r.pick(NAMES), ...(qualifier !== undefined ? { qualifier } : {}), kind: 'call', line: i + 1, from: defs.length && r.chance(0.6) ? r.int(defs.length) : -1 });
    }
    const exportAliases = Array.from({ length: r.int(4) }, (): [string, string] => [r.pick(NAMES), r.pick(NAMES)]);
    const facts: FileFacts = { defs, refs, imports, exportAliases, ...(packageName !== undefined ? { packageName } : {}) };
    return { path: p, blob: p, language, facts } as IndexedFile;
  };
  const files = [
    ...ecma.map((p) => fileOf(p, p.endsWith('.js') ? 'javascript' : 'typescript')),
    ...python.map((p) => fileOf(p, 'python')),
    ...go.map((p) => fileOf(p, 'go', 'p')),
    ...kotlin.map((p) => fileOf(p, 'kotlin', p.includes('/other/') ? 'other' : 'app')),
  ];
  const patterns = ['@app/*', '@app/lib/*', 'exact', 'k*', 'k1', 'k*-suf', '*', 'lib/*', 'pkg/*', '*/c', 'kx*'];
  const targets = ['src/*', 'src/lib/*', 'pkg/*', 'nowhere/*', 'src/lib/c', 'pkg/d.ts'];
  const config = (dir: string): TsPathConfig => ({
    dir,
    ...(r.chance(0.7) ? { baseUrl: r.pick(['', 'src', 'pkg']) } : {}),
    paths: [...new Set(Array.from({ length: r.int(6) }, () => r.pick(patterns)))].map((pattern) => ({ pattern, targets: Array.from({ length: 1 + r.int(2) }, () => r.pick(targets)) })),
  });
  const configs = [config(''), ...(r.chance(0.5) ? [config('src')] : []), ...(r.chance(0.3) ? [config('src')] : [])];
  return indexOf(files, configs, [{ dir: 'go', module: 'example.com/m' }]);
}

/** Everything the graph answers, in order: its edges, name matches and counts, then every module and export resolution. */
function answers(g: CodeGraph, index: CommitIndex): unknown[] {
  const out: unknown[] = [g.edges, g.nameMatches, g.stats];
  for (const file of index.files.values()) {
    for (const decl of file.facts.imports) {
      const target = g.resolveModule(file, decl.source);
      out.push(target);
      if (target) for (const name of NAMES) out.push(g.resolveExport(target, name, 0));
    }
    for (const name of NAMES) out.push(g.resolveExport(file.path, name, 0));
  }
  return out;
}

describe('graph lookups: indexed, with the answers of the scans they replaced', () => {
  it('gives the same edges, name matches and resolutions as the scans on random commits', () => {
    let edges = 0;
    let nameMatches = 0;
    for (let seed = 1; seed <= 300; seed++) {
      const index = randomCommit(seed);
      const fast = new CodeGraph(index);
      const scanning = new ScanningGraph(index);
      expect({ seed, answers: JSON.stringify(answers(fast, index)) }).toEqual({ seed, answers: JSON.stringify(answers(scanning, index)) });
      edges += fast.edges.length;
      nameMatches += fast.nameMatches.length;
    }
    // The fixtures do exercise resolution, not only misses.
    expect(edges).toBeGreaterThan(1000);
    expect(nameMatches).toBeGreaterThan(1000);
  });

  it('keeps the scan where an id is ambiguous: with a `#` in a qualified name, file `p#a` + name `b` is the id of `p`\'s `a#b`', () => {
    const def = (name: string, qname = name): Definition => ({ name, qname, kind: 'function', start: 1, end: 1, exported: true, parent: -1 });
    const go = (p: string, defs: Definition[], refs: Reference[] = []): IndexedFile => ({ path: p, blob: p, language: 'go', facts: { defs, refs, imports: [], exportAliases: [], packageName: 'p' } }) as unknown as IndexedFile;
    const files = Array.from({ length: 10 }, (_, i) => go(`p/g${i}.go`, i ? [def(`f${i}`)] : [def('f0'), def('b', 'a#b')]));
    files.push(go('p/g0.go#a', []), go('p/use.go', [], [{ name: 'b', kind: 'call', line: 1, from: -1 }]));
    const index = indexOf(files);
    const fast = new CodeGraph(index);
    // The sibling scan asks for `symbolId('p/g0.go#a', 'b')`, which is the id of g0.go's `a#b`.
    expect(fast.edges.map((e) => `${e.from} -> ${e.to}`)).toEqual(['p/use.go -> p/g0.go#a#b']);
    expect(JSON.stringify(answers(fast, index))).toBe(JSON.stringify(answers(new ScanningGraph(index), index)));
  });

  const rep = (n: number, f: (i: number) => string) => Array.from({ length: n }, (_, i) => f(i)).join('');
  async function parsed(sources: Record<string, string>, tsconfig?: string): Promise<CommitIndex> {
    const grammars = { typescript: await loadGrammar('typescript'), go: await loadGrammar('go') };
    const files = Object.entries(sources).map(([p, text]) => {
      const language = path.extname(p) === '.go' ? 'go' : 'typescript';
      return { path: p, blob: p, language, facts: extractFacts(grammars[language], text, { parseBudgetMs: 1e9 }) } as IndexedFile;
    });
    const config = tsconfig !== undefined ? tsPathConfigOf('tsconfig.json', tsconfig) : undefined;
    return indexOf(files, config ? [config] : []);
  }

  it('on parsed code: same answers as the scans (definitions in nested scopes, aliases, re-exports, paths)', async () => {
    const index = await parsed(
      {
        'src/a.ts': "import { run as go, Box } from './b';\nimport * as ns from './t';\nimport k from '@x/b';\nexport function a() { go(); new Box(); ns.c1(); ns.b0(); k(); }\nclass C { m() { a(); helper(); this.m(); } }\nfunction helper() { function inner() { helper(); } }\n",
        'src/b.ts': "export { run } from './c';\nexport * from './d';\nexport class Box { open() {} }\nexport default function main() {}\n",
        'src/c.ts': "import { x } from './d';\nexport { x as y };\nexport function run() { y(); }\n",
        'src/d.ts': 'export const x = 1;\nexport function helper() {}\n',
        'src/t.ts': "import { a0 } from './m0';\nexport { b0 as c1 };\nfunction b0() {}\nexport * from './c';\n",
        'src/m0.ts': 'export function a0() {}\n',
      },
      JSON.stringify({ compilerOptions: { baseUrl: '.', paths: { '@x/*': ['src/*'], exact: ['src/d'] } } }),
    );
    const fast = new CodeGraph(index);
    expect(fast.edges.length).toBeGreaterThan(5);
    expect(JSON.stringify(answers(fast, index))).toBe(JSON.stringify(answers(new ScanningGraph(index), index)));
  });

  // The shapes below took 11–16 s each before the indexes (ts-register on this machine); now well under one.
  it('a file of n definitions and n references to names defined nowhere (~1 MB)', async () => {
    const n = 32_000;
    const g = new CodeGraph(await parsed({ 'a.ts': rep(n, (i) => `function h${i}() {}\n`) + rep(n, (i) => `z${i}();\n`) }));
    expect(g.stats.unknown).toBe(n);
  });

  it('n member lookups through a namespace import of a module with n imports and n export aliases', async () => {
    const n = 1_500;
    const g = new CodeGraph(
      await parsed({
        't.ts': rep(n, (i) => `import { a${i} } from './m${i}';\n`) + rep(n, (i) => `export { b${i} as c${i} };\n`),
        'c.ts': "import * as ns from './t';\n" + rep(n, (i) => `ns.q${i}();\n`),
      }),
    );
    expect(g.stats.unknown).toBe(n);
  });

  it('n bare specifiers against a tsconfig with n `paths` patterns', async () => {
    const n = 26_000;
    const paths: Record<string, string[]> = {};
    for (let i = 0; i < n; i++) paths[`p${i}/*`] = [`src/${i}/*`];
    const g = new CodeGraph(await parsed({ 'a.ts': rep(n, (i) => `import x${i} from 'k${i}';\n`) + rep(n, (i) => `x${i}();\n`) }, JSON.stringify({ compilerOptions: { baseUrl: '.', paths } })));
    expect(g.stats.external).toBe(n);
  });

  it('n references name-matched against n same-named methods of their own file', async () => {
    const n = 12_000;
    const g = new CodeGraph(await parsed({ 'a.ts': rep(n, (i) => `class C${i} { m() {} }\n`) + rep(n, (i) => `function f${i}() { m(); }\n`), 'b.ts': 'export function m() {}\n' }));
    expect(g.stats.nameMatch).toBe(n);
    expect(g.nameMatches[0].candidates).toEqual(['b.ts#m']);
  });

  it('a Go package of many files and one file referencing n names defined nowhere', async () => {
    const n = 40_000;
    const files: Record<string, string> = { 'p/main.go': `package p\n\nfunc main() {\n${rep(n, (i) => `\tz${i}()\n`)}}\n` };
    for (let i = 0; i < n >> 3; i++) files[`p/f${i}.go`] = `package p\n\nfunc f${i}() {}\n`;
    const g = new CodeGraph(await parsed(files));
    expect(g.stats.unknown).toBe(n);
  });
});
