// pixelmatch (visual axis, reached through the compute pipeline) is ESM-only: load the real source as CommonJS under jest.
import '../axes/visual/support/esm';
import * as fs from 'node:fs';
import type { ComputedReview } from '../../src/compute/review';
import { GitFixture } from '../support/git-fixture';
import { computeHarness, groups, cohortOf } from './support';

jest.setTimeout(60_000);

const { fixture, compute } = computeHarness('rl-cohorts-');


describe('cohort formation on a TypeScript repository', () => {
  it('merges a changed caller with its changed callee across files, and leaves an unrelated change alone', async () => {
    const f = fixture();
    f.write('src/b.ts', 'export function g(x: number): number {\n  return x + 1;\n}\n');
    f.write('src/a.ts', "import { g } from './b';\n\nexport function f(x: number): number {\n  return g(x) * 2;\n}\n");
    f.write('src/c.ts', 'export function h(s: string): string {\n  return s.trim();\n}\n');
    const base = f.commit('base');
    f.write('src/b.ts', 'export function g(x: number): number {\n  return x + 2;\n}\n');
    f.write('src/a.ts', "import { g } from './b';\n\nexport function f(x: number): number {\n  return g(x) * 3;\n}\n");
    f.write('src/c.ts', 'export function h(s: string): string {\n  return s.trim().toLowerCase();\n}\n');
    const head = f.commit('head');
    const r = await compute(f, base, head);
    expect(groups(r)).toEqual(['src/a.ts,src/b.ts', 'src/c.ts']);
    const ab = cohortOf(r, 'src/a.ts');
    expect(ab.grouping).toBe('semantic');
    expect(ab.anchors).toEqual(['src/a.ts#f', 'src/b.ts#g']);
    // Callee first: g before its caller f.
    expect(ab.readingOrder.order).toBe('callee-first');
    expect(ab.readingOrder.steps.map((s) => s.symbolId)).toEqual(['src/b.ts#g', 'src/a.ts#f']);
    expect(r.data.cohorts.map((c) => c.rank).sort()).toEqual([1, 2]);
  });

  it('does not merge on a same-name function in an unrelated module', async () => {
    const f = fixture();
    f.write('src/b.ts', 'export function g(x: number): number {\n  return x + 1;\n}\n');
    f.write('lib/other.ts', 'export function g(x: number): number {\n  return x - 1;\n}\n');
    f.write('src/a.ts', "import { g } from '../lib/other';\n\nexport function f(x: number): number {\n  return g(x) * 2;\n}\n");
    const base = f.commit('base');
    f.write('src/b.ts', 'export function g(x: number): number {\n  return x + 2;\n}\n');
    f.write('src/a.ts', "import { g } from '../lib/other';\n\nexport function f(x: number): number {\n  return g(x) * 3;\n}\n");
    const head = f.commit('head');
    const r = await compute(f, base, head);
    expect(groups(r)).toEqual(['src/a.ts', 'src/b.ts']);
  });

  it('puts a test file exercising a changed function into that function\'s cohort', async () => {
    const f = fixture();
    f.write('src/b.ts', 'export function g(x: number): number {\n  return x + 1;\n}\n');
    f.write('src/c.ts', 'export function h(s: string): string {\n  return s;\n}\n');
    f.write('test/b.test.ts', "import { g } from '../src/b';\n\ntest('g', () => {\n  expect(g(1)).toBe(2);\n});\n");
    const base = f.commit('base');
    f.write('src/b.ts', 'export function g(x: number): number {\n  return x + 2;\n}\n');
    f.write('src/c.ts', 'export function h(s: string): string {\n  return s.trim();\n}\n');
    f.write('test/b.test.ts', "import { g } from '../src/b';\n\ntest('g', () => {\n  expect(g(1)).toBe(3);\n});\n");
    const head = f.commit('head');
    const r = await compute(f, base, head);
    expect(groups(r)).toEqual(['src/b.ts,test/b.test.ts', 'src/c.ts']);
    const roles = Object.fromEntries(r.data.changedFiles.map((c) => [c.path, c.role]));
    expect(roles['test/b.test.ts']).toBe('test');
    expect(cohortOf(r, 'src/b.ts').blastRadius.tests).toEqual(['test/b.test.ts']);
  });

  it('keeps the key of a cohort whose definitions were renamed with their file, and forms one cohort for a rename', async () => {
    const f = fixture();
    f.write('src/old-name.ts', 'export function g(x: number): number {\n  return x + 1;\n}\n\nexport function k(): number {\n  return 0;\n}\n');
    const base = f.commit('base');
    f.git('mv', 'src/old-name.ts', 'src/new-name.ts');
    f.write('src/new-name.ts', 'export function g(x: number): number {\n  return x + 5;\n}\n\nexport function k(): number {\n  return 0;\n}\n');
    const head = f.commit('head');
    const r = await compute(f, base, head);
    expect(r.data.changedFiles).toEqual([expect.objectContaining({ path: 'src/new-name.ts', oldPath: 'src/old-name.ts', status: 'renamed' })]);
    expect(r.data.cohorts).toHaveLength(1);
    expect(r.data.cohorts[0].fragments.map((x) => [x.symbolId, x.change])).toEqual([['src/new-name.ts#g', 'modified']]);
  });

  it('records a deleted function as a base-side fragment and links it to its removed caller', async () => {
    const f = fixture();
    f.write('src/b.ts', 'export function keep(): number {\n  return 1;\n}\n\nexport function gone(x: number): number {\n  return x;\n}\n');
    f.write('src/a.ts', "import { gone } from './b';\n\nexport function user(): number {\n  return gone(1);\n}\n");
    const base = f.commit('base');
    f.write('src/b.ts', 'export function keep(): number {\n  return 1;\n}\n');
    f.write('src/a.ts', "export function user(): number {\n  return 1;\n}\n");
    const head = f.commit('head');
    const r = await compute(f, base, head);
    expect(groups(r)).toEqual(['src/a.ts,src/b.ts']);
    const frag = r.data.cohorts[0].fragments.find((x) => x.symbolId === 'src/b.ts#gone')!;
    expect(frag).toMatchObject({ side: 'base', change: 'deleted', startLine: 5, endLine: 7 });
    expect(r.data.cohorts[0].blastRadius.publicApi).toContain('src/b.ts#gone');
  });

  it('gives a dependency change to the cohort that imports it, and one no changed file imports to the riskiest cohort only', async () => {
    const f = fixture();
    const pkg = (deps: Record<string, string>) => JSON.stringify({ name: 'x', version: '1.0.0', dependencies: deps }, null, 2);
    f.write('package.json', pkg({ chalk: '^5.0.0', 'left-pad': '^1.0.0' }));
    f.write('src/a.ts', 'export function a(): number {\n  return 1;\n}\n');
    f.write('lib/b.ts', 'export function b(): number {\n  return 2;\n}\n');
    f.write('lib/c.ts', "import { red } from 'chalk';\n\nexport function c(s: string): string {\n  return red(s);\n}\n");
    const base = f.commit('base');
    f.write('package.json', pkg({ chalk: '^5.3.0', lodash: '^4.17.21' }));
    f.write('src/a.ts', "import chunk from 'lodash/chunk';\n\nexport function a(): number {\n  return chunk([1, 2], 1).length;\n}\n");
    f.write('lib/b.ts', 'export function b(): number {\n  return 22;\n}\n');
    f.write('lib/c.ts', "import { red } from 'chalk';\n\nexport function c(s: string): string {\n  return red(s).trim();\n}\n");
    const head = f.commit('head');
    const r = await compute(f, base, head);
    expect(groups(r)).toEqual(['lib/b.ts', 'lib/c.ts', 'src/a.ts']);
    const changesOf = (file: string) => cohortOf(r, file).clues.flatMap((c) => (c.dependencyChanges ?? []).map((d) => `${d.name} ${d.change}`));
    // lodash is imported (through a subpath) by src/a.ts, chalk by lib/c.ts; left-pad by nobody any more.
    expect(changesOf('src/a.ts')).toEqual(expect.arrayContaining(['lodash added']));
    expect(changesOf('lib/c.ts')).toEqual(expect.arrayContaining(['chalk upgraded']));
    expect(changesOf('src/a.ts')).not.toContain('chalk upgraded');
    expect(changesOf('lib/c.ts')).not.toContain('lodash added');
    const riskiest = r.data.cohorts.find((c) => c.rank === 1)!;
    const holders = r.data.cohorts.filter((c) => c.clues.some((x) => x.dependencyChanges?.some((d) => d.name === 'left-pad')));
    expect(holders.map((c) => c.key)).toEqual([riskiest.key]);
    expect(holders[0].clues.find((x) => x.dependencyChanges?.some((d) => d.name === 'left-pad'))!.note).toBe('npm dependencies changed in package.json, 1 change(s) no changed file imports: left-pad removed');
    // Every change is somewhere, and none twice.
    const all = r.data.cohorts.flatMap((c) => c.clues.flatMap((x) => (x.dependencyChanges ?? []).map((d) => d.name))).sort();
    expect(all).toEqual(['chalk', 'left-pad', 'lodash']);
  });

  it('attaches package.json + package-lock.json changes as a dependency clue, not a cohort', async () => {
    const f = fixture();
    const pkg = (dep: string, lodash: string) => JSON.stringify({ name: 'x', version: '1.0.0', dependencies: { lodash, [dep]: '^1.0.0' } }, null, 2);
    const lock = (lodash: string) => JSON.stringify({ name: 'x', lockfileVersion: 3, packages: { '': { name: 'x' }, 'node_modules/lodash': { version: lodash } } }, null, 2);
    f.write('package.json', pkg('left-pad', '^3.10.0'));
    f.write('package-lock.json', lock('3.10.1'));
    f.write('src/b.ts', 'export function g(): number {\n  return 1;\n}\n');
    const base = f.commit('base');
    f.write('package.json', pkg('right-pad', '^4.17.21'));
    f.write('package-lock.json', lock('4.17.21'));
    f.write('src/b.ts', 'export function g(): number {\n  return 2;\n}\n');
    const head = f.commit('head');
    const r = await compute(f, base, head);
    expect(groups(r)).toEqual(['src/b.ts']);
    const clues = r.data.cohorts[0].clues;
    expect(clues.map((c) => c.path).sort()).toEqual(['package-lock.json', 'package.json']);
    const manifest = r.data.dependencyDiffs.find((d) => d.path === 'package.json')!;
    expect(manifest.changes).toEqual([
      { name: 'left-pad', change: 'removed', from: '^1.0.0', major: false },
      { name: 'lodash', change: 'upgraded', from: '^3.10.0', to: '^4.17.21', major: true },
      { name: 'right-pad', change: 'added', to: '^1.0.0', major: false },
    ]);
  });

  it('gives a version-only manifest bump no review unit', async () => {
    const f = fixture();
    f.write('package.json', JSON.stringify({ name: 'x', version: '1.0.0', dependencies: { a: '1.0.0' } }, null, 2));
    const base = f.commit('base');
    f.write('package.json', JSON.stringify({ name: 'x', version: '1.0.1', dependencies: { a: '1.0.0' } }, null, 2));
    const head = f.commit('head');
    const r = await compute(f, base, head);
    expect(r.data.cohorts).toEqual([]);
    expect(r.data.changedFiles[0].role).toBe('version-bump');
  });
});

