import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { GitRepo } from '../../src/git/repo';
import { GitFixture } from './git-fixture';

export interface GitRepoSuite {
  readonly fixture: GitFixture;
  /** A facts cache folder of the suite's own (FactsCache.open). */
  readonly cacheDir: string;
  /** Set before the suite's tests run. */
  repo: GitRepo;
  commits: string[];
}

/**
 * A real git repository for a code-graph suite: `build` writes and commits it in beforeAll (returning its
 * commits, oldest first), then it is opened as a GitRepo; everything is removed in afterAll. Register it
 * before the suite's own hooks, which then see `repo` and `commits`.
 */
export function gitRepoSuite(prefix: string, build: (f: GitFixture) => string[]): GitRepoSuite {
  const suite = { fixture: new GitFixture(prefix), cacheDir: fs.mkdtempSync(path.join(os.tmpdir(), 'rl-cache-')), repo: undefined as unknown as GitRepo, commits: [] as string[] };
  beforeAll(async () => {
    suite.commits = build(suite.fixture);
    suite.repo = await GitRepo.open(suite.fixture.dir);
  });
  afterAll(() => {
    suite.repo?.close();
    suite.fixture.cleanup();
    fs.rmSync(suite.cacheDir, { recursive: true, force: true });
  });
  return suite;
}
