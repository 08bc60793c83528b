import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { FactsCache } from '../../src/codegraph/facts-cache';
import { CodeGraph } from '../../src/codegraph/graph';
import { indexCommit } from '../../src/codegraph/indexer';
import { addCheckerEdges, clearCheckerSourceCache, projectFileFilter, TSCONFIG_GLOB_BUDGET } from '../../src/codegraph/checker/type-edges';
import { computeReview } from '../../src/compute/review';
import { GitRepo } from '../../src/git/repo';
import { gitRepoSuite } from '../support/git-repo-suite';

jest.setTimeout(60_000);

/** Type-resolved edges: what TypeScript's checker binds that the syntactic resolver cannot. */
describe('type-resolved edges (TypeScript checker)', () => {
  const suite = gitRepoSuite('rl-type-edges-', (f) => {
    f.write('tsconfig.json', '{ "compilerOptions": { "strict": true, "module": "esnext", "moduleResolution": "bundler" } }\n');
    f.write('src/job.ts', 'export class Job {\n  size = 1;\n  run(): number {\n    return this.size;\n  }\n  stop(): void {}\n}\n');
    f.write('src/make.ts', "import { Job } from './job';\nexport function make(): Job {\n  return new Job();\n}\n");
    // `make()` returns a Job; nothing in this file names Job, so only a checker binds `.run()` to Job.run.
    f.write('src/use.ts', "import { make } from './make';\nexport function go(): number {\n  const j = make();\n  return j.run() + j.size;\n}\n");
    f.write('src/other.ts', 'export class Other {\n  run(): number {\n    return 2;\n  }\n}\n');
    // A JavaScript file reaching a declaration through `require` of a directory's index.
    f.write('lib/index.js', 'exports.helper = function helper() { return 1; };\n');
    f.write('lib/main.js', "const lib = require('./');\nmodule.exports = () => lib.helper();\n");
    // A namespace import: the module's own symbol is declared by the whole file, not by its first definition.
    f.write('src/ns.ts', '// Header comment.\n\ntype Pair = [number, number];\nexport function twice(n: number): number {\n  const p: Pair = [n, n];\n  return p[0] + p[1];\n}\n');
    f.write('src/ns-use.ts', "import * as ns from './ns';\nexport function four(): number {\n  return ns.twice(2);\n}\n");
    const c1 = f.commit('one');
    f.write('src/job.ts', 'export class Job {\n  size = 1;\n  run(): number {\n    return this.size + 1;\n  }\n  stop(): void {}\n}\n');
    f.write('src/use.ts', "import { make } from './make';\nexport function go(): number {\n  const j = make();\n  return j.run() + j.size + 1;\n}\n");
    const c2 = f.commit('two');
    return [c1, c2];
  });
  const cacheDir = suite.cacheDir;
  let repo: GitRepo;
  let c1: string;
  let c2: string;
  beforeAll(() => {
    repo = suite.repo;
    [c1, c2] = suite.commits;
  });

  const graphAt = async (commit: string) => {
    const cache = FactsCache.open(cacheDir);
    try {
      return new CodeGraph(await indexCommit(repo, commit, { cache }));
    } finally {
      cache.close();
    }
  };

  it('binds a member call on an inferred receiver to the method, records provenance, and marks a field read as a member of its class', async () => {
    const g = await graphAt(c1);
    const has = (from: string, to: string) => g.edges.filter((e) => e.from === from && e.to === to);
    expect(has('src/use.ts#go', 'src/job.ts#Job.run')).toEqual([]);
    const stats = await addCheckerEdges(g, repo, { files: ['src/use.ts'] });
    expect(stats.walked).toBe(1);
    expect(stats.truncated).toBe(false);
    const run = has('src/use.ts#go', 'src/job.ts#Job.run');
    expect(run).toHaveLength(1);
    expect(run[0]).toMatchObject({ kind: 'call', provenance: 'checker', line: 4, toFile: 'src/job.ts' });
    // `j.size` is a field: it lands on the class, marked as a member read; never on the same-name Other.run.
    expect(has('src/use.ts#go', 'src/job.ts#Job')).toEqual([expect.objectContaining({ member: 'size', provenance: 'checker' })]);
    expect(g.edges.some((e) => e.toFile === 'src/other.ts')).toBe(false);
    // The syntactic edge to make() was already there: confirmed, not duplicated.
    expect(has('src/use.ts#go', 'src/make.ts#make')).toHaveLength(1);
    expect(has('src/use.ts#go', 'src/make.ts#make')[0].provenance).toBe('syntax');
    expect(g.stats.checker).toBe(stats.added);
  });

  it('binds the members of a namespace import, never the namespace to the first definition of the file', async () => {
    const g = await graphAt(c1);
    await addCheckerEdges(g, repo, { files: ['src/ns-use.ts'] });
    const targets = g.edges.filter((e) => e.fromFile === 'src/ns-use.ts').map((e) => e.to);
    expect(targets).toContain('src/ns.ts#twice');
    expect(targets).not.toContain('src/ns.ts#Pair');
  });

  it('records how each checker edge names its target: a binding, a namespace member or a member of an inferred receiver', async () => {
    const g = await graphAt(c1);
    await addCheckerEdges(g, repo, { files: ['src/use.ts', 'src/ns-use.ts', 'lib/main.js'] });
    const form = (from: string, to: string) => g.edges.find((e) => e.from === from && e.to === to && e.provenance === 'checker')?.form;
    expect(form('src/use.ts#go', 'src/job.ts#Job.run')).toBe('receiver');
    // (`ns.twice` of a namespace import is resolved syntactically already: the checker only confirms it.)
    expect(g.edges.find((e) => e.from === 'src/ns-use.ts#four' && e.to === 'src/ns.ts#twice')?.provenance).toBe('syntax');
    // `lib` is `require('./')`: a module object, so `lib.helper` is a namespace member.
    expect(g.edges.find((e) => e.fromFile === 'lib/main.js' && e.toFile === 'lib/index.js' && e.provenance === 'checker')?.form).toBe('namespace');
    expect(g.edges.filter((e) => e.provenance === 'syntax').every((e) => e.form === undefined)).toBe(true);
  });

  it('keeps each walked file per commit: a second walk at the same commit reads the stored edges and builds no Program', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-te-store-'));
    const store = FactsCache.open(dir);
    try {
      const edgesOf = (g: CodeGraph) => g.edges.filter((e) => e.provenance === 'checker').map((e) => JSON.stringify(e)).sort();
      const first = await graphAt(c1);
      const s1 = await addCheckerEdges(first, repo, { files: ['src/use.ts', 'src/ns-use.ts'], cache: store });
      expect(s1).toMatchObject({ walked: 2, fromCache: 0 });
      expect(s1.programFiles).toBeGreaterThan(0);
      const second = await graphAt(c1);
      const s2 = await addCheckerEdges(second, repo, { files: ['src/use.ts', 'src/ns-use.ts'], cache: store });
      expect(s2).toMatchObject({ walked: 2, fromCache: 2, programFiles: 0, added: s1.added, confirmed: s1.confirmed });
      expect(edgesOf(second)).toEqual(edgesOf(first));
      // Another commit is another key: walked again (and use.ts changed there, so its edges differ in lines).
      const other = await graphAt(c2);
      const s3 = await addCheckerEdges(other, repo, { files: ['src/use.ts'], cache: store });
      expect(s3).toMatchObject({ walked: 1, fromCache: 0 });
      // A truncated Program's result is not kept.
      const capped = await graphAt(c2);
      const s4 = await addCheckerEdges(capped, repo, { files: ['src/ns-use.ts'], cache: store, maxProgramFiles: 1 });
      expect(s4.truncated).toBe(true);
      const s5 = await addCheckerEdges(await graphAt(c2), repo, { files: ['src/ns-use.ts'], cache: store });
      expect(s5).toMatchObject({ walked: 1, fromCache: 0, truncated: false });
    } finally {
      store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reuses the parsed files of an earlier Program for unchanged blobs, with the same edges as a cold parse', async () => {
    clearCheckerSourceCache();
    const cold = await graphAt(c2);
    const s1 = await addCheckerEdges(cold, repo, { files: ['src/use.ts'] });
    expect(s1.reusedSourceFiles ?? 0).toBe(0);
    // c1 → c2 changed job.ts and use.ts only: make.ts (and whatever else was loaded) is reused at c1.
    const warm = await graphAt(c1);
    const s2 = await addCheckerEdges(warm, repo, { files: ['src/use.ts'] });
    expect(s2.reusedSourceFiles).toBeGreaterThan(0);
    expect(s2.reusedSourceFiles).toBeLessThan(s2.programFiles);
    clearCheckerSourceCache();
    const again = await graphAt(c1);
    await addCheckerEdges(again, repo, { files: ['src/use.ts'] });
    const edgesOf = (g: CodeGraph) => g.edges.filter((e) => e.provenance === 'checker').map((e) => JSON.stringify(e)).sort();
    expect(edgesOf(warm)).toEqual(edgesOf(again));
    expect(warm.edges.some((e) => e.from === 'src/use.ts#go' && e.to === 'src/job.ts#Job.run')).toBe(true);
  });

  it('resolves require of a directory in JavaScript', async () => {
    const g = await graphAt(c1);
    await addCheckerEdges(g, repo, { files: ['lib/main.js'] });
    expect(g.edges.some((e) => e.fromFile === 'lib/main.js' && e.toFile === 'lib/index.js' && e.provenance === 'checker')).toBe(true);
  });

  it('caps the program: beyond maxProgramFiles the walk is marked truncated and keeps the syntactic edges', async () => {
    const g = await graphAt(c1);
    const before = g.edges.length;
    const stats = await addCheckerEdges(g, repo, { files: ['src/use.ts'], maxProgramFiles: 1 });
    expect(stats.truncated).toBe(true);
    expect(g.edges.filter((e) => e.to === 'src/job.ts#Job.run')).toEqual([]);
    expect(g.edges.length).toBe(before + stats.added);
  });

  it('runs the checker by default (edges recorded with provenance, blast radius reads them) and joins along them only with a type signal', async () => {
    const workspaceDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-te-ws-'));
    try {
      const cohortOf = (cohorts: Array<{ files: string[] }>, p: string) => cohorts.findIndex((c) => c.files.includes(p));
      const syntaxOnly = await computeReview({ repo, baseSha: c1, headSha: c2, workspaceDir, typeEdges: false });
      expect(syntaxOnly.data.metrics.checkerEdges).toBe(0);
      expect(syntaxOnly.head!.edges.some((e) => e.to === 'src/job.ts#Job.run')).toBe(false);
      // Default: the checker runs over the changed TS files; its edge into the change is in the graph …
      const plain = await computeReview({ repo, baseSha: c1, headSha: c2, workspaceDir });
      expect(plain.data.metrics.checkerEdges).toBeGreaterThan(0);
      expect(plain.head!.edges.find((e) => e.from === 'src/use.ts#go' && e.to === 'src/job.ts#Job.run')).toMatchObject({ provenance: 'checker', form: 'receiver', kind: 'call' });
      // … and the blast radius of job.ts's cohort counts use.ts as a dependent through it (syntax-only does not).
      const dependents = (d: typeof plain.data) => d.cohorts[cohortOf(d.cohorts, 'src/job.ts')].blastRadius.dependents.files;
      expect(dependents(plain.data)).toContain('src/use.ts');
      expect(dependents(syntaxOnly.data)).not.toContain('src/use.ts');
      // … but the default signals (type-bindings) do not join along a member call on an inferred receiver (measured on h3: it over-merges).
      expect(cohortOf(plain.data.cohorts, 'src/use.ts')).not.toBe(cohortOf(plain.data.cohorts, 'src/job.ts'));
      // A recomputation reads the stored per-commit result instead of running the checker again.
      const again = await computeReview({ repo, baseSha: c1, headSha: c2, workspaceDir });
      // (job.ts and use.ts changed; nothing was deleted, so no walk at the base.)
      expect(again.data.metrics.checkerStoredFiles).toBe(2);
      expect(again.data.metrics.checkerProgramFiles).toBe(0);
      expect(again.data.cohorts.map((c) => c.key)).toEqual(plain.data.cohorts.map((c) => c.key));
      const typed = (await computeReview({ repo, baseSha: c1, headSha: c2, workspaceDir, signals: ['changed-reference', 'new-symbol-import', 'test-subject', 'type-edges'] })).data;
      expect(cohortOf(typed.cohorts, 'src/use.ts')).toBe(cohortOf(typed.cohorts, 'src/job.ts'));
    } finally {
      fs.rmSync(workspaceDir, { recursive: true, force: true });
    }
  });
});