describe('cohort formation in other languages', () => {
  it('Python: a changed caller and its changed callee merge; an unrelated module does not', async () => {
    const f = fixture();
    f.write('pkg/__init__.py', '');
    f.write('pkg/b.py', 'def g(x):\n    return x + 1\n');
    f.write('pkg/a.py', 'from .b import g\n\n\ndef f(x):\n    return g(x) * 2\n');
    f.write('pkg/c.py', 'def h(s):\n    return s\n');
    f.write('other/util.py', 'def g(x):\n    return x\n');
    const base = f.commit('base');
    f.write('pkg/b.py', 'def g(x):\n    return x + 2\n');
    f.write('pkg/a.py', 'from .b import g\n\n\ndef f(x):\n    return g(x) * 3\n');
    f.write('pkg/c.py', 'def h(s):\n    return s.strip()\n');
    f.write('other/util.py', 'def g(x):\n    return x * 10\n');
    f.write('tests/test_b.py', 'from pkg.b import g\n\n\ndef test_g():\n    assert g(1) == 3\n');
    const head = f.commit('head');
    const r = await compute(f, base, head);
    expect(groups(r)).toEqual(['other/util.py', 'pkg/a.py,pkg/b.py,tests/test_b.py', 'pkg/c.py']);
  });

  it('Go: cross-package call through the module path merges; same-name function elsewhere does not', async () => {
    const f = fixture();
    f.write('go.mod', 'module example.com/app\n\ngo 1.22\n');
    f.write('calc/calc.go', 'package calc\n\nfunc G(x int) int {\n\treturn x + 1\n}\n');
    f.write('main.go', 'package main\n\nimport "example.com/app/calc"\n\nfunc F(x int) int {\n\treturn calc.G(x) * 2\n}\n');
    f.write('text/text.go', 'package text\n\nfunc H(s string) string {\n\treturn s\n}\n');
    f.write('other/other.go', 'package other\n\nfunc G(x int) int {\n\treturn x\n}\n');
    const base = f.commit('base');
    f.write('calc/calc.go', 'package calc\n\nfunc G(x int) int {\n\treturn x + 2\n}\n');
    f.write('main.go', 'package main\n\nimport "example.com/app/calc"\n\nfunc F(x int) int {\n\treturn calc.G(x) * 3\n}\n');
    f.write('text/text.go', 'package text\n\nfunc H(s string) string {\n\treturn s + "!"\n}\n');
    f.write('other/other.go', 'package other\n\nfunc G(x int) int {\n\treturn x * 7\n}\n');
    f.write('calc/calc_test.go', 'package calc\n\nimport "testing"\n\nfunc TestG(t *testing.T) {\n\tif G(1) != 3 {\n\t\tt.Fatal("G")\n\t}\n}\n');
    const head = f.commit('head');
    const r = await compute(f, base, head);
    expect(groups(r)).toEqual(['calc/calc.go,calc/calc_test.go,main.go', 'other/other.go', 'text/text.go']);
  });

  it('Java: an imported class\'s changed method called from a changed method merges; a same-name class elsewhere does not', async () => {
    const f = fixture();
    f.write('src/main/java/com/acme/calc/Calc.java', 'package com.acme.calc;\n\npublic class Calc {\n  public static int g(int x) {\n    return x + 1;\n  }\n}\n');
    f.write('src/main/java/com/acme/app/App.java', 'package com.acme.app;\n\nimport com.acme.calc.Calc;\n\npublic class App {\n  public int f(int x) {\n    return Calc.g(x) * 2;\n  }\n}\n');
    f.write('src/main/java/com/acme/other/Calc.java', 'package com.acme.other;\n\npublic class Calc {\n  public static int g(int x) {\n    return x;\n  }\n}\n');
    const base = f.commit('base');
    f.write('src/main/java/com/acme/calc/Calc.java', 'package com.acme.calc;\n\npublic class Calc {\n  public static int g(int x) {\n    return x + 2;\n  }\n}\n');
    f.write('src/main/java/com/acme/app/App.java', 'package com.acme.app;\n\nimport com.acme.calc.Calc;\n\npublic class App {\n  public int f(int x) {\n    return Calc.g(x) * 3;\n  }\n}\n');
    f.write('src/main/java/com/acme/other/Calc.java', 'package com.acme.other;\n\npublic class Calc {\n  public static int g(int x) {\n    return x * 5;\n  }\n}\n');
    const head = f.commit('head');
    const r = await compute(f, base, head);
    expect(groups(r)).toEqual(['src/main/java/com/acme/app/App.java,src/main/java/com/acme/calc/Calc.java', 'src/main/java/com/acme/other/Calc.java']);
  });

  it('Rust: a call through `use crate::…` and one through `module::item` merge; a same-name function elsewhere does not', async () => {
    const f = fixture();
    f.write('Cargo.toml', '[package]\nname = "app"\nversion = "0.1.0"\n');
    f.write('src/lib.rs', 'mod calc;\nmod app;\nmod other;\nmod text;\n');
    f.write('src/calc.rs', 'pub fn g(x: i32) -> i32 {\n    x + 1\n}\n\npub fn k(x: i32) -> i32 {\n    x\n}\n');
    f.write('src/app.rs', 'use crate::calc::g;\nuse crate::calc;\n\npub fn f(x: i32) -> i32 {\n    g(x) * 2\n}\n\npub fn m(x: i32) -> i32 {\n    calc::k(x)\n}\n');
    f.write('src/other.rs', 'pub fn g(x: i32) -> i32 {\n    x\n}\n');
    f.write('src/text.rs', 'pub fn h(s: &str) -> &str {\n    s\n}\n');
    const base = f.commit('base');
    f.write('src/calc.rs', 'pub fn g(x: i32) -> i32 {\n    x + 2\n}\n\npub fn k(x: i32) -> i32 {\n    x\n}\n');
    f.write('src/app.rs', 'use crate::calc::g;\nuse crate::calc;\n\npub fn f(x: i32) -> i32 {\n    g(x) * 3\n}\n\npub fn m(x: i32) -> i32 {\n    calc::k(x)\n}\n');
    f.write('src/other.rs', 'pub fn g(x: i32) -> i32 {\n    x * 9\n}\n');
    f.write('src/text.rs', 'pub fn h(s: &str) -> &str {\n    s.trim()\n}\n');
    const head = f.commit('head');
    const r = await compute(f, base, head);
    expect(groups(r)).toEqual(['src/app.rs,src/calc.rs', 'src/other.rs', 'src/text.rs']);
    expect(r.head!.outgoingOf('src/app.rs#m').map((e) => e.to)).toEqual(['src/calc.rs#k']);
  });

  it('a language without a grammar is grouped by path and says why', async () => {
    const f = fixture();
    f.write('app/src/Main.scala', 'object Main {\n  def main(): Unit = println("a")\n}\n');
    f.write('app/src/Util.scala', 'object Util {\n  def util(): Int = 1\n}\n');
    const base = f.commit('base');
    f.write('app/src/Main.scala', 'object Main {\n  def main(): Unit = println("b")\n}\n');
    f.write('app/src/Util.scala', 'object Util {\n  def util(): Int = 2\n}\n');
    const head = f.commit('head');
    const r = await compute(f, base, head);
    expect(r.data.cohorts).toHaveLength(1);
    expect(r.data.cohorts[0]).toMatchObject({ grouping: 'path', files: ['app/src/Main.scala', 'app/src/Util.scala'] });
    expect(r.data.cohorts[0].groupingReason).toMatch(/no grammar for scala/);
    expect(r.data.cohorts[0].key).toMatch(/^p-/);
  });
});

