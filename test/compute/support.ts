import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { FormationSignal } from '../../src/cohorts';
import { computeReview, ComputedReview } from '../../src/compute/review';
import { GitRepo } from '../../src/git/repo';
import { GitFixture } from '../support/git-fixture';

/**
 * Real git repositories built by a test file, each computed as a PR in a throwaway workspace dir;
 * everything made is removed after the file's tests.
 */
export function computeHarness(prefix: string): {
  fixture(): GitFixture;
  compute(f: GitFixture, base: string, head: string, signals?: FormationSignal[]): Promise<ComputedReview>;
} {
  const fixtures: GitFixture[] = [];
  const dirs: string[] = [];
  afterAll(() => {
    for (const f of fixtures) f.cleanup();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });
  return {
    fixture() {
      const f = new GitFixture(prefix);
      fixtures.push(f);
      return f;
    },
    async compute(f, base, head, signals) {
      const workspaceDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-ws-'));
      dirs.push(workspaceDir);
      const repo = await GitRepo.open(f.dir);
      try {
        return await computeReview({ repo, baseSha: base, headSha: head, workspaceDir, ...(signals ? { signals } : {}) });
      } finally {
        repo.close();
      }
    },
  };
}

/** Each cohort as its comma-joined files, sorted: the grouping a test asserts. */
export const groups = (r: ComputedReview): string[] => r.data.cohorts.map((c) => c.files.join(',')).sort();
export const cohortOf = (r: ComputedReview, file: string) => r.data.cohorts.find((c) => c.files.includes(file))!;
