import type { TokenAxes } from '../events/catalogue/review';
import type { Rules } from '../rules/rules';
import { AxisReport, axesOf } from './axes';
import { countsAsConsensus } from './consensus';
import { duplicatesOf } from './duplicates';
import { currentRound, isLive, NodeCore, NodeRecord, PrState } from './pr-state';
import { computeVerdict, VerdictNode, VerdictResult } from './verdict';
import type { Frozen } from '../events/kernel-types';

export interface PrVerdict extends VerdictResult {
  round: number | null;
  headSha: string | null;
  axes: AxisReport[];
  liveNodes: number;
  duplicates: number;
}

/** Live nodes of the current round, in filing order. */
export function liveNodesOfCurrentRound<B extends NodeCore>(s: PrState<B>): NodeRecord<B>[] {
  const round = currentRound(s);
  if (!round) return [];
  const out: NodeRecord<B>[] = [];
  for (const id of round.nodeIds) {
    const n = s.nodes[id];
    if (isLive(n)) out.push(n);
  }
  return out;
}

/** The verdict of one review under `rules` (SPEC §7); `tokenAxes` lets the finalizer score what it is about to record. */
export function verdictOfPr(s: Frozen<PrState<NodeCore>>, rules: Rules, tokenAxes?: TokenAxes): PrVerdict {
  const live = liveNodesOfCurrentRound(s);
  const dup = duplicatesOf(live);
  // From scratch on purpose: the finalizer and replay score under arbitrary rules; the live projection
  // uses the incremental index (verdict-index.ts), and a property test keeps the two identical.
  const nodes: VerdictNode[] = live.map((n) => ({ nodeId: n.nodeId, priority: n.node.priority, confidence: n.node.confidence, duplicateOf: dup.get(n.nodeId) }));
  const axes = axesOf(s, rules, tokenAxes);
  const round = currentRound(s);
  return { ...computeVerdict(nodes, axes, rules), round: round?.round ?? null, headSha: round?.headSha ?? null, axes, liveNodes: live.length, duplicates: dup.size };
}

/**
 * Nodes of the current round that count as peer-confirmed, re-derived from the raw confirmations with
 * `countsAsConsensus` (not from the folded status), so the finalizer is an independent check (SPEC §5).
 */
export function consensusNodeIds(s: Frozen<PrState<NodeCore>>): string[] {
  return liveNodesOfCurrentRound(s)
    .filter((n) => countsAsConsensus(n, n.confirmations))
    .map((n) => n.nodeId);
}
