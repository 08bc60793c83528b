import { z } from 'zod';
import { DomainError } from '../domain-error';
import { axisStatusSchema } from '../events/catalogue/compute';
import { shaSchema } from '../events/catalogue/review';
import { currentRound, PrState, NodeCore, prDecisionFold } from '../review/pr-state';
import type { CommandDefinition } from './kernel';
import { requireReview } from './review-target';
import { reviewStreamOf, reviewTarget } from '../events/streams';

const input = z
  .object({
    ...reviewTarget,
    axis: z.enum(['visual', 'apiContract', 'performance']),
    status: axisStatusSchema,
    reason: z.string().min(1).max(4000).optional(),
    headSha: shaSchema.optional(),
  })
  .refine((a) => a.reason !== undefined || a.status === 'pass' || a.status === 'warn', { message: 'reason is required for fail, partial, unavailable and not_applicable', path: ['reason'] });

/**
 * Records a deterministic axis result for a head (default: the current round's). For axes the compute
 * also produces, the verdict keeps the stricter of the two, so a recorded result never opens a gate.
 */
export const recordAxis: CommandDefinition<z.infer<typeof input>, PrState<NodeCore>> = {
  name: 'recordAxis',
  description: 'Record a deterministic axis result (visual, apiContract, performance) for a head of the review.',
  input,
  access: { minRole: 'member' },
  stream: reviewStreamOf,
  fold: prDecisionFold,
  decide(state, cmd, ctx) {
    requireReview(state, cmd);
    const headSha = cmd.headSha ?? currentRound(state)!.headSha;
    if (!state.rounds.some((r) => r.headSha === headSha)) throw new DomainError('unknown_head', `headSha: ${headSha} is not a head this review has reviewed`, { headSha });
    return [{ type: 'AxisRecorded', data: { axis: cmd.axis, status: cmd.status, reason: cmd.reason, headSha, by: ctx.principal, role: ctx.role } }];
  },
  result: (events) => ({ recorded: events.length > 0 }),
};
