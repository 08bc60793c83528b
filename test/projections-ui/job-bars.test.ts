import type { ProgressUpdate } from '../../src/job-progress/hub';
import { visibleJobs } from '../../src/web/client/job-bars';

const job = (seq: number, status: ProgressUpdate['status'], extra: Partial<ProgressUpdate> = {}): ProgressUpdate => ({
  job: `j${seq}`,
  kind: 'computeReview',
  status,
  repoId: 'shop',
  prNumber: 7,
  done: status === 'running' ? 1 : 4,
  total: 4,
  fraction: status === 'running' ? 0.25 : 1,
  seq,
  ...extra,
});

describe("the Review page's job bars (issue 38: finished bars stayed on the page)", () => {
  const target = { repoId: 'shop', prNumber: 7 };

  test('a finished job leaves; running and failed ones of this PR and its repo stay, latest first', () => {
    const jobs = [job(1, 'done'), job(2, 'failed', { error: 'git_output_too_large' }), job(3, 'running', { kind: 'indexCode', prNumber: undefined }), job(4, 'done', { kind: 'indexCode', prNumber: undefined })];
    expect(visibleJobs(jobs, target).map((j) => [j.job, j.status])).toEqual([
      ['j3', 'running'],
      ['j2', 'failed'],
    ]);
  });

  test('jobs of another PR or repo are not shown; at most three', () => {
    const jobs = [job(1, 'running', { prNumber: 8 }), job(2, 'running', { repoId: 'other' }), ...[3, 4, 5, 6].map((s) => job(s, 'running'))];
    expect(visibleJobs(jobs, target).map((j) => j.job)).toEqual(['j6', 'j5', 'j4']);
  });

  test('once every job finished, no bar is left', () => {
    expect(visibleJobs([job(1, 'done'), job(2, 'done', { kind: 'indexCode', prNumber: undefined })], target)).toEqual([]);
  });
});