/** Only files under a project root (tsconfig.json, jsconfig.json or package.json in their directory or above) are walked. */
describe('type-resolved edges need a project root', () => {
  const suite = gitRepoSuite('rl-type-edges-root-', (f) => {
    for (const dir of ['pkg', 'loose']) {
      f.write(`${dir}/job.ts`, 'export class Job {\n  run(): number {\n    return 1;\n  }\n}\nexport function make(): Job {\n  return new Job();\n}\n');
      f.write(`${dir}/use.ts`, "import { make } from './job';\nexport function go(): number {\n  return make().run();\n}\n");
    }
    f.write('pkg/package.json', '{ "name": "pkg", "type": "module" }\n');
    return [f.commit('one')];
  });

  it('walks pkg/ (package.json) and leaves loose/ to the syntactic edges', async () => {
    const cache = FactsCache.open(suite.cacheDir);
    let g: CodeGraph;
    try {
      g = new CodeGraph(await indexCommit(suite.repo, suite.commits[0], { cache }));
    } finally {
      cache.close();
    }
    const stats = await addCheckerEdges(g, suite.repo, { files: ['pkg/use.ts', 'loose/use.ts'] });
    expect(stats).toMatchObject({ walked: 1, outsideProject: 1 });
    expect(g.edges.some((e) => e.from === 'pkg/use.ts#go' && e.to === 'pkg/job.ts#Job.run' && e.provenance === 'checker')).toBe(true);
    expect(g.edges.some((e) => e.fromFile === 'loose/use.ts' && e.provenance === 'checker')).toBe(false);
  });
});

