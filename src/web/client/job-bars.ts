import type { ProgressUpdate } from '../../job-progress/hub';

/**
 * The job bars the Review page shows for one PR: its compute and its repo's indexing, latest first, at
 * most three. A job that finished is gone (issue 38: finished bars stayed on the page; the computed
 * review itself says it is there); a failed one stays, with its error, until a newer job replaces it.
 */
export function visibleJobs(jobs: readonly ProgressUpdate[], target: { repoId: string; prNumber: number }): ProgressUpdate[] {
  return jobs
    .filter((j) => j.status !== 'done' && j.repoId === target.repoId && (j.prNumber === undefined || j.prNumber === target.prNumber))
    .sort((a, b) => b.seq - a.seq)
    .slice(0, 3);
}
