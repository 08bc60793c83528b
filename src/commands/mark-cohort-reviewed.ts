import { z } from 'zod';
import { ofType } from '../events/catalogue/event-types';
import { DomainError } from '../domain-error';
import { cohortSchema } from '../events/catalogue/compute';
import { reviewerBriefSchema } from '../events/catalogue/review';
import { cohortReviewStatusSchema } from '../events/catalogue/progress';
import { progressFold, ProgressState } from '../review-progress/progress';
import type { CommandDefinition } from './kernel';
import { reviewStreamOf, reviewTarget } from '../events/streams';

const input = z
  .object({
    ...reviewTarget,
    cohortKey: cohortSchema.shape.key,
    brief: reviewerBriefSchema,
    status: cohortReviewStatusSchema,
    reason: z.string().trim().min(1).max(4000).optional(),
  })
  .refine((i) => i.status === 'complete' || i.reason !== undefined, { message: 'reason: required when status is "partial" (say what was not reviewed)', path: ['reason'] });
type Input = z.infer<typeof input>;

/**
 * A reviewer brief records how far it got with one cohort: `complete`, or `partial` with the reason.
 * Finalize reads these marks: a cohort the roster did not review completely makes the token axes partial.
 */
export const markCohortReviewed: CommandDefinition<Input, ProgressState> = {
  name: 'markCohortReviewed',
  description: 'Mark one cohort as reviewed completely or partially (with the reason) for a reviewer brief; progress is keyed by the stable cohort key.',
  input,
  access: { minRole: 'member' },
  stream: reviewStreamOf,
  fold: progressFold,
  decide(state, cmd, ctx) {
    if (!state.exists) throw new DomainError('review_not_found', `prNumber: no review has been requested for ${cmd.repoId}#${cmd.prNumber}`, { repoId: cmd.repoId, prNumber: cmd.prNumber });
    if (!state.cohorts || !state.computedHead) throw new DomainError('not_computed', `prNumber: ${cmd.repoId}#${cmd.prNumber} has no computation yet (run computeReview first)`);
    if (!state.roster.includes(cmd.brief)) {
      throw new DomainError('brief_not_on_roster', `brief: "${cmd.brief}" is not on this review's roster (${state.roster.join(', ')})`, { brief: cmd.brief, roster: state.roster });
    }
    if (!state.cohorts.some((c) => c.key === cmd.cohortKey)) {
      throw new DomainError('cohort_not_found', `cohortKey: "${cmd.cohortKey}" is not a cohort of the computation at ${state.computedHead}`, { cohortKey: cmd.cohortKey });
    }
    return [
      {
        type: 'CohortReviewMarked',
        data: { cohortKey: cmd.cohortKey, brief: cmd.brief, status: cmd.status, ...(cmd.reason ? { reason: cmd.reason } : {}), headSha: state.computedHead, by: ctx.principal, role: ctx.role },
      },
    ];
  },
  result(events) {
    const d = events.find(ofType('CohortReviewMarked'))?.data;
    return d ? { cohortKey: d.cohortKey, brief: d.brief, status: d.status, headSha: d.headSha } : null;
  },
};
