import { z } from 'zod';
import { ofType } from '../events/catalogue/event-types';
import { DomainError } from '../domain-error';
import { shaSchema } from '../events/catalogue/review';
import { PrState, NodeCore, prDecisionFold } from '../review/pr-state';
import type { CommandDefinition } from './kernel';
import { requireComputation } from './review-target';
import { reviewStreamOf, reviewTarget } from '../events/streams';
import { reopenAfterFinalization } from '../review/ladder';

const input = z.object({
  ...reviewTarget,
  changeId: z.string().min(1, 'changeId must not be empty').max(200, 'changeId must be at most 200 characters'),
  decision: z.enum(['approved', 'rejected'], { message: 'decision must be "approved" or "rejected"' }),
  note: z.string().max(4000, 'note must be at most 4000 characters').optional(),
  /** The head whose computed contract diff holds the change; default: the current round's head. */
  headSha: shaSchema.optional(),
});

/**
 * A human approves or rejects one API-contract change (SPEC §11). Decisions are keyed by the change's
 * stable changeId, so they keep applying after a recompute for as long as the same change reappears;
 * the gate (contractGate) reads them directly. Re-recording the decision already in force is a no-op;
 * changing it (approved → rejected) records the new one. A changeId the computed diff does not hold is
 * refused, so a typo can never silently approve nothing.
 */
export const setContractDecision: CommandDefinition<z.infer<typeof input>, PrState<NodeCore>> = {
  name: 'setContractDecision',
  description: 'Approve or reject one API-contract change of the computed head by its changeId (human principals, member or above). Rejected → the axis fails; all breaking changes approved → warn.',
  input,
  access: { minRole: 'member', humanOnly: true },
  stream: reviewStreamOf,
  fold: prDecisionFold,
  decide(state, cmd, ctx) {
    const { headSha, computed } = requireComputation(state, cmd, 'not_computed', 'deciding on contract changes');
    const change = computed.apiContract.changes.find((c) => c.changeId === cmd.changeId);
    if (!change) {
      const known = computed.apiContract.changes.map((c) => c.changeId);
      throw new DomainError(
        'unknown_contract_change',
        `changeId: "${cmd.changeId}" is not a contract change computed for ${headSha.slice(0, 12)} (${known.length ? `known: ${known.slice(0, 20).join(', ')}${known.length > 20 ? ', …' : ''}` : 'it has none'})`,
        { changeId: cmd.changeId, headSha },
      );
    }
    if (state.contractDecisions[cmd.changeId]?.decision === cmd.decision) return [];
    return [
      {
        type: 'ContractChangeDecided',
        data: { changeId: cmd.changeId, decision: cmd.decision, by: ctx.principal, ...(cmd.note !== undefined ? { note: cmd.note } : {}), headSha },
      },
      ...reopenAfterFinalization(state.status, 'a contract decision'),
    ];
  },
  result: (events) => {
    const d = events.find(ofType('ContractChangeDecided'))?.data;
    return { recorded: events.length > 0, changeId: d?.changeId ?? null, decision: d?.decision ?? null };
  },
};