/** An ambient file of runtime globals (a script-mode .d.ts): global names land on their own declarations. */
describe('type-resolved edges into an ambient declaration file', () => {
  const suite = gitRepoSuite('rl-type-edges-ambient-', (f) => {
    f.write('tsconfig.json', '{ "compilerOptions": { "strict": true, "module": "esnext", "moduleResolution": "bundler" } }\n');
    // `Env` declared twice, far apart (declaration merging): the index keeps one `Env` spanning lines 2-11.
    f.write('types/env.d.ts', 'declare namespace Cloud {}\ninterface Env {\n  a: number;\n}\n/** Runtime crypto. */\ndeclare const crypto: { random(): number };\ndeclare var console: { log(s: string): void };\ninterface Env {\n  b: number;\n}\n');
    f.write('src/use.ts', "export function roll(): number {\n  console.log('roll');\n  return crypto.random();\n}\n");
    // A declaration that is no definition of the index (a destructured export) between two merged `Env`s.
    f.write('src/pair.ts', 'export interface Env {\n  a: number;\n}\nexport const { alpha } = { alpha: 1 };\nexport interface Env {\n  b: number;\n}\n');
    f.write('src/pair-use.ts', "import { alpha } from './pair';\nexport function one(): number {\n  return alpha;\n}\n");
    return [f.commit('one')];
  });

  it('binds `crypto` and `console` to their ambient declarations, never to the merged `Env` around them', async () => {
    const cache = FactsCache.open(suite.cacheDir);
    let g: CodeGraph;
    try {
      g = new CodeGraph(await indexCommit(suite.repo, suite.commits[0], { cache }));
    } finally {
      cache.close();
    }
    expect(g.defsByFile.get('types/env.d.ts')!.map((d) => d.def.qname).sort()).toEqual(['Cloud', 'Env', 'console', 'console.log', 'crypto', 'crypto.random']);
    await addCheckerEdges(g, suite.repo, { files: ['src/use.ts', 'types/env.d.ts'] });
    const into = new Set(g.edges.filter((e) => e.fromFile === 'src/use.ts' && e.toFile === 'types/env.d.ts').map((e) => e.to.slice(e.to.indexOf('#') + 1).split('.')[0]));
    expect([...into].sort()).toEqual(['console', 'crypto']);
  });

  it('lands a declaration only on a definition that is it or owns it by name, not on one whose merged range spans it', async () => {
    const cache = FactsCache.open(suite.cacheDir);
    let g: CodeGraph;
    try {
      g = new CodeGraph(await indexCommit(suite.repo, suite.commits[0], { cache }));
    } finally {
      cache.close();
    }
    expect(g.defsByFile.get('src/pair.ts')!.find((d) => d.def.name === 'Env')!.def).toMatchObject({ start: 1, end: 7 });
    const stats = await addCheckerEdges(g, suite.repo, { files: ['src/pair-use.ts'] });
    expect(stats.walked).toBe(1);
    expect(g.edges.filter((e) => e.fromFile === 'src/pair-use.ts' && e.toFile === 'src/pair.ts')).toEqual([]);
  });
});

