import { z } from 'zod';
import { ofType } from '../events/catalogue/event-types';
import { computeFold, ComputeState } from '../compute/streams';
import { DomainError } from '../domain-error';
import { CohortSummarySet } from '../events/catalogue/compute';
import type { CommandDefinition } from './kernel';
import { reviewStreamOf, reviewTarget } from '../events/streams';

const input = z.object({ ...reviewTarget, cohortKey: CohortSummarySet.schema.shape.cohortKey, markdown: CohortSummarySet.schema.shape.markdown });
type Input = z.infer<typeof input>;

/** Sets the markdown summary of a cohort of the latest computation; keyed by the stable cohort key (SPEC §8.4, §8.6). */
export const setCohortSummary: CommandDefinition<Input, ComputeState> = {
  name: 'setCohortSummary',
  description: 'Set the markdown summary of one cohort (by its stable key) of the latest review computation.',
  input,
  access: { minRole: 'member' },
  stream: reviewStreamOf,
  fold: computeFold,
  decide(state, cmd, ctx) {
    if (!state.latest) throw new DomainError('not_computed', `prNumber: ${cmd.repoId}#${cmd.prNumber} has no review computation yet`);
    if (!state.latest.cohorts.some((c) => c.key === cmd.cohortKey)) throw new DomainError('cohort_not_found', `cohortKey: "${cmd.cohortKey}" is not a cohort of the latest computation (head ${state.latest.headSha})`, { cohortKey: cmd.cohortKey });
    if (state.summaries[cmd.cohortKey]?.markdown === cmd.markdown) return [];
    return [{ type: 'CohortSummarySet', data: { cohortKey: cmd.cohortKey, markdown: cmd.markdown, by: ctx.principal } }];
  },
  result: (events) => {
    const d = events.find(ofType('CohortSummarySet'))?.data;
    return d ? { set: true, cohortKey: d.cohortKey } : { set: false, reason: 'unchanged' };
  },
};
