import { z } from 'zod';
import { ofType } from '../events/catalogue/event-types';
import { computeReview, inputsDigestOf, REVIEW_ENGINE_VERSION, ReviewComputedData } from '../compute/review';
import { computeFold, ComputeState, loadComputeState, loadRepoState, openRegisteredRepo } from '../compute/streams';
import { DomainError } from '../domain-error';
import { shaSchema } from '../events/catalogue/review';
import type { CommandDefinition } from './kernel';
import type { PendingEvent } from '../events/kernel-types';
import { reviewStreamOf, reviewTarget } from '../events/streams';
import { INDEX_PROGRESS_SERVICE } from './index-code';
import { ProgressHub, type JobProgress } from '../job-progress/hub';
import { CarryOverData, gatherCarryOver } from '../review/carry-facts';
import { loadPrState } from '../review/pr-state';
import { OPERATOR_CONFIG_SERVICE } from '../operator-config';
import { observedAncestorOf } from './head-ancestry';
import { JOB_SLOTS } from '../compute/job-slots';

/** Share of the whole computation each indexing phase stands for in watchProgress (the rest is analysis). */
const PHASE_SPAN = { 'index-head': [0, 0.45], 'index-base': [0.45, 0.9] } as const;

const input = z.object({ ...reviewTarget, baseSha: shaSchema.optional(), headSha: shaSchema.optional() });
type Input = z.infer<typeof input>;
type Prepared = { unchanged: true; inputsDigest: string; baseSha: string; headSha: string } | { unchanged: false; data: ReviewComputedData; carry: CarryOverData | null; observedAncestor: string | null };

/**
 * `review_studio.compute` (SPEC §8): the deterministic review computation of the PR at its head, recorded
 * as `ReviewComputed` on the review stream. Identical inputs (same inputsDigest) record nothing; a new
 * head replaces the cohort set wholesale (the latest computation is the cohort set).
 */
