import { z } from 'zod';
import { shaSchema } from '../events/catalogue/review';
import { PrState, NodeCore, prDecisionFold } from '../review/pr-state';
import { resolveCommits } from './commits';
import type { CommandDefinition } from './kernel';
import { reviewStreamOf, reviewTarget } from '../events/streams';

const input = z.object({
  ...reviewTarget,
  headSha: shaSchema,
  /** The base the source reported with this head (taken as given when the clone does not know it yet). */
  baseSha: shaSchema.optional(),
  source: z.string().max(100).optional(),
  /** When the source saw this head (ISO-8601): an observation older than the current one is ignored. */
  observedAt: z.string().datetime().optional(),
});

/** Records the PR's latest head (from a webhook, a poll or a client); drives the stale flag (SPEC §10). */
export const observeHead: CommandDefinition<z.infer<typeof input>, PrState<NodeCore>> = {
  name: 'observeHead',
  description: "Record the PR's current head SHA; the review shows as stale while it differs from the reviewed head.",
  input,
  access: { minRole: 'member' },
  stream: reviewStreamOf,
  fold: prDecisionFold,
  async prepare(cmd, env) {
    // SPEC §10: resolved to the full commit when the registered repo knows it; a full head the clone has
    // not fetched yet (a webhook can be first) is taken as given, an unknown abbreviated one is refused.
    const fields: Record<string, string> = cmd.baseSha ? { headSha: cmd.headSha, baseSha: cmd.baseSha } : { headSha: cmd.headSha };
    const shas = await resolveCommits(env.workspace, cmd.repoId, fields, { allowUnknownFull: true });
    return { ...cmd, headSha: shas.headSha, ...(shas.baseSha ? { baseSha: shas.baseSha } : {}) };
  },
  decide(state, cmd) {
    if (state.observedHead === cmd.headSha) return [];
    // Never backwards: a delivery GitHub stamped before the one that set the current head is stale.
    if (cmd.observedAt && state.observedHeadAt && Date.parse(cmd.observedAt) < Date.parse(state.observedHeadAt)) return [];
    return [{ type: 'HeadObserved', data: { headSha: cmd.headSha, ...(cmd.baseSha ? { baseSha: cmd.baseSha } : {}), source: cmd.source, ...(cmd.observedAt ? { observedAt: cmd.observedAt } : {}) } }];
  },
  result: (events) => ({ recorded: events.length > 0 }),
};
