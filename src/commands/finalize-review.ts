import { z } from 'zod';
import { ofType } from '../events/catalogue/event-types';
import { tokenAxesSchema } from '../events/catalogue/review';
import { assertTransition } from '../review/ladder';
import { currentRound, PrState, NodeCore, prDecisionFold } from '../review/pr-state';
import { consensusNodeIds, verdictOfPr } from '../review/pr-verdict';
import type { Rules } from '../rules/rules';
import type { CommandDefinition } from './kernel';
import type { PendingEvent } from '../events/kernel-types';
import { loadActiveRules } from '../rules/rules';
import { requireReview } from './review-target';
import { reviewStreamOf, reviewTarget } from '../events/streams';
import { incompleteCohortsOf } from '../review-progress/load';
import { missingBriefs, tokenAxesUnderProgress } from '../review-progress/progress';

const input = z.object({ ...reviewTarget, tokenAxes: tokenAxesSchema, walkthrough: z.string().max(200_000) });
type Input = z.infer<typeof input>;

/**
 * The lead reviewer finalizes the round: token axes + walkthrough, the verdict and confidence under the
 * rules in force, and the ladder moves to awaiting approval (SPEC §10). Second no-self-confirm check:
 * the consensus it records is re-derived from raw confirmations by non-authors only.
 */
type Progress = { adjustedAxes: Array<'correctness' | 'security' | 'testGap'>; cohorts: Array<{ cohortKey: string; title: string; missing: string }>; incomplete: number };

export const finalizeReview: CommandDefinition<Input, PrState<NodeCore>, Input & { rules: Rules; progress?: Progress }> = {
  name: 'finalizeReview',
  description: 'Finalize the current round: record the token axes, walkthrough, verdict and confidence; the review awaits approval.',
  input,
  access: { minRole: 'member' },
  stream: reviewStreamOf,
  fold: prDecisionFold,
  async prepare(cmd, env) {
    // Cohort progress (src/review-progress): any cohort the roster did not review completely turns pass/warn
    // token axes into `partial`, naming the cohorts — a partial review is never recorded as clean.
    const incomplete = await incompleteCohortsOf(env.workspace, reviewStreamOf(cmd));
    const tokenAxes = tokenAxesUnderProgress(cmd.tokenAxes, incomplete);
    const adjustedAxes = (['correctness', 'security', 'testGap'] as const).filter((a) => tokenAxes[a].status !== cmd.tokenAxes[a].status);
    const progress = adjustedAxes.length ? { adjustedAxes, cohorts: incomplete.slice(0, 200).map((p) => ({ cohortKey: p.cohortKey, title: p.title.slice(0, 500), missing: missingBriefs(p) })), incomplete: incomplete.length } : undefined;
    return { ...cmd, tokenAxes, rules: await loadActiveRules(env.workspace), progress };
  },
  decide(state, cmd, ctx) {
    requireReview(state, cmd);
    // Re-finalizing while awaiting approval refreshes the record; from anywhere else it must be a ladder step.
    if (state.status !== 'awaiting_approval') assertTransition(state.status, 'awaiting_approval', 'finalizeReview');
    const round = currentRound(state)!;
    const v = verdictOfPr(state, cmd.rules, cmd.tokenAxes);
    const events: PendingEvent[] = [
      {
        type: 'ReviewFinalized',
        data: {
          round: round.round,
          headSha: round.headSha,
          tokenAxes: cmd.tokenAxes,
          walkthrough: cmd.walkthrough,
          verdict: v.verdict,
          confidence: v.confidence,
          rulesVersion: cmd.rules.rulesVersion,
          reasons: v.reasons.slice(0, 200).map((r) => r.slice(0, 2000)),
          consensusNodeIds: consensusNodeIds(state),
          ...(cmd.progress ? { progress: cmd.progress } : {}),
          by: ctx.principal,
          role: ctx.role,
        },
      },
    ];
    if (state.status !== 'awaiting_approval') events.push({ type: 'ReviewStatusChanged', data: { from: state.status, to: 'awaiting_approval', reason: 'review finalized' } });
    return events;
  },
  result(events) {
    const d = events.find(ofType('ReviewFinalized'))?.data;
    if (!d) return null;
    const out = { verdict: d.verdict, confidence: d.confidence, reasons: d.reasons, consensusNodeIds: d.consensusNodeIds, round: d.round };
    return d.progress ? { ...out, note: progressNote(d.progress) } : out;
  },
};

/** Said once, in the answer: which submitted token axes became partial and which cohorts (and briefs) were left. */
function progressNote(p: Progress): string {
  const shown = p.cohorts.slice(0, 5).map((c) => `"${c.title.slice(0, 60)}" [${c.cohortKey}] (${c.missing})`);
  const more = p.incomplete > shown.length ? `; and ${p.incomplete - shown.length} more` : '';
  return `${p.adjustedAxes.join(', ')} submitted as pass/warn recorded as partial: ${p.incomplete} cohort(s) not reviewed completely by the roster — ${shown.join('; ')}${more}`;
}
