import { z } from 'zod';
import { FactsCache } from '../codegraph/facts-cache';
import { CodeGraph } from '../codegraph/graph';
import { blastRadius, BlastRadiusView, cohortImpact } from '../codegraph/impact';
import { indexCommit } from '../codegraph/indexer';
import { DomainError } from '../domain-error';
import { CohortSummarySet } from '../events/catalogue/compute';
import { prNumberSchema, repoIdSchema } from '../events/catalogue/review';
import type { WorkspaceHandle } from '../workspaces/registry';
import { loadComputeState, loadRepoState, openRegisteredRepo } from './streams';
import { JOB_SLOTS } from './job-slots';

/** `review_studio.blastRadius`: per file or symbol, at a commit or at the PR's latest computed head. */
export const blastRadiusQueryInput = z
  .object({
    repoId: repoIdSchema,
    prNumber: prNumberSchema.optional(),
    commit: z.string().min(1).max(255).regex(/^[^-\s][^\s]*$/, 'commit must be a ref or sha').optional(),
    path: z.string().min(1).max(4000).optional(),
    symbolId: z.string().min(1).max(2000).optional(),
    depth: z.number().int().min(1).max(10).optional(),
  })
  .refine((i) => (i.path === undefined) !== (i.symbolId === undefined), { message: 'exactly one of path or symbolId is required', path: ['path'] })
  .refine((i) => i.commit !== undefined || i.prNumber !== undefined, { message: 'commit or prNumber is required', path: ['commit'] });

export async function queryBlastRadius(ws: WorkspaceHandle, input: z.infer<typeof blastRadiusQueryInput>): Promise<BlastRadiusView & { commit: string }> {
  const repoState = await loadRepoState(ws, input.repoId);
  let ref = input.commit;
  if (!ref) {
    const pr = await loadComputeState(ws, `pr-${input.repoId}-${input.prNumber}`);
    if (!pr.latest) throw new DomainError('not_computed', `prNumber: ${input.repoId}#${input.prNumber} has no review computation yet`);
    ref = pr.latest.headSha;
  }
  const repo = await openRegisteredRepo(repoState);
  const cache = FactsCache.open(ws.dir);
  try {
    const commit = await repo.revParse(ref);
    // A commit never computed is indexed here: one of the job slots, like computeReview.
    const graph = await JOB_SLOTS.run(ws.id, async () => new CodeGraph(await indexCommit(repo, commit, { cache })));
    const target = input.symbolId !== undefined ? { symbolId: input.symbolId } : { path: input.path! };
    return { commit, ...blastRadius(graph, target, input.depth) };
  } finally {
    cache.close();
    repo.close();
  }
}

/** `review_studio.cohortImpact`: who depends on one cohort of the PR's latest computation. */
export const cohortImpactQueryInput = z.object({ repoId: repoIdSchema, prNumber: prNumberSchema, cohortKey: CohortSummarySet.schema.shape.cohortKey });

export async function queryCohortImpact(ws: WorkspaceHandle, input: z.infer<typeof cohortImpactQueryInput>) {
  const pr = await loadComputeState(ws, `pr-${input.repoId}-${input.prNumber}`);
  if (!pr.latest) throw new DomainError('not_computed', `prNumber: ${input.repoId}#${input.prNumber} has no review computation yet`);
  return cohortImpact(pr.latest, input.cohortKey);
}
