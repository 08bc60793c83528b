import { z } from 'zod';
import { reviewTarget } from '../../events/streams';
import { findDisagreements } from '../../review/disagreements';
import { duplicatesOf } from '../../review/duplicates';
import { countsAsConsensus } from '../../review/consensus';
import { currentRound, isLive, NodeRecord } from '../../review/pr-state';
import type { QueryDefinition } from './query';
import { affectsReview, reviewSources, ReviewView, reviewViewFold } from './review-fold';

const input = z.object({ ...reviewTarget, allRounds: z.boolean().optional() });
type Input = z.infer<typeof input>;

/**
 * The node list of a review (SPEC §5): each node with its status (open → consensus-ready → resolved |
 * dismissed), disagreements first, duplicates demoted with `duplicateOf`, and nodes whose fingerprint
 * was dismissed before flagged `previouslyDismissed` (a preference: they are shown, not hidden).
 */
export function nodeStatusView(s: ReviewView, opts: { allRounds?: boolean } = {}) {
  const pr = s.pr;
  const round = currentRound(pr);
  // A carried node is listed in every round it lives in: once is enough for the all-rounds list.
  const ids = opts.allRounds ? [...new Set(pr.rounds.flatMap((r) => r.nodeIds))] : (round?.nodeIds ?? []);
  const nodes = ids.map((id) => pr.nodes[id]);
  const duplicateOf = new Map<string, string>();
  for (const r of opts.allRounds ? pr.rounds : round ? [round] : []) {
    const live = r.nodeIds.map((id) => pr.nodes[id]).filter(isLive);
    for (const [k, v] of duplicatesOf(live)) duplicateOf.set(k, v);
  }
  const disagreements = findDisagreements(nodes.filter((n) => isLive(n) && (opts.allRounds ? n.round === round?.round : true)));
  const inDisagreement = new Set(disagreements.flatMap((d) => d.nodeIds));
  const row = (n: NodeRecord) => ({
    nodeId: n.nodeId,
    round: n.round,
    status: n.status,
    kind: n.node.kind,
    priority: n.node.priority,
    confidence: n.node.confidence,
    title: n.node.title,
    triage: n.node.triage,
    anchor: n.node.anchor ?? null,
    fingerprint: n.fingerprint,
    author: n.author,
    brief: n.node.reviewer.brief,
    confirmedBy: n.confirmations.map((c) => c.by),
    consensus: countsAsConsensus(n, n.confirmations),
    duplicateOf: duplicateOf.get(n.nodeId) ?? null,
    previouslyDismissed: s.previouslyDismissed[n.nodeId] ?? null,
    inDisagreement: inDisagreement.has(n.nodeId),
    closed: n.closed ?? null,
    filedAt: n.filedAt,
    /** SPEC §5 carry-over into the current round: carried (unchanged code) or outdated (changed: re-review it). */
    carry: carryOf(n.nodeId),
    joins: n.joins ?? null,
    outdatedConfirmedBy: n.outdatedConfirmations?.map((c) => c.by) ?? [],
  });
  function carryOf(id: string) {
    const c = round?.carry?.entries[id];
    if (!c || c.fate === 'gone' || pr.nodes[id].round !== round!.round) return null;
    return { fate: c.fate, fromRound: round!.carry!.fromRound, reason: c.reason ?? null };
  }
  const first = nodes.filter((n) => inDisagreement.has(n.nodeId));
  const rest = nodes.filter((n) => !inDisagreement.has(n.nodeId));
  const reReview = (round?.nodeIds ?? []).filter((id) => round!.carry?.entries[id]?.fate === 'outdated' && isLive(pr.nodes[id]));
  return { exists: pr.exists, round: round?.round ?? null, disagreements, reReview, nodes: [...first, ...rest].map(row) };
}

export const nodeStatusQuery: QueryDefinition<Input, ReviewView, ReturnType<typeof nodeStatusView>> = {
  name: 'nodeStatus',
  description: 'Review nodes with status, disagreements first, duplicates demoted, previously-dismissed flags.',
  input,
  access: { minRole: 'viewer' },
  affects: affectsReview,
  fold: () => reviewViewFold(),
  sources: reviewSources,
  view: (s, i) => nodeStatusView(s, { allRounds: i.allRounds }),
};
