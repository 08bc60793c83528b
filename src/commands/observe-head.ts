import { z } from 'zod';
import { shaSchema } from '../events/catalogue/review';
import { PrState, prFold } from '../review/pr-state';
import type { CommandDefinition } from './kernel';
import { reviewStreamOf, reviewTarget } from './review-target';

const input = z.object({ ...reviewTarget, headSha: shaSchema, source: z.string().max(100).optional() });

/** Records the PR's latest head (from a webhook, a poll or a client); drives the stale flag (SPEC §10). */
export const observeHead: CommandDefinition<z.infer<typeof input>, PrState> = {
  name: 'observeHead',
  description: "Record the PR's current head SHA; the review shows as stale while it differs from the reviewed head.",
  input,
  access: { minRole: 'member' },
  stream: reviewStreamOf,
  fold: prFold,
  decide(state, cmd) {
    if (state.observedHead === cmd.headSha) return [];
    return [{ type: 'HeadObserved', data: { headSha: cmd.headSha, source: cmd.source } }];
  },
  result: (events) => ({ recorded: events.length > 0 }),
};
