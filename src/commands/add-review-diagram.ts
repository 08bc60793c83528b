import { z } from 'zod';
import { verifyDiagram } from '../codegraph/diagram-verification';
import { FactsCache } from '../codegraph/facts-cache';
import { CodeGraph } from '../codegraph/graph';
import { indexCommit } from '../codegraph/indexer';
import { computeFold, ComputeState, loadComputeState, loadRepoState, openRegisteredRepo } from '../compute/streams';
import { DomainError } from '../domain-error';
import { diagramInputSchema, ReviewDiagramAdded, VerifiedDiagram } from '../events/catalogue/compute';
import type { CommandDefinition } from './kernel';
import { reviewStreamOf, reviewTarget } from '../events/streams';
import { JOB_SLOTS } from '../compute/job-slots';

const input = z.object({
  ...reviewTarget,
  cohortKey: ReviewDiagramAdded.schema.shape.cohortKey,
  /** A typed object (sequence, entityRelation or stateMachine); mermaid or any other text is refused. */
  diagram: diagramInputSchema,
});
type Input = z.infer<typeof input>;
type Prepared = Input & { verified: VerifiedDiagram; headSha: string };

/** Adds a typed diagram to a cohort; each edge is checked against the head's code graph and stored verified or not (SPEC §8.6). */
export const addReviewDiagram: CommandDefinition<Input, ComputeState, Prepared> = {
  name: 'addReviewDiagram',
  description: 'Add a typed diagram (sequence, entityRelation, stateMachine — never mermaid text) to a cohort; every edge is verified against the code graph.',
  input,
  access: { minRole: 'member' },
  stream: reviewStreamOf,
  fold: computeFold,
  async prepare(cmd, env) {
    const pr = await loadComputeState(env.workspace, reviewStreamOf(cmd));
    if (!pr.latest) throw new DomainError('not_computed', `prNumber: ${cmd.repoId}#${cmd.prNumber} has no review computation yet`);
    const repoState = await loadRepoState(env.workspace, cmd.repoId);
    const repo = await openRegisteredRepo(repoState);
    const cache = FactsCache.open(env.workspace.dir);
    try {
      const graph = await JOB_SLOTS.run(env.workspace.id, async () => new CodeGraph(await indexCommit(repo, pr.latest!.headSha, { cache })));
      return { ...cmd, verified: verifyDiagram(cmd.diagram, graph), headSha: pr.latest.headSha };
    } finally {
      cache.close();
      repo.close();
    }
  },
  decide(state, cmd, ctx) {
    if (!state.latest) throw new DomainError('not_computed', 'prNumber: this review has no computation yet');
    if (!state.latest.cohorts.some((c) => c.key === cmd.cohortKey)) throw new DomainError('cohort_not_found', `cohortKey: "${cmd.cohortKey}" is not a cohort of the latest computation`, { cohortKey: cmd.cohortKey });
    return [{ type: 'ReviewDiagramAdded', data: { cohortKey: cmd.cohortKey, diagram: cmd.verified, headSha: cmd.headSha, by: ctx.principal } }];
  },
  result: (events) => events[0]?.data ?? null,
};
