import { contractGate } from '../../axes/api-contract/gate';
import type { ContractDecision } from '../../axes/types';
import { currentRound } from '../../review/pr-state';
import type { QueryDefinition } from './query';
import { affectsReview, reviewQueryInput, ReviewQueryInput, reviewSources, ReviewView, reviewViewFold } from './review-fold';

/**
 * SPEC §11 for the page: the contract changes computed for the reviewed head (or, before that head is
 * computed, the latest computation), each with its decision, and the gate they produce under the decisions
 * recorded so far — the same `contractGate` the verdict folds in, so the two cannot disagree.
 */
export function apiContractView(s: ReviewView) {
  const pr = s.pr;
  const computed = computationFor(s);
  if (!computed) return { computed: false as const, headSha: null, status: null, reason: 'the review has not been computed yet', specs: [], changes: [], undecidedBreaking: [], rejected: [] };
  const decisions = new Map<string, ContractDecision>(Object.entries(pr.contractDecisions).map(([id, d]) => [id, d.decision]));
  const gate = contractGate(computed.c.apiContract, decisions);
  const severityRank = { breaking: 0, warning: 1, 'non-breaking': 2, info: 3 } as const;
  const changes = [...computed.c.apiContract.changes]
    .sort((a, b) => severityRank[a.severity] - severityRank[b.severity] || (a.changeId < b.changeId ? -1 : 1))
    .map((ch) => {
      const d = pr.contractDecisions[ch.changeId];
      return { ...ch, decision: d ? { decision: d.decision, by: d.by, position: d.at } : null };
    });
  return {
    computed: true as const,
    headSha: computed.headSha,
    status: gate.status,
    reason: gate.reason ?? null,
    specs: computed.c.apiContract.specs,
    changes,
    undecidedBreaking: gate.undecidedBreaking,
    rejected: gate.rejected,
  };
}

/** The computation of the current round's head, else the latest one recorded (by position). */
export function computationFor(s: ReviewView) {
  const pr = s.pr;
  const head = currentRound(pr)?.headSha;
  if (head && pr.computes[head]) return { headSha: head, c: pr.computes[head] };
  let latest: { headSha: string; c: (typeof pr.computes)[string] } | null = null;
  for (const [sha, c] of Object.entries(pr.computes)) if (!latest || c.at > latest.c.at) latest = { headSha: sha, c };
  return latest;
}

export const apiContractQuery: QueryDefinition<ReviewQueryInput, ReviewView, ReturnType<typeof apiContractView>> = {
  name: 'apiContract',
  description: 'API-contract changes of the reviewed head with severity, rule, message and decision, and the contract gate they produce.',
  input: reviewQueryInput,
  access: { minRole: 'viewer' },
  affects: affectsReview,
  fold: () => reviewViewFold(),
  sources: reviewSources,
  view: (s) => apiContractView(s),
};