/**
 * A repository above the Program's file cap: the Program is the changed files' import closure, and the
 * ambient declaration files nothing imports (script-mode, or `declare global`) are added the way tsc's
 * `include` loads them — only those the root tsconfig includes and does not exclude.
 */
describe('ambient declaration files in a Program of the import closure', () => {
  const suite = gitRepoSuite('rl-type-edges-ambient-closure-', (f) => {
    f.write('tsconfig.json', '{\n  // comments are allowed\n  "compilerOptions": { "strict": true, "module": "esnext", "moduleResolution": "bundler" },\n  "include": ["src", "types/**/*.d.ts"],\n  "exclude": ["types/excluded"]\n}\n');
    // Script-mode: runtime globals (a nested `export` inside `declare module` keeps it a script).
    f.write('types/runtime.d.ts', 'declare const KV: { get(key: string): string };\ninterface Bindings {\n  name: string;\n}\ndeclare module "runtime:extra" {\n  export const extra: number;\n}\n');
    // A module that augments the global scope.
    f.write('types/globals.d.ts', "import type { Job } from '../src/job';\ndeclare global {\n  function currentJob(): Job;\n}\nexport {};\n");
    // A module without `declare global`: nothing global, never added.
    f.write('types/module.d.ts', 'export declare const notGlobal: number;\n');
    // Script-mode but excluded, and script-mode outside `include`: tsc would not load them.
    f.write('types/excluded/hidden.d.ts', 'declare const HIDDEN: number;\n');
    f.write('other/outside.d.ts', 'declare const OUTSIDE: number;\n');
    f.write('src/job.ts', 'export class Job {\n  run(): number {\n    return 1;\n  }\n}\n');
    for (let i = 0; i < 6; i++) f.write(`src/pad${i}.ts`, `export const pad${i} = ${i};\n`);
    f.write('src/use.ts', "export function go(b: Bindings): string {\n  currentJob().run();\n  return KV.get(b.name) + String(HIDDEN + OUTSIDE);\n}\n");
    return [f.commit('one')];
  });

  it.each([
    ['the import closure (14 TS files above a Program cap of 6)', 6, 3],
    ['every file (default caps): the Program still loads only the roots, their imports and the ambient files', undefined, 4],
  ])('binds globals of unimported ambient files the config includes, and not those it excludes or leaves out: %s', async (_what, maxProgramFiles, programFiles) => {
    const cache = FactsCache.open(suite.cacheDir);
    let g: CodeGraph;
    try {
      g = new CodeGraph(await indexCommit(suite.repo, suite.commits[0], { cache }));
    } finally {
      cache.close();
    }
    const stats = await addCheckerEdges(g, suite.repo, { files: ['src/use.ts'], maxProgramFiles });
    expect(stats.walked).toBe(1);
    const into = (file: string) => g.edges.filter((e) => e.fromFile === 'src/use.ts' && e.toFile === file && e.provenance === 'checker').map((e) => e.to.slice(e.to.indexOf('#') + 1));
    expect(into('types/runtime.d.ts')).toEqual(expect.arrayContaining(['KV', 'Bindings']));
    expect(into('types/globals.d.ts')).toEqual(['currentJob']);
    expect(into('types/excluded/hidden.d.ts')).toEqual([]);
    expect(into('other/outside.d.ts')).toEqual([]);
    // use.ts, runtime.d.ts, globals.d.ts (and, when every text is read, src/job.ts it imports): the
    // module-style types/module.d.ts, the excluded and the left-out files are not loaded.
    expect(stats.programFiles).toBe(programFiles);
  });
});

