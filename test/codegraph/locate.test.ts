import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { Node } from 'web-tree-sitter';
import { extractFacts, IN_THREAD_PARSE_MS } from '../../src/codegraph/extract';
import { closeSharedExtractPool } from '../../src/codegraph/extract-pool';
import { FactsCache } from '../../src/codegraph/facts-cache';
import { docLinesWithin } from '../../src/codegraph/doc-lines';
import { docLinesOf } from '../../src/codegraph/doc-lines-of';
import { indexCommit } from '../../src/codegraph/indexer';
import { gitRepoSuite } from '../support/git-repo-suite';
import { loadGrammar } from '../../src/codegraph/languages/grammar-runtime';
import { locateRanges } from '../../src/codegraph/locate';

jest.setTimeout(120_000);

/**
 * locate.ts answers what `descendantForIndex` and `Node.parent` answer, by one walk down the tree in
 * text order. Both of those start at the root, so asking them per identifier of a deeply nested file was
 * quadratic: 50,000 nested calls `f(f(…))` (150 KB) held the indexer for 85 s of CPU, and the 1 MiB files
 * it parses for hours — anyone whose branch gets reviewed can write one.
 */

const golden = JSON.parse(fs.readFileSync(path.join(__dirname, 'facts-golden.json'), 'utf8')) as Array<{ language: string; name: string; source: string }>;

/** 20,000 nested calls of an imported name (or a chain of 20,000 additions): every one a use, or a reference. */
function nested(depth: number): Array<[language: string, source: string]> {
  return [
    ['javascript', `import { f } from './m';\nexport const y = ${'f('.repeat(depth)}1${')'.repeat(depth)};\n`],
    ['typescript', `import { f } from './m';\nexport const y = ${Array(depth).fill('f').join(' + ')};\n`],
    ['python', `from m import f\ny = ${'f('.repeat(depth)}1${')'.repeat(depth)}\n`],
    ['go', `package p\n\nimport f "example.com/f"\n\nvar y = ${'f.X('.repeat(depth)}1${')'.repeat(depth)}\n`],
    ['java', `package p;\nimport a.f;\nclass C { Object y = ${'f.g('.repeat(depth)}1${')'.repeat(depth)}; }\n`],
    ['dart', `import 'f.dart';\nvar y = ${'f.g('.repeat(depth)}1${')'.repeat(depth)};\n`],
    ['swift', `import F\nlet y = ${'f.g('.repeat(depth)}1${')'.repeat(depth)}\n`],
  ];
}
const samples = [...golden, ...nested(200).map(([language, source]) => ({ language, name: `200 nested ${language}`, source }))];

describe('locateRanges', () => {
  it.each(samples.map((g) => [g.name, g] as const))('finds what descendantForIndex and .parent find, for every word of %s', async (_name, g) => {
    const grammar = await loadGrammar(g.language);
    const tree = grammar.parser.parse(g.source)!;
    try {
      const root = tree.rootNode;
      const words = [...g.source.matchAll(/[A-Za-z_$][\w$]*/g)].map((m) => [m.index!, m.index! + m[0].length] as const);
      expect(words.length).toBeGreaterThan(10);
      // Shuffled: the answer does not depend on the order asked in.
      const asked = words.map((w, i) => [w, (i * 7919) % words.length] as const).sort((a, b) => a[1] - b[1]).map(([w]) => w);
      const found = locateRanges(root, asked, new Set(['member_expression', 'call', 'attribute', 'selector_expression', 'field_expression', 'method_invocation', 'scoped_identifier']));
      asked.forEach(([start, end], i) => {
        const d = root.descendantForIndex(start, end)!;
        const f = found[i]!;
        expect({ start: f.start, end: f.end, type: f.type, row: f.row }).toEqual({ start: d.startIndex, end: d.endIndex, type: d.type, row: d.startPosition.row });
        expect(f.parentType).toBe(d.parent?.type ?? null);
        expect(f.ancestors.map((a) => a.id)).toEqual([d.parent, d.parent?.parent, d.parent?.parent?.parent].filter((a) => a).map((a) => a!.id));
        if (f.parentFirstNamed) expect(f.parentFirstNamed).toEqual([d.parent!.firstNamedChild!.startIndex, d.parent!.firstNamedChild!.endIndex]);
      });
      // Asked for a node by id, it stops there even where a node below has the same range.
      const identifiers = root.descendantsOfType('identifier').filter((n): n is Node => !!n);
      const byId = locateRanges(root, identifiers.map((n) => [n.startIndex, n.endIndex, n.id] as const));
      identifiers.forEach((n, i) => expect(byId[i]!.ancestors[0]?.id).toBe(n.parent!.id));
    } finally {
      tree.delete();
    }
  });

  it('answers null for a range outside the tree, and [] for no ranges', async () => {
    const grammar = await loadGrammar('javascript');
    const tree = grammar.parser.parse('const a = 1;\n')!;
    try {
      expect(locateRanges(tree.rootNode, [])).toEqual([]);
      expect(locateRanges(tree.rootNode, [[100, 101]])).toEqual([null]);
    } finally {
      tree.delete();
    }
  });
});

