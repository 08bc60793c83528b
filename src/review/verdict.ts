import type { AxisStatus } from '../axes/types';
import type { Priority, Verdict } from '../events/catalogue/review';
import type { Rules } from '../rules/rules';
import type { AxisReport } from './axes';

export interface VerdictNode {
  nodeId: string;
  priority: Priority;
  confidence: number;
  /** Set on demoted duplicates: the defect is counted once, through its canonical node. */
  duplicateOf?: string;
}

export interface VerdictResult {
  verdict: Verdict;
  /** The verdict from findings alone, before the axes folded in. */
  findingsVerdict: Verdict;
  confidence: number;
  rulesVersion: string;
  /** Why, most decisive first: the deciding nodes and every axis that raised the verdict. */
  reasons: string[];
  /** Canonical nodes of the defects that decided the findings verdict. */
  decidingNodeIds: string[];
  /** How many confidences entered the aggregate (deciding nodes plus their agreeing duplicates). */
  contributing: number;
}

const RANK: Record<Verdict, number> = { Ship: 0, Hold: 1, Block: 2 };
const stricter = (a: Verdict, b: Verdict): Verdict => (RANK[b] > RANK[a] ? b : a);

/**
 * The verdict of SPEC §7 under a rules document. Rules v1 reads:
 *
 *  1. Findings (live nodes: open or consensus-ready): each node asks for `rules.verdict.priorities[priority]`
 *     — `atOrAboveThreshold` when its confidence ≥ `blockThreshold` (0.7), else `belowThreshold`. v1:
 *     P0 ≥ 0.7 → Block, other P0 → Hold, P1 → Hold, P2/P3 → Ship. Duplicates count once: a defect (a
 *     canonical node and its duplicates) asks for the strictest of its reports. The findings verdict is
 *     the strictest ask, Ship when there is none.
 *  2. Axes fold in last and only make it stricter: a gated axis in `fail` forces `onGatedStatus.fail`
 *     (Block), in `partial`/`unavailable` at least `onGatedStatus.partial|unavailable` (Hold). Nothing
 *     ever lowers the verdict; not_applicable, pass and warn force nothing.
 *  3. Confidence: contributing = the confidences of every report of the defects that asked for the
 *     findings verdict (for Ship that is every live node), duplicates included, since agreement among
 *     duplicates should raise it. `base = mean × (1 − population stddev)`; with no contributing node
 *     `base = withoutContributingNodes` (1.0). Then `− penaltyPerIncompleteGatedAxis` (0.25) for every
 *     gated axis that is partial or unavailable, floored at 0, rounded to `decimals` (3).
 */
export function computeVerdict(nodes: readonly VerdictNode[], axes: readonly AxisReport[], rules: Rules): VerdictResult {
  const { blockThreshold, priorities } = rules.verdict;
  // A defect is counted once: its ask is the strictest of its reports (canonical + duplicates), so a
  // confident duplicate is not outvoted by a hesitant canonical filed first.
  const asks = new Map<string, Verdict>();
  let findingsVerdict: Verdict = 'Ship';
  for (const n of nodes) {
    const rule = priorities[n.priority];
    const ask = n.confidence >= blockThreshold ? rule.atOrAboveThreshold : rule.belowThreshold;
    const defect = n.duplicateOf ?? n.nodeId;
    const prev = asks.get(defect);
    if (prev === undefined || RANK[ask] > RANK[prev]) asks.set(defect, ask);
    if (RANK[ask] > RANK[findingsVerdict]) findingsVerdict = ask;
  }

  const decidingNodeIds: string[] = [];
  let sum = 0;
  let sumSq = 0;
  let count = 0;
  for (const n of nodes) {
    if (asks.get(n.duplicateOf ?? n.nodeId) !== findingsVerdict) continue;
    if (n.duplicateOf === undefined) decidingNodeIds.push(n.nodeId);
    sum += n.confidence;
    sumSq += n.confidence * n.confidence;
    count++;
  }

  const reasons: string[] = [];
  if (decidingNodeIds.length > 0 && findingsVerdict !== 'Ship') {
    const shown = decidingNodeIds.slice(0, 5).join(', ');
    const more = decidingNodeIds.length > 5 ? ` and ${decidingNodeIds.length - 5} more` : '';
    reasons.push(`${findingsVerdict} from findings: ${shown}${more} (${describeAsk(findingsVerdict, rules)})`);
  } else {
    reasons.push(nodes.length === 0 ? 'Ship from findings: no live findings' : `Ship from findings: no live finding asks for more (${nodes.length} live)`);
  }

  let verdict = findingsVerdict;
  let incompleteGated = 0;
  for (const a of axes) {
    if (!a.gated) continue;
    const forced = forcedBy(a.status, rules);
    if (a.status === 'partial' || a.status === 'unavailable') incompleteGated++;
    if (!forced) continue;
    if (RANK[forced] > RANK[verdict]) reasons.push(`${forced} forced by gated axis ${a.axis}: ${a.status}${a.reason ? ` (${a.reason})` : ''}`);
    else if (RANK[forced] > RANK[findingsVerdict] || forced === verdict) reasons.push(`also ${a.axis}: ${a.status} (at least ${forced})`);
    verdict = stricter(verdict, forced);
  }

  let base: number;
  if (count === 0) base = rules.confidence.withoutContributingNodes;
  else {
    const mean = sum / count;
    const variance = Math.max(0, sumSq / count - mean * mean);
    base = mean * (1 - Math.sqrt(variance));
  }
  const penalized = Math.max(0, base - incompleteGated * rules.confidence.penaltyPerIncompleteGatedAxis);
  const scale = 10 ** rules.confidence.decimals;
  const confidence = Math.min(1, Math.round(penalized * scale) / scale);

  return { verdict, findingsVerdict, confidence, rulesVersion: rules.rulesVersion, reasons, decidingNodeIds, contributing: count };
}

function forcedBy(status: AxisStatus, rules: Rules): Verdict | undefined {
  if (status === 'fail' || status === 'partial' || status === 'unavailable') return rules.axes.onGatedStatus[status];
  return undefined;
}

function describeAsk(v: Verdict, rules: Rules): string {
  const parts: string[] = [];
  for (const p of ['P0', 'P1', 'P2', 'P3'] as const) {
    const r = rules.verdict.priorities[p];
    if (r.atOrAboveThreshold === v && r.belowThreshold === v) parts.push(`${p} → ${v}`);
    else if (r.atOrAboveThreshold === v) parts.push(`${p} at confidence ≥ ${rules.verdict.blockThreshold} → ${v}`);
    else if (r.belowThreshold === v) parts.push(`${p} below ${rules.verdict.blockThreshold} → ${v}`);
  }
  return `rules ${rules.rulesVersion}: ${parts.join('; ')}`;
}
