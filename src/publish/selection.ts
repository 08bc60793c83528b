import type { Verdict } from '../events/catalogue/review';
import { duplicatesOf } from '../review/duplicates';
import { liveNodesOfCurrentRound } from '../review/pr-verdict';
import type { NodeRecord, PrState } from '../review/pr-state';
import type { ReviewEvent } from './github-client';
import type { PublishedFinding } from './render';

export type PublishSelection = 'all_open' | 'consensus';

/**
 * The publisher's own consensus check — the third independent place of SPEC §5. It deliberately does
 * not reuse the fold's node status, the finalizer's `consensusNodeIds` or the shared helper: it reads
 * the raw confirmations and counts one only when it comes from a principal other than the node's
 * author. A self-confirmation forged straight into the store therefore never makes a node "consensus"
 * here, even if a bug elsewhere let it through.
 */
export function peerConfirmed(node: NodeRecord): boolean {
  const author = node.node.reviewer.principal;
  if (node.author !== author) return false; // a record whose author fields disagree is not trusted
  return node.confirmations.some((c) => typeof c.by === 'string' && c.by !== author && c.by !== node.author);
}

export interface Selected {
  findings: PublishedFinding[];
  /** Live nodes left out (consensus selection) or folded into another (duplicates). */
  excluded: Array<{ nodeId: string; why: 'not_peer_confirmed' | 'duplicate' }>;
}

/**
 * The findings one publication carries (SPEC §14): live nodes of the current round (resolved and
 * dismissed are skipped); `consensus` keeps only defects a peer confirmed. Duplicates (same
 * fingerprint) are one defect: the canonical node is published once, crediting the others.
 */
export function selectFindings(state: PrState, selection: PublishSelection): Selected {
  const live = liveNodesOfCurrentRound(state);
  const duplicateOf = duplicatesOf(live);
  const groups = new Map<string, NodeRecord[]>();
  for (const n of live) {
    const canonical = duplicateOf.get(n.nodeId) ?? n.nodeId;
    const g = groups.get(canonical);
    if (g) g.push(n);
    else groups.set(canonical, [n]);
  }
  const findings: PublishedFinding[] = [];
  const excluded: Selected['excluded'] = [];
  for (const [canonicalId, members] of groups) {
    const canonical = state.nodes[canonicalId];
    const others = members.filter((m) => m.nodeId !== canonicalId);
    if (selection === 'consensus' && !members.some(peerConfirmed)) {
      for (const m of members) excluded.push({ nodeId: m.nodeId, why: 'not_peer_confirmed' });
      continue;
    }
    for (const o of others) excluded.push({ nodeId: o.nodeId, why: 'duplicate' });
    const credited = others.filter((o) => o.node.reviewer.principal !== canonical.node.reviewer.principal);
    findings.push({
      nodeId: canonicalId,
      fingerprint: canonical.fingerprint,
      node: canonical.node,
      alsoFoundBy: credited.map((o) => ({ nodeId: o.nodeId, principal: o.node.reviewer.principal, brief: o.node.reviewer.brief })),
      duplicateNodeIds: others.map((o) => o.nodeId),
    });
  }
  return { findings, excluded };
}

/** SPEC §14: Block → REQUEST_CHANGES, Hold → COMMENT, Ship → APPROVE only when asked (`approve_on_ship`). */
export function reviewEventFor(verdict: Verdict, approveOnShip: boolean): ReviewEvent {
  if (verdict === 'Block') return 'REQUEST_CHANGES';
  if (verdict === 'Ship' && approveOnShip) return 'APPROVE';
  return 'COMMENT';
}
