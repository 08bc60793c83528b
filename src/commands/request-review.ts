import { z } from 'zod';
import { ofType } from '../events/catalogue/event-types';
import { shaSchema } from '../events/catalogue/review';
import type { ReviewLevel } from '../events/catalogue/workspace';
import { CarryOverData, gatherCarryOver } from '../review/carry-facts';
import { rosterFor } from '../review/levels';
import { currentRound, PrState, prFold } from '../review/pr-state';
import type { Rules } from '../rules/rules';
import type { CommandDefinition } from './kernel';
import type { PendingEvent } from '../events/kernel-types';
import { resolveCommits } from './commits';
import { loadActiveRules } from '../rules/rules';
import { loadPrState } from '../review/pr-state';
import { loadWorkspaceState } from '../workspaces/workspace-state';
import { reviewStreamOf, reviewTarget } from '../events/streams';
import { observedAncestorOf } from './head-ancestry';
import type { Frozen } from '../events/kernel-types';

const input = z.object({ ...reviewTarget, baseSha: shaSchema, headSha: shaSchema });
type Input = z.infer<typeof input>;
type Prepared = Input & { level: ReviewLevel; rules: Rules; carry: CarryOverData | null; observedAncestor: string | null };

/**
 * One review per PR (SPEC §10): the first request starts it with the workspace level and roster
 * snapshotted; a later request returns the same review, starting a new round when the head moved.
 * Two concurrent first requests cannot both start one: both decide on "no stream", the kernel's exact
 * expected revision lets one append, and the other re-decides on the stored review and writes nothing.
 * Both SHAs are resolved to full commits through the registered repo first (SPEC §10; unknown commits are
 * refused). A new round records `FindingsCarriedOver`: what of the previous round still applies (SPEC §5).
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
    const { baseSha, headSha } = await resolveCommits(env.workspace, cmd.repoId, { baseSha: cmd.baseSha, headSha: cmd.headSha });
    const pr = await loadPrState(env.workspace, reviewStreamOf(cmd));
    // The git facts of the carry-over are gathered here, at the edge; the fold only applies them.
    const carry = pr.exists ? await gatherCarryOver(env.workspace, pr, headSha, baseSha) : null;
    const observedAncestor = await observedAncestorOf(env.workspace, cmd.repoId, pr.observedHead, headSha);
    return { ...cmd, baseSha, headSha, level: ws.level, rules: await loadActiveRules(env.workspace), carry, observedAncestor };
  },
  decide(state, cmd, ctx) {
    if (!state.exists) {
      return [
        ...catchUpObservedHead(state, cmd),
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
    const carry = carryOverEvent(state, cmd.carry, cmd.headSha);
    if (carry) events.push(carry);
    events.push(...catchUpObservedHead(state, cmd));
    return events;
  },
  result(events) {
    if (events.length === 0) return { started: false, newRound: false };
    const requested = events.find(ofType('ReviewRequested'))?.data;
    if (requested) return { started: true, newRound: true, round: 1, level: requested.level, roster: requested.roster };
    const carried = events.find(ofType('FindingsCarriedOver'))?.data;
    const round = events.find(ofType('ReviewRoundStarted'))?.data.round;
    return carried
      ? { started: false, newRound: true, round, carryOver: { carried: carried.carried.length, outdated: carried.outdated.length, gone: carried.gone.length } }
      : { started: false, newRound: true, round };
  },
};

/**
 * A round starting at `head` whose ancestor is the head observed so far: `head` is observed too (see
 * head-ancestry.ts), so the review does not read stale for a head it covers. Only when the observed head
 * the edge checked is still the one this decision sees. Keeps the observation's source time, so a late
 * webhook delivery of an older head stays ignored.
 */
export function catchUpObservedHead(state: Frozen<PrState>, facts: { headSha: string; baseSha: string; observedAncestor: string | null }): PendingEvent[] {
  if (!facts.observedAncestor || facts.observedAncestor !== state.observedHead) return [];
  return [{ type: 'HeadObserved', data: { headSha: facts.headSha, baseSha: facts.baseSha, source: 'review', ...(state.observedHeadAt ? { observedAt: state.observedHeadAt } : {}) } }];
}

/**
 * The `FindingsCarriedOver` of a round starting at `toHead` (pure): the facts gathered at the edge when
 * they are about the round this decision is made on; else (the review moved meanwhile) none, so the
 * fold lists every live node for re-review. Nothing when the previous round has no node.
 */
export function carryOverEvent(state: Frozen<PrState>, facts: CarryOverData | null, toHead: string): PendingEvent | null {
  const prev = currentRound(state);
  if (!prev || prev.nodeIds.length === 0) return null;
  const fresh = facts && facts.fromRound === prev.round && facts.fromHead === prev.headSha && facts.toHead === toHead;
  const data: CarryOverData = fresh ? { ...facts, round: prev.round + 1 } : { round: prev.round + 1, fromRound: prev.round, fromHead: prev.headSha, toHead, carried: [], moved: [], outdated: [], gone: [] };
  return { type: 'FindingsCarriedOver', data };
}