/** A JavaScript package with hand-written typings: a TypeScript file is checked against the declarations. */
describe('TypeScript importers of a JavaScript package with hand-written typings', () => {
  const suite = gitRepoSuite('rl-type-edges-typings-', (f) => {
    f.write('package.json', '{ "name": "pkg", "type": "module", "exports": { "types": "./index.d.ts", "default": "./index.js" } }\n');
    f.write('index.js', "export function run(cmd) {\n  return cmd.length;\n}\n");
    f.write('index.d.ts', "export {run} from './types/run.js';\n");
    f.write('types/run.d.ts', '/** Runs it. */\nexport declare const run: (cmd: string) => number;\n');
    f.write('test-d/run.test-d.ts', "import {run} from '../index.js';\nexport function check(): number {\n  return run('x');\n}\n");
    f.write('test/run.js', "import {run} from '../index.js';\nexport function go() {\n  return run('x');\n}\n");
    return [f.commit('one')];
  });

  it('lands a TS importer on the hand-written `export declare const` the checker resolves, and keeps the syntactic edge to the implementation', async () => {
    const cache = FactsCache.open(suite.cacheDir);
    let g: CodeGraph;
    try {
      g = new CodeGraph(await indexCommit(suite.repo, suite.commits[0], { cache }));
    } finally {
      cache.close();
    }
    expect(g.defsByFile.get('types/run.d.ts')!.map((d) => d.def.qname)).toEqual(['run']);
    await addCheckerEdges(g, suite.repo, { files: ['test-d/run.test-d.ts', 'test/run.js'] });
    const into = (from: string) => [...new Set(g.edges.filter((e) => e.fromFile === from && e.toFile !== from).map((e) => e.to))].sort();
    // The syntactic resolver keeps `../index.js` = the implementation (measured the better target for formation on execa, docs/cohorts.md).
    expect(into('test-d/run.test-d.ts')).toEqual(['index.js#run', 'types/run.d.ts#run']);
    expect(into('test/run.js')).toContain('index.js#run');
  });
});

