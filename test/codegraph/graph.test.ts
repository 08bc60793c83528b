import { FactsCache } from '../../src/codegraph/facts-cache';
import { CodeGraph } from '../../src/codegraph/graph';
import { closeSharedExtractPool } from '../../src/codegraph/extract-pool';
import { blastRadius } from '../../src/codegraph/impact';
import { indexCommit } from '../../src/codegraph/indexer';
import { GitRepo } from '../../src/git/repo';
import { GitFixture } from '../support/git-fixture';
import { gitRepoSuite } from '../support/git-repo-suite';

jest.setTimeout(60_000);

describe('code graph', () => {
  const suite = gitRepoSuite('rl-graph-', (f) => {
    f.write('src/core.ts', 'export type Id = string;\nexport enum Mode { A, B }\nexport const LIMIT = 3;\nexport function base(id: Id): Mode {\n  return Mode.A;\n}\nexport class Box {\n  open = () => base("x");\n}\n');
    f.write('src/index.ts', "export * from './core';\nexport { base as renamed } from './core';\n");
    f.write('src/use.ts', "import { renamed, Box, LIMIT } from './index';\nimport * as core from './core';\n\nexport function use(): number {\n  new Box();\n  core.base('y');\n  return LIMIT + (renamed('z') as number);\n}\n");
    f.write('src/far.ts', "import { use } from './use';\nexport const far = () => use();\n");
    f.write('src/far.test.ts', "import { far } from './far';\ntest('far', () => far());\n");
    f.write('src/other.ts', 'export function base(): number {\n  return 1;\n}\n');
    f.write('app/Main.scala', 'object Main\n');
    const c1 = f.commit('one');
    f.write('src/other.ts', 'export function base(): number {\n  return 2;\n}\n');
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

  it('extracts TypeScript definitions tags.scm misses: type aliases, enums, consts, class-field arrow functions', async () => {
    const cache = FactsCache.open(cacheDir);
    const idx = await indexCommit(repo, c1, { cache });
    cache.close();
    const g = new CodeGraph(idx);
    for (const id of ['src/core.ts#Id', 'src/core.ts#Mode', 'src/core.ts#LIMIT', 'src/core.ts#base', 'src/core.ts#Box', 'src/core.ts#Box.open']) expect(g.symbols.has(id)).toBe(true);
    expect(idx.unsupported).toEqual([{ path: 'app/Main.scala', language: 'scala' }]);
  });

  it('resolves through re-exports (export *, export { a as b }) and namespace imports; never to a same-name definition elsewhere', async () => {
    const cache = FactsCache.open(cacheDir);
    const g = new CodeGraph(await indexCommit(repo, c1, { cache }));
    cache.close();
    const targets = g.outgoingOf('src/use.ts#use').map((e) => e.to).sort();
    expect(targets).toEqual(['src/core.ts#Box', 'src/core.ts#LIMIT', 'src/core.ts#base']);
    expect(g.edges.some((e) => e.to === 'src/other.ts#base')).toBe(false);
  });

  it('re-indexing another commit parses only the changed blobs', async () => {
    const cache = FactsCache.open(cacheDir);
    await indexCommit(repo, c1, { cache });
    const second = await indexCommit(repo, c2, { cache });
    cache.close();
    expect(second.parsedBlobs).toBe(1);
    expect(second.cachedBlobs).toBe(second.fileCount - 1);
  });

  it('blast radius walks resolved dependents transitively and finds the tests reaching them', async () => {
    const cache = FactsCache.open(cacheDir);
    const g = new CodeGraph(await indexCommit(repo, c1, { cache }));
    cache.close();
    const r = blastRadius(g, { symbolId: 'src/core.ts#base' }, 3);
    expect(r.dependents.files).toEqual(['src/far.test.ts', 'src/far.ts', 'src/use.ts']);
    expect(r.tests).toEqual(['src/far.test.ts']);
    expect(blastRadius(g, { symbolId: 'src/core.ts#base' }, 1).dependents.files).toEqual(['src/use.ts']);
  });

  it('parsing on worker threads gives exactly the facts of parsing on this thread', async () => {
    const big = new GitFixture('rl-graph-big-');
    try {
      for (let i = 0; i < 120; i++) big.write(`m/mod${i}.ts`, `import { f${(i + 1) % 120} } from './mod${(i + 1) % 120}';\nexport function f${i}(x: number): number {\n  return x > 0 ? f${(i + 1) % 120}(x - 1) : ${i};\n}\n`);
      const sha = big.commit('many');
      const bigRepo = await GitRepo.open(big.dir);
      try {
        const parallel = await indexCommit(bigRepo, sha, { cache: FactsCache.open(':memory:') });
        const serial = await indexCommit(bigRepo, sha, { cache: FactsCache.open(':memory:'), parallel: false });
        expect(parallel.parsedBlobs).toBe(120);
        expect([...parallel.files.entries()]).toEqual([...serial.files.entries()]);
        expect(new CodeGraph(parallel).edges).toHaveLength(120);
      } finally {
        bigRepo.close();
        await closeSharedExtractPool();
      }
    } finally {
      big.cleanup();
    }
  });

  it('Java: single-type and on-demand (`.*`) imports and same-package types resolve; other packages do not', async () => {
    const j = new GitFixture('rl-graph-java-');
    try {
      j.write('src/main/java/a/model/User.java', 'package a.model;\n\npublic class User {\n  public static User of(String n) {\n    return new User();\n  }\n}\n');
      j.write('src/main/java/a/model/Role.java', 'package a.model;\n\npublic class Role {\n  public User owner() {\n    return User.of("x");\n  }\n}\n');
      j.write('src/main/java/a/app/Service.java', 'package a.app;\n\nimport a.model.*;\n\npublic class Service {\n  public Role run() {\n    User u = User.of("y");\n    return new Role();\n  }\n}\n');
      j.write('src/main/java/b/User.java', 'package b;\n\npublic class User {\n  public static User of(String n) {\n    return null;\n  }\n}\n');
      const sha = j.commit('java');
      const jr = await GitRepo.open(j.dir);
      try {
        const g = new CodeGraph(await indexCommit(jr, sha, { cache: FactsCache.open(':memory:') }));
        expect(g.outgoingOf('src/main/java/a/app/Service.java#Service.run').map((e) => e.to).sort()).toEqual([
          'src/main/java/a/model/Role.java#Role',
          'src/main/java/a/model/User.java#User',
          'src/main/java/a/model/User.java#User.of',
        ]);
        expect(g.outgoingOf('src/main/java/a/model/Role.java#Role.owner').map((e) => e.to).sort()).toEqual(['src/main/java/a/model/User.java#User', 'src/main/java/a/model/User.java#User.of']);
        expect(g.edges.some((e) => e.toFile === 'src/main/java/b/User.java' && e.fromFile !== e.toFile)).toBe(false);
      } finally {
        jr.close();
      }
    } finally {
      j.cleanup();
    }
  });

  it('C: a function definition spans its body, and calls resolve through a quoted #include', async () => {
    const c = new GitFixture('rl-graph-c-');
    try {
      c.write('lib/b.h', 'int g(int x);\n');
      c.write('lib/b.c', '#include "b.h"\nint g(int x) {\n  return x + 1;\n}\n');
      c.write('app/a.c', '#include "../lib/b.h"\nstatic int h(int x) {\n  return g(x);\n}\nint f(int x) {\n  return h(x) + 1;\n}\n');
      const sha = c.commit('c');
      const cr = await GitRepo.open(c.dir);
      try {
        const g = new CodeGraph(await indexCommit(cr, sha, { cache: FactsCache.open(':memory:') }));
        expect(g.symbols.get('app/a.c#h')!.def).toMatchObject({ start: 2, end: 4, exported: false });
        expect(g.outgoingOf('app/a.c#h').map((e) => e.to)).toEqual(['lib/b.h#g']);
        expect(g.outgoingOf('app/a.c#f').map((e) => e.to)).toEqual(['app/a.c#h']);
      } finally {
        cr.close();
      }
    } finally {
      c.cleanup();
    }
  });

  it('TypeScript: non-relative imports resolve through tsconfig paths and baseUrl (JSON with comments); packages stay external', async () => {
    const t = new GitFixture('rl-graph-tsconfig-');
    try {
      t.write('web/tsconfig.json', '{\n  // editor settings\n  "compilerOptions": {\n    "baseUrl": ".", /* root */\n    "paths": { "@app/*": ["src/*"], "@util": ["lib/util/index.ts"] },\n  },\n}\n');
      t.write('web/src/b.ts', 'export function g(): number {\n  return 1;\n}\n');
      t.write('web/lib/util/index.ts', 'export const u = 2;\n');
      t.write('web/lib/c.ts', 'export function c(): number {\n  return 3;\n}\n');
      t.write('web/src/a.ts', "import { g } from '@app/b';\nimport { u } from '@util';\nimport { c } from 'lib/c';\nimport React from 'react';\n\nexport function f(): number {\n  return g() + u + c() + React.version;\n}\n");
      const sha = t.commit('ts');
      const tr = await GitRepo.open(t.dir);
      try {
        const g = new CodeGraph(await indexCommit(tr, sha, { cache: FactsCache.open(':memory:') }));
        expect(g.outgoingOf('web/src/a.ts#f').map((e) => e.to).sort()).toEqual(['web/lib/c.ts#c', 'web/lib/util/index.ts#u', 'web/src/b.ts#g']);
        expect(g.stats.external).toBeGreaterThan(0);
      } finally {
        tr.close();
      }
    } finally {
      t.cleanup();
    }
  });
});