describe('extraction of deeply nested code does work linear in the file', () => {
  const DEPTH = 20_000;
  const cases = nested(DEPTH);

  it.each(cases)('%s: each tree step is a step down the path, and nothing searches from the root per name', async (language, source) => {
    const grammar = await loadGrammar(language);
    // Every step down locate.ts takes is a firstChildForIndex call; the root-first searches are counted too.
    const steps = jest.spyOn(Node.prototype, 'firstChildForIndex');
    const searches = jest.spyOn(Node.prototype, 'descendantForIndex');
    const parents = jest.spyOn(Node.prototype, 'parent', 'get');
    const siblings = jest.spyOn(Node.prototype, 'previousNamedSibling', 'get');
    try {
      const facts = extractFacts(grammar, source);
      expect(facts.imports.length).toBe(1);
      // The walk went down through the levels (at least a step each: every level where Dart and Swift,
      // which find names only by the tags query, let a match start — 1,000 nodes deep, extract.ts), and a
      // bounded number of steps per level: linear (each level is a few nodes deep).
      expect(steps.mock.calls.length).toBeGreaterThan(language === 'dart' || language === 'swift' ? 1000 : DEPTH);
      expect(steps.mock.calls.length).toBeLessThan(10 * DEPTH);
      expect(searches).not.toHaveBeenCalled();
      expect(parents.mock.calls.length).toBeLessThan(100);
      expect(siblings.mock.calls.length).toBeLessThan(100);
    } finally {
      steps.mockRestore();
      searches.mockRestore();
      parents.mockRestore();
      siblings.mockRestore();
    }
  });
});

describe('a parse that runs past its budget', () => {
  // tree-sitter's error recovery on nested invalid code: JavaScript text 256 deep, 20 times, in a `.swift`
  // file (174 KB) took 76 s to parse. With a budget the file is abandoned, and the parser serves the next.
  const one = 'function a() {' + 'const x = () => { const y = 1; '.repeat(256) + '}; '.repeat(256) + '}\n';

  it('is abandoned with a reason and no facts, and the next file of the language parses', async () => {
    const grammar = await loadGrammar('swift');
    const facts = extractFacts(grammar, one.repeat(20), { parseBudgetMs: 100 });
    expect(facts).toEqual({ defs: [], refs: [], imports: [], exportAliases: [], abandoned: 'parsing took longer than 100 ms' });
    const next = extractFacts(grammar, 'import Foundation\nfunc greet() -> String { return "hi" }\n', { parseBudgetMs: 100 });
    expect(next.abandoned).toBeUndefined();
    expect(next.defs.map((d) => d.name)).toEqual(['greet']);
  });
});

describe('a TypeScript file nested past the call stack', () => {
  it("falls back to tree-sitter's facts instead of failing the whole index (the TypeScript parser recursed per level)", async () => {
    const grammar = await loadGrammar('typescript');
    // A syntax error sends TypeScript files to the TypeScript parser (errorFallback), which recurses per nesting level.
    const source = `import { f } from './m';\nexport const y = ${'f('.repeat(100_000)}1${')'.repeat(100_000)};\nconst broken = <>;\n`;
    const facts = extractFacts(grammar, source);
    expect(facts.parser).toBeUndefined();
    expect(facts.hasErrors).toBe(true);
    expect(facts.imports.map((i) => i.source)).toEqual(['./m']);
    expect(facts.defs.map((d) => d.name)).toContain('y');
  });
});

describe('a parse too slow for the server\'s thread', () => {
  // JavaScript text nested 256 deep, three times, in a `.swift` file: seconds of tree-sitter error recovery.
  // Indexing a few files (no worker pool) and compute's doc lines ran such parses on the server's thread,
  // holding the event loop (a 48 KB file held /health for 7 s per parse); past IN_THREAD_PARSE_MS they move
  // to a worker, which answers the same.
  const hostile = ('function a() {' + 'const x = () => { const y = 1; '.repeat(256) + '}; '.repeat(256) + '}\n').repeat(3) + '// the end\n';
  const suite = gitRepoSuite('rl-slow-parse-', (f) => {
    f.write('View.swift', hostile);
    f.write('Ok.swift', 'import Foundation\nfunc greet() -> String { return "hi" }\n');
    return [f.commit('slow')];
  });
  afterAll(() => closeSharedExtractPool());

  it('is not parsed to the end on this thread', async () => {
    const grammar = await loadGrammar('swift');
    expect(extractFacts(grammar, hostile, { parseBudgetMs: IN_THREAD_PARSE_MS }).abandoned).toBe(`parsing took longer than ${IN_THREAD_PARSE_MS} ms`);
    expect(docLinesWithin(grammar, hostile, performance.now() + IN_THREAD_PARSE_MS)).toBeNull();
  });

  it('is indexed on a worker: the file has its facts, nothing is skipped', async () => {
    const index = await indexCommit(suite.repo, suite.commits[0], { cache: FactsCache.open(suite.cacheDir) });
    expect(index.skipped).toEqual([]);
    expect([...index.files.keys()].sort()).toEqual(['Ok.swift', 'View.swift']);
    expect(index.files.get('View.swift')!.facts.hasErrors).toBe(true);
    expect(index.files.get('View.swift')!.facts.abandoned).toBeUndefined();
  });

  it("its doc lines come from a worker: the last line's comment is found", async () => {
    const lines = await docLinesOf('swift', hostile);
    expect(lines.has(hostile.split('\n').length - 1)).toBe(true);
  });
});

describe('the extract pool', () => {
  it('lets a process exit after using one worker of several (the CLI hung once a slow file went to a worker)', () => {
    const root = path.resolve(__dirname, '../..');
    const script = `const { ExtractPool } = require(${JSON.stringify(path.join(root, 'src/codegraph/extract-pool.ts'))});
      new ExtractPool(2).run('javascript', 'const a = 1;\\n').then((r) => console.log(r.facts.defs.map((d) => d.name).join()));`;
    // Without the fix the child never exits: the timeout kills it (status null).
    const child = spawnSync(process.execPath, ['-r', path.join(root, 'tools/ts-register.js'), '-e', script], { encoding: 'utf8', timeout: 90_000 });
    expect(child.stdout.trim()).toBe('a');
    expect(child.status).toBe(0);
  });
});
