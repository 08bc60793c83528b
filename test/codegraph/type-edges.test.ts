import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { FactsCache } from '../../src/codegraph/facts-cache';
import { CodeGraph } from '../../src/codegraph/graph';
import { indexCommit } from '../../src/codegraph/indexer';
import { addCheckerEdges } from '../../src/codegraph/type-edges';
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

  it('joins the caller and the changed method in one cohort only with the type-edges signal', async () => {
    const workspaceDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-te-ws-'));
    try {
      const cohortOf = (cohorts: Array<{ files: string[] }>, p: string) => cohorts.findIndex((c) => c.files.includes(p));
      const plain = (await computeReview({ repo, baseSha: c1, headSha: c2, workspaceDir })).data;
      expect(cohortOf(plain.cohorts, 'src/use.ts')).not.toBe(cohortOf(plain.cohorts, 'src/job.ts'));
      expect(plain.metrics.checkerEdges).toBe(0);
      const typed = (await computeReview({ repo, baseSha: c1, headSha: c2, workspaceDir, signals: ['changed-reference', 'new-symbol-import', 'test-subject', 'type-edges'] })).data;
      expect(cohortOf(typed.cohorts, 'src/use.ts')).toBe(cohortOf(typed.cohorts, 'src/job.ts'));
      expect(typed.metrics.checkerEdges).toBeGreaterThan(0);
    } finally {
      fs.rmSync(workspaceDir, { recursive: true, force: true });
    }
  });
});
