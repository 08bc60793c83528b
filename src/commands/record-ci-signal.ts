import { z } from 'zod';
import { CiSignalRecorded, shaSchema } from '../events/catalogue/review';
import { PrState, NodeCore, prDecisionFold } from '../review/pr-state';
import type { CommandDefinition } from './kernel';
import { reviewStreamOf, reviewTarget } from '../events/streams';

const signal = CiSignalRecorded.schema.pick({ name: true, status: true, conclusion: true, url: true });
const input = z.object({ ...reviewTarget, ...signal.shape, headSha: shaSchema });

/** Records one CI check result for a head of the PR (SPEC §13), from a webhook payload or an RPC. */
export const recordCiSignal: CommandDefinition<z.infer<typeof input>, PrState<NodeCore>> = {
  name: 'recordCiSignal',
  description: 'Record a CI check result (name, status, conclusion, url) for a head of the PR.',
  input,
  access: { minRole: 'member' },
  stream: reviewStreamOf,
  fold: prDecisionFold,
  decide(state, cmd, ctx) {
    const prev = state.ciSignals[`${cmd.headSha}/${cmd.name}`];
    // Webhooks redeliver: the same state of the same check records nothing new.
    if (prev && prev.status === cmd.status && prev.conclusion === cmd.conclusion && prev.url === cmd.url) return [];
    return [{ type: 'CiSignalRecorded', data: { name: cmd.name, status: cmd.status, conclusion: cmd.conclusion, url: cmd.url, headSha: cmd.headSha, by: ctx.principal } }];
  },
  result: (events) => ({ recorded: events.length > 0 }),
};