/** `type-bindings`: checker edges through a binding or a module's member join; JavaScript into typings does not. */
describe('type-bindings formation signal', () => {
  const suite = gitRepoSuite('rl-type-bindings-', (f) => {
    f.write('package.json', '{ "name": "p", "main": "lib/index.js", "types": "typings/index.d.ts" }\n');
    f.write('lib/index.js', 'exports.helper = function helper() {\n  return 1;\n};\n');
    f.write('lib/main.js', "const lib = require('./');\nmodule.exports = () => lib.helper();\n");
    f.write('typings/index.d.ts', 'export declare function helper(): number;\n');
    f.write('test/use.test.js', "const p = require('..');\ntest('helper', () => {\n  p.helper();\n});\n");
    const c1 = f.commit('one');
    f.write('lib/index.js', 'exports.helper = function helper() {\n  return 2;\n};\n');
    f.write('lib/main.js', "const lib = require('./');\nmodule.exports = () => lib.helper() + 1;\n");
    f.write('typings/index.d.ts', 'export declare function helper(n?: number): number;\n');
    f.write('test/use.test.js', "const p = require('..');\ntest('helper', () => {\n  p.helper(1);\n});\n");
    return [c1, f.commit('two')];
  });

  it('joins lib/main.js to the changed lib/index.js through the module object, never a JS test to the typings', async () => {
    const workspaceDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-tb-ws-'));
    try {
      const [c1, c2] = suite.commits;
      const base = ['changed-reference', 'new-symbol-import', 'changed-import', 'code-change', 'test-subject'] as const;
      const together = (d: { cohorts: Array<{ files: string[] }> }, a: string, b: string) => d.cohorts.some((c) => c.files.includes(a) && c.files.includes(b));
      const syntaxOnly = (await computeReview({ repo: suite.repo, baseSha: c1, headSha: c2, workspaceDir, typeEdges: false })).data;
      expect(together(syntaxOnly, 'lib/main.js', 'lib/index.js')).toBe(false);
      const without = (await computeReview({ repo: suite.repo, baseSha: c1, headSha: c2, workspaceDir, signals: base })).data;
      expect(together(without, 'lib/main.js', 'lib/index.js')).toBe(false);
      // type-bindings is a default signal.
      const plain = (await computeReview({ repo: suite.repo, baseSha: c1, headSha: c2, workspaceDir })).data;
      expect(together(plain, 'lib/main.js', 'lib/index.js')).toBe(true);
      const bindings = await computeReview({ repo: suite.repo, baseSha: c1, headSha: c2, workspaceDir, signals: [...base, 'type-bindings'] });
      expect(bindings.head!.edges.find((e) => e.fromFile === 'lib/main.js' && e.toFile === 'lib/index.js')).toMatchObject({ provenance: 'checker', form: 'namespace' });
      expect(bindings.head!.edges.find((e) => e.fromFile === 'test/use.test.js' && e.toFile === 'typings/index.d.ts')).toMatchObject({ provenance: 'checker' });
      expect(together(bindings.data, 'lib/main.js', 'lib/index.js')).toBe(true);
      expect(together(bindings.data, 'test/use.test.js', 'typings/index.d.ts')).toBe(false);
      const all = (await computeReview({ repo: suite.repo, baseSha: c1, headSha: c2, workspaceDir, signals: [...base, 'type-edges'] })).data;
      expect(together(all, 'test/use.test.js', 'typings/index.d.ts')).toBe(true);
    } finally {
      fs.rmSync(workspaceDir, { recursive: true, force: true });
    }
  });
});