export const computeReviewCommand: CommandDefinition<Input, ComputeState, Prepared> = {
  name: 'computeReview',
  description: 'Compute the review of a PR: cohorts from the code graph, blast radius, dependency diffs, API-contract and visual axes.',
  input,
  access: { minRole: 'member' },
  stream: reviewStreamOf,
  fold: computeFold,
  prepare(cmd, env) {
    // The whole preparation holds one of the server's job slots (compute/job-slots.ts): a job waiting for
    // one holds no repo open, no git process and no index. While it waits, watchProgress shows it
    // `queued` (the Review page's progress line says so).
    let queued: JobProgress | null = null;
    const job = () => (queued ??= ProgressHub.jobFor(env.services, env.workspace.id, { kind: 'computeReview', repoId: cmd.repoId, prNumber: cmd.prNumber }));
    const onWait = (ahead: number) => job().report({ phase: ahead > 0 ? `queued, ${ahead} ahead` : 'queued', done: 0, total: 0, fraction: 0 });
    return JOB_SLOTS.run<Prepared>(env.workspace.id, async () => {
      const repoState = await loadRepoState(env.workspace, cmd.repoId);
      const pr = await loadComputeState(env.workspace, reviewStreamOf(cmd));
      if (!pr.exists) throw new DomainError('review_not_found', `prNumber: no review has been requested for ${cmd.repoId}#${cmd.prNumber}`);
      const repo = await openRegisteredRepo(repoState);
      try {
        // Without explicit SHAs: the PR's newest head — one observed after the rounds (a webhook, observeHead)
        // when no round has reviewed it yet, with the base reported alongside it (issue 38: the round's
        // head was recomputed as "identical inputs" while a newer head waited).
        // Otherwise the current round's head (a compute at a new head starts a round too) and its base.
        const observedNewer = pr.observed && !pr.roundHeads.includes(pr.observed.headSha) ? pr.observed : null;
        const roundHead = pr.roundHeads[pr.roundHeads.length - 1] ?? pr.headSha!;
        const roundBase = pr.latest?.headSha === roundHead ? pr.latest.baseSha : pr.baseSha!;
        const useObserved = !cmd.headSha && observedNewer !== null;
        const baseSha = await repo.revParse(cmd.baseSha ?? (useObserved ? (observedNewer!.baseSha ?? roundBase) : roundBase));
        const headSha = await repo.revParse(cmd.headSha ?? (useObserved ? observedNewer!.headSha : roundHead));
        const operator = env.services.get(OPERATOR_CONFIG_SERVICE);
        const key = `${env.workspace.id}/${cmd.repoId}`;
        const render = operator ? { key, entry: operator.renderRepos[key], sandbox: operator.sandbox } : undefined;
        // The operator's checker settings (type-resolved edges off, or its caps) change what is computed.
        const checker = operator ? (operator.typeEdges === false ? { typeEdges: false } : { checkerLimits: operator.typeEdges }) : {};
        const digest = inputsDigestOf(REVIEW_ENGINE_VERSION, baseSha, headSha, repoState.config, render?.entry, checker);
        if (pr.latest?.inputsDigest === digest) {
          queued?.done();
          return { unchanged: true, inputsDigest: digest, baseSha, headSha };
        }
        const listener = env.services.get(INDEX_PROGRESS_SERVICE);
        // watchProgress: reports reach this workspace's subscribers only (a no-op outside the server).
        const progress = job();
        try {
          const { data } = await computeReview({
            repo,
            baseSha,
            headSha,
            workspaceDir: env.workspace.dir,
            repoConfig: repoState.config,
            render,
            ...checker,
            signal: env.signal,
            onProgress: (_phase, p) => {
              const commit = _phase === 'index-head' ? headSha : baseSha;
              listener?.({ ...p, repoId: cmd.repoId, commit });
              const [from, to] = PHASE_SPAN[_phase];
              progress.report({ phase: _phase, done: p.done, total: p.total, fraction: from + (to - from) * (p.total ? p.done / p.total : 1), commit });
            },
          });
          progress.done();
          // A compute at a head no round reviewed starts a round: gather what carries over to it (SPEC §5).
          const prState = await loadPrState(env.workspace, reviewStreamOf(cmd));
          const carry = prState.rounds.some((r) => r.headSha === data.headSha) ? null : await gatherCarryOver(env.workspace, prState, data.headSha, data.baseSha);
          const observedAncestor = await observedAncestorOf(env.workspace, cmd.repoId, pr.observed?.headSha ?? null, data.headSha);
          return { unchanged: false, data, carry, observedAncestor };
        } catch (err) {
          progress.failed(err);
          throw err;
        }
      } finally {
        repo.close();
      }
    }, env.signal, onWait).catch((err: unknown) => {
      // Refused or cancelled while queued, or failed before its progress began: the queued line ends too.
      queued?.failed(err);
      throw err;
    });
  },
  decide(state, prepared) {
    if (!state.exists) throw new DomainError('review_not_found', 'prNumber: no review has been requested for this PR');
    const digest = prepared.unchanged ? prepared.inputsDigest : prepared.data.inputsDigest;
    if (state.latest?.inputsDigest === digest) return [];
    if (prepared.unchanged) return [];
    const events: PendingEvent[] = [{ type: 'ReviewComputed', data: prepared.data }];
    const n = state.roundHeads.length;
    if (n > 0 && !state.roundHeads.includes(prepared.data.headSha)) {
      // Facts about another previous round than the one this decision sees are dropped: the fold then
      // lists every live node of the previous round for re-review.
      const c = prepared.carry;
      const fresh = c && c.fromHead === state.roundHeads[n - 1] && c.fromRound === n;
      events.push({ type: 'FindingsCarriedOver', data: fresh ? { ...c, round: n + 1 } : { round: n + 1, fromRound: n, fromHead: state.roundHeads[n - 1], toHead: prepared.data.headSha, carried: [], moved: [], outdated: [], gone: [] } });
    }
    // The review caught up with the observed head (an ancestor of this one): this head is observed too.
    const observed = state.observed;
    if (prepared.observedAncestor && observed && prepared.observedAncestor === observed.headSha) {
      events.push({ type: 'HeadObserved', data: { headSha: prepared.data.headSha, baseSha: prepared.data.baseSha, source: 'review', ...(observed.at ? { observedAt: observed.at } : {}) } });
    }
    return events;
  },
  result(events, prepared) {
    const d = events.find(ofType('ReviewComputed'))?.data;
    if (!d) {
      // Says which head it looked at: a caller who gave no SHAs learns whether a newer head was taken.
      const at = prepared?.unchanged ? { headSha: prepared.headSha, baseSha: prepared.baseSha } : {};
      return { recorded: false, ...at, reason: `identical inputs: the latest computation${at.headSha ? ` of ${at.headSha.slice(0, 12)}` : ''} stands` };
    }
    const carried = events.find(ofType('FindingsCarriedOver'))?.data;
    return { recorded: true, headSha: d.headSha, inputsDigest: d.inputsDigest, cohorts: d.cohorts.map((c) => ({ key: c.key, rank: c.rank, title: c.title, grouping: c.grouping, files: c.files })), ...(carried ? { newRound: carried.round, carryOver: { carried: carried.carried.length, outdated: carried.outdated.length, gone: carried.gone.length } } : {}) };
  },
};