describe('stable cohort keys', () => {
  function threeModules(f: GitFixture): string {
    f.write('src/b.ts', 'export function g(x: number): number {\n  return x + 1;\n}\n');
    f.write('src/a.ts', "import { g } from './b';\n\nexport function f(x: number): number {\n  return g(x) * 2;\n}\n");
    f.write('src/c.ts', 'export function h(s: string): string {\n  return s;\n}\n');
    f.write('README.md', '# app\n');
    return f.commit('base');
  }
  function change(f: GitFixture): void {
    f.write('src/b.ts', 'export function g(x: number): number {\n  return x + 2;\n}\n');
    f.write('src/a.ts', "import { g } from './b';\n\nexport function f(x: number): number {\n  return g(x) * 3;\n}\n");
    f.write('src/c.ts', 'export function h(s: string): string {\n  return s.trim();\n}\n');
  }
  const keys = (r: ComputedReview) => Object.fromEntries(r.data.cohorts.map((c) => [c.files.join(','), c.key]));

  it('adding an unrelated file to the PR keeps every other cohort key', async () => {
    const f = fixture();
    const base = threeModules(f);
    change(f);
    const head1 = f.commit('pr');
    f.write('src/d.ts', 'export const d = 1;\n');
    const head2 = f.commit('pr + unrelated file');
    const r1 = await compute(f, base, head1);
    const r2 = await compute(f, base, head2);
    expect(keys(r2)).toEqual({ ...keys(r1), 'src/d.ts': expect.stringMatching(/^c-/) });
  });

  it('rebasing onto a newer base and force-pushing an amended commit keep every key', async () => {
    const f = fixture();
    const base = threeModules(f);
    f.git('checkout', '-q', '-b', 'pr');
    change(f);
    const head = f.commit('pr');
    const before = keys(await compute(f, base, head));

    f.git('checkout', '-q', 'main');
    f.write('README.md', '# app\n\nmore docs\n');
    f.write('src/e.ts', 'export const e = 2;\n');
    const newBase = f.commit('main moves on');
    f.git('checkout', '-q', 'pr');
    f.git('rebase', '-q', 'main');
    const rebased = f.git('rev-parse', 'HEAD');
    expect(rebased).not.toBe(head);
    expect(keys(await compute(f, newBase, rebased))).toEqual(before);

    f.git('commit', '-q', '--amend', '-m', 'pr (amended message)');
    const amended = f.git('rev-parse', 'HEAD');
    expect(amended).not.toBe(rebased);
    expect(keys(await compute(f, newBase, amended))).toEqual(before);
  });
});