/**
 * The root config's include / exclude patterns come from the tenant's repository: they are matched without
 * regular expressions (a backtracking RegExp took tens of seconds per path on `*a*a*a*a*a*a*a*b.d.ts` or a
 * dozen `**` segments), within a step budget counted in comparisons.
 */
describe("tsconfig include / exclude matching (the tenant's patterns)", () => {
  const filter = (config: unknown) => projectFileFilter(JSON.stringify(config));
  it('follows TypeScript\'s wildcards: * and ? in a segment, ** for any depth, a directory includes what is under it, exclude wins over include, files always count', () => {
    const f = filter({ include: ['src', 'types/*.d.ts', 'env?.d.ts', 'deep/**/g.d.ts'], exclude: ['src/gen'], files: ['extra/x.d.ts'] });
    expect(['src/a.d.ts', 'src/x/y/b.d.ts', 'types/t.d.ts', 'env1.d.ts', 'deep/g.d.ts', 'deep/a/b/g.d.ts', 'extra/x.d.ts'].filter(f.test)).toEqual(['src/a.d.ts', 'src/x/y/b.d.ts', 'types/t.d.ts', 'env1.d.ts', 'deep/g.d.ts', 'deep/a/b/g.d.ts', 'extra/x.d.ts']);
    expect(['src/gen/a.d.ts', 'types/x/t.d.ts', 'env12.d.ts', 'deep/a/h.d.ts', 'other/x.d.ts', '../x.d.ts'].filter(f.test)).toEqual([]);
    // Without include: everything but the default excludes.
    const d = filter({});
    expect(['a.d.ts', 'x/y.d.ts', 'node_modules/z/index.d.ts'].filter(d.test)).toEqual(['a.d.ts', 'x/y.d.ts']);
    expect(d.exhausted()).toBe(false);
  });

  it('answers hostile patterns at once, and exactly', () => {
    const started = performance.now();
    const stars = filter({ include: ['*a*a*a*a*a*a*a*b.d.ts', Array(12).fill('**').join('/') + '/z.d.ts', Array(12).fill('**/x').join('/') + '/z.d.ts'] });
    expect(stars.test(`${'a'.repeat(60)}.d.ts`)).toBe(false);
    expect(stars.test(`${'a'.repeat(60)}b.d.ts`)).toBe(true);
    expect(stars.test(`${Array(22).fill('d').join('/')}/x.d.ts`)).toBe(false);
    expect(stars.test(`${Array(22).fill('d').join('/')}/z.d.ts`)).toBe(true);
    expect(stars.exhausted()).toBe(false);
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('past its step budget the config names no file more (the same on every machine), and nothing hangs', () => {
    const long = 'a'.repeat(1000);
    const f = filter({ include: Array(256).fill(`*${'a*'.repeat(400)}b`) });
    const started = performance.now();
    const answers = Array.from({ length: 50 }, (_, i) => f.test(`${long}${i}.d.ts`));
    expect(answers.every((a) => a === false)).toBe(true);
    expect(f.exhausted()).toBe(true);
    expect(TSCONFIG_GLOB_BUDGET).toBeGreaterThan(0);
    expect(performance.now() - started).toBeLessThan(5000);
  });
});
