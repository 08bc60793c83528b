import { PRIORITIES } from '../events/catalogue/review';
import type { NodeRecord } from './pr-state';

export interface Disagreement {
  nodeIds: [string, string];
  path: string;
  why: string;
}

const rank = (p: string): number => PRIORITIES.indexOf(p as (typeof PRIORITIES)[number]);

/**
 * SPEC §5 disagreements: two live nodes from different reviewers whose anchors overlap (same path, line
 * ranges intersect) and whose priorities differ by two levels or more, or where one says `bug` and the
 * other `suggestion`. Grouped by path first so a large review does not compare every pair.
 */
export function findDisagreements(live: readonly NodeRecord[]): Disagreement[] {
  const byPath = new Map<string, NodeRecord[]>();
  for (const n of live) {
    if (!n.node.anchor) continue;
    const list = byPath.get(n.node.anchor.path);
    if (list) list.push(n);
    else byPath.set(n.node.anchor.path, [n]);
  }
  const out: Disagreement[] = [];
  for (const [path, nodes] of byPath) {
    for (let i = 0; i < nodes.length; i++) {
      for (let j = i + 1; j < nodes.length; j++) {
        const a = nodes[i];
        const b = nodes[j];
        if (a.author === b.author) continue;
        const ra = a.node.anchor!;
        const rb = b.node.anchor!;
        if (ra.startLine > rb.endLine || rb.startLine > ra.endLine) continue;
        const gap = Math.abs(rank(a.node.priority) - rank(b.node.priority));
        const kinds = new Set([a.node.kind, b.node.kind]);
        if (gap >= 2) out.push({ nodeIds: [a.nodeId, b.nodeId], path, why: `priorities ${a.node.priority} vs ${b.node.priority} on overlapping lines` });
        else if (kinds.has('bug') && kinds.has('suggestion')) out.push({ nodeIds: [a.nodeId, b.nodeId], path, why: 'one reviewer calls it a bug, the other a suggestion' });
      }
    }
  }
  return out;
}
