import { PRIORITIES } from '../events/catalogue/review';
import type { NodeCore, NodeRecord } from './pr-state';

const priorityRank = (p: string): number => PRIORITIES.indexOf(p as (typeof PRIORITIES)[number]);

/**
 * SPEC §5 duplicates: live nodes of one round with the same fingerprint are one defect. The canonical
 * node is the highest-priority one, the earliest filed among equals; the rest map to it (`duplicateOf`).
 * `nodes` must be live nodes of a single round, in filing order. O(n).
 */
export function duplicatesOf(nodes: readonly NodeRecord<NodeCore>[]): Map<string, string> {
  const canonical = new Map<string, NodeRecord<NodeCore>>();
  for (const n of nodes) {
    const best = canonical.get(n.fingerprint);
    if (!best || priorityRank(n.node.priority) < priorityRank(best.node.priority)) canonical.set(n.fingerprint, n);
  }
  const duplicateOf = new Map<string, string>();
  for (const n of nodes) {
    const c = canonical.get(n.fingerprint)!;
    if (c !== n) duplicateOf.set(n.nodeId, c.nodeId);
  }
  return duplicateOf;
}
