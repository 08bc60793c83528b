import { z } from 'zod';
import { shaSchema } from '../events/catalogue/review';
import { PrState, prFold } from '../review/pr-state';
import { resolveCommits } from './commits';
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
  async prepare(cmd, env) {
    // SPEC §10: resolved to the full commit when the registered repo knows it; a full head the clone has
    // not fetched yet (a webhook can be first) is taken as given, an unknown abbreviated one is refused.
    const { headSha } = await resolveCommits(env.workspace, cmd.repoId, { headSha: cmd.headSha }, { allowUnknownFull: true });
    return { ...cmd, headSha };
  },
  decide(state, cmd) {
    if (state.observedHead === cmd.headSha) return [];
    return [{ type: 'HeadObserved', data: { headSha: cmd.headSha, source: cmd.source } }];
  },
  result: (events) => ({ recorded: events.length > 0 }),
};
