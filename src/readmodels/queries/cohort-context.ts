import { reviewStreamOf } from '../../events/streams';
import { affectsContext, CohortContextState, contextFoldFor, contextOf, prepareContext, StaleContext } from '../../context/context-fold';
import { cohortContextInput, CohortContextInput, ContextPack } from '../../context/pack-types';
import type { QueryDefinition } from './query';

/**
 * `review_studio.cohortContext` (MCP `get_cohort_context`): one cohort's context pack at the review's
 * head within `budgetBytes`. Not a fold of events alone: it reads the head's code graph and files, loaded
 * at the edge (fold) and kept warm per workspace. History spans every PR of the repo, so the source is
 * the whole log.
 */
export const cohortContextQuery: QueryDefinition<CohortContextInput, CohortContextState, ContextPack | StaleContext> = {
  name: 'cohortContext',
  description:
    'Context pack of one cohort at the review head: its fragments (diff hunks with symbol ids) and clues {relation, kind, ref, content} — resolved callers/callees, tests, contract changes, dependency diffs, docs and earlier reviews of the same symbols — within budgetBytes, degraded to signatures then pointers and listed in `truncated`.',
  input: cohortContextInput,
  access: { minRole: 'viewer' },
  affects: affectsContext,
  async fold(input, ws) {
    const materials = await prepareContext(ws, input, [input.cohortKey]);
    return contextFoldFor(input.repoId, reviewStreamOf(input), materials);
  },
  sources: () => 'all',
  view: (s, input) => contextOf(s, input.cohortKey, input.budgetBytes),
};
