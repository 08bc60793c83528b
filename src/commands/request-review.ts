import { z } from 'zod';
import { shaSchema } from '../events/catalogue/review';
import type { ReviewLevel } from '../events/catalogue/workspace';
import { rosterFor } from '../review/levels';
import { currentRound, PrState, prFold } from '../review/pr-state';
import type { Rules } from '../rules/rules';
import type { CommandDefinition, PendingEvent } from './kernel';
import { loadActiveRules, loadWorkspaceState, reviewStreamOf, reviewTarget } from './review-target';

const input = z.object({ ...reviewTarget, baseSha: shaSchema, headSha: shaSchema });
type Input = z.infer<typeof input>;
type Prepared = Input & { level: ReviewLevel; rules: Rules };

/**
 * One review per PR (SPEC §10): the first request starts it with the workspace level and roster
 * snapshotted; a later request returns the same review, starting a new round when the head moved.
 * Two concurrent first requests cannot both start one: both decide on "no stream", the kernel's exact
 * expected revision lets one append, and the other re-decides on the stored review and writes nothing.
 */
export const requestReview: CommandDefinition<Input, PrState, Prepared> = {
  name: 'requestReview',
  description: 'Request the review of a PR (repoId + prNumber); returns the existing review, with a new round when the head moved.',
  input,
  access: { minRole: 'member' },
  stream: reviewStreamOf,
  fold: prFold,
  async prepare(cmd, env) {
    const ws = await loadWorkspaceState(env.workspace);
    return { ...cmd, level: ws.level, rules: await loadActiveRules(env.workspace) };
  },
  decide(state, cmd, ctx) {
    if (!state.exists) {
      return [
        {
          type: 'ReviewRequested',
          data: {
            repoId: cmd.repoId,
            prNumber: cmd.prNumber,
            baseSha: cmd.baseSha,
            headSha: cmd.headSha,
            level: cmd.level,
            roster: rosterFor(cmd.level, cmd.rules),
            rulesVersion: cmd.rules.rulesVersion,
            requestedBy: ctx.principal,
            role: ctx.role,
          },
        },
      ];
    }
    const round = currentRound(state)!;
    if (round.headSha === cmd.headSha) return [];
    const events: PendingEvent[] = [{ type: 'ReviewRoundStarted', data: { round: state.rounds.length + 1, baseSha: cmd.baseSha, headSha: cmd.headSha, requestedBy: ctx.principal, role: ctx.role } }];
    if (state.status !== 'requested') events.push({ type: 'ReviewStatusChanged', data: { from: state.status, to: 'requested', reason: `new round at head ${cmd.headSha}` } });
    return events;
  },
  result(events) {
    if (events.length === 0) return { started: false, newRound: false };
    const first = events[0];
    const d = first.data as { round?: number; level?: string; roster?: string[] };
    return first.type === 'ReviewRequested' ? { started: true, newRound: true, round: 1, level: d.level, roster: d.roster } : { started: false, newRound: true, round: d.round };
  },
};
