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
  /** Canonical nodes of the defects that decided the findings verdict: the first DECIDING_LISTED in filing order. */
  decidingNodeIds: string[];
  /** How many defects decided the findings verdict. */
  decidingCount: number;
  /** How many confidences entered the aggregate (every report of the deciding defects, duplicates included). */
  contributing: number;
}

/** What the findings contribute, however it was computed (from scratch here, incrementally in verdict-index.ts). */
export interface FindingsSummary {
  findingsVerdict: Verdict;
  decidingNodeIds: string[];
  decidingCount: number;
  /** Sums of the contributing confidences in CONFIDENCE_SCALE units: integers, so any fold order gives the same bits. */
  sum: number;
  sumSq: number;
  count: number;
  liveNodes: number;
  /** The rule clauses that asked for the findings verdict (`P1`, `P0:at`, `P0:below`), in priority order. */
  clauses: string[];
}

export const DECIDING_LISTED = 20;
/** Confidences enter the aggregate at 4-decimal precision as integers: sums stay exact (no float drift). */
export const CONFIDENCE_SCALE = 10_000;
export const VERDICT_LEVELS: readonly Verdict[] = ['Ship', 'Hold', 'Block'];
const RANK: Record<Verdict, number> = { Ship: 0, Hold: 1, Block: 2 };
const stricter = (a: Verdict, b: Verdict): Verdict => (RANK[b] > RANK[a] ? b : a);

export const quantized = (confidence: number): number => Math.round(confidence * CONFIDENCE_SCALE);

/**
 * Which clause of the priority→verdict table a report falls under: `P1` when the priority asks the same
 * either side of the threshold, else `P0:at` (confidence ≥ threshold) or `P0:below`.
 */
export function clauseOf(priority: Priority, confidence: number, rules: Rules): string {
  const rule = rules.verdict.priorities[priority];
  if (rule.atOrAboveThreshold === rule.belowThreshold) return priority;
  return `${priority}:${confidence >= rules.verdict.blockThreshold ? 'at' : 'below'}`;
}

/** Every clause of the rules, in priority order: the order reasons list them in. */
export const CLAUSE_ORDER: readonly string[] = ['P0', 'P0:at', 'P0:below', 'P1', 'P1:at', 'P1:below', 'P2', 'P2:at', 'P2:below', 'P3', 'P3:at', 'P3:below'];
const PRIORITY_INDEX: Record<string, number> = { P0: 0, P1: 1, P2: 2, P3: 3 };

/** `clauseOf` as its index in CLAUSE_ORDER: the incremental index counts clauses without building strings. */
export function clauseIndex(priority: Priority, confidence: number, rules: Rules): number {
  const rule = rules.verdict.priorities[priority];
  const base = PRIORITY_INDEX[priority] * 3;
  if (rule.atOrAboveThreshold === rule.belowThreshold) return base;
  return base + (confidence >= rules.verdict.blockThreshold ? 1 : 2);
}

/** The level (0 Ship, 1 Hold, 2 Block) one report asks for under the rules' priority→verdict table. */
export function askLevel(priority: Priority, confidence: number, rules: Rules): number {
  const rule = rules.verdict.priorities[priority];
  return RANK[confidence >= rules.verdict.blockThreshold ? rule.atOrAboveThreshold : rule.belowThreshold];
}

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
 *     duplicates should raise it; each taken at 4-decimal precision. `base = mean × (1 − population
 *     stddev)`; with no contributing node `base = withoutContributingNodes` (1.0). Then
 *     `− penaltyPerIncompleteGatedAxis` (0.25) for every gated axis that is partial or unavailable,
 *     floored at 0, rounded to `decimals` (3).
 *
 * `nodes` are the live nodes in filing order.
 */
export function computeVerdict(nodes: readonly VerdictNode[], axes: readonly AxisReport[], rules: Rules): VerdictResult {
  return finishVerdict(summarizeFindings(nodes, rules), axes, rules);
}

/** Step 1 and the contributing sums of step 3, from scratch. */
export function summarizeFindings(nodes: readonly VerdictNode[], rules: Rules): FindingsSummary {
  // A defect is counted once: its ask is the strictest of its reports, so a confident duplicate is not
  // outvoted by a hesitant canonical filed first.
  const asks = new Map<string, number>();
  let level = 0;
  for (const n of nodes) {
    const ask = askLevel(n.priority, n.confidence, rules);
    const defect = n.duplicateOf ?? n.nodeId;
    const prev = asks.get(defect);
    if (prev === undefined || ask > prev) asks.set(defect, ask);
    if (ask > level) level = ask;
  }
  const decidingNodeIds: string[] = [];
  const clauses = new Set<string>();
  let decidingCount = 0;
  let sum = 0;
  let sumSq = 0;
  let count = 0;
  for (const n of nodes) {
    // A report asking for the verdict level is always in a deciding defect (its defect's ask is that level).
    if (askLevel(n.priority, n.confidence, rules) === level) clauses.add(clauseOf(n.priority, n.confidence, rules));
    if (asks.get(n.duplicateOf ?? n.nodeId) !== level) continue;
    if (n.duplicateOf === undefined) {
      decidingCount++;
      if (decidingNodeIds.length < DECIDING_LISTED) decidingNodeIds.push(n.nodeId);
    }
    const q = quantized(n.confidence);
    sum += q;
    sumSq += q * q;
    count++;
  }
  return { findingsVerdict: VERDICT_LEVELS[level], decidingNodeIds, decidingCount, sum, sumSq, count, liveNodes: nodes.length, clauses: CLAUSE_ORDER.filter((c) => clauses.has(c)) };
}

/** Steps 2 and 3: fold the axes in and aggregate the confidence. */
export function finishVerdict(f: FindingsSummary, axes: readonly AxisReport[], rules: Rules): VerdictResult {
  const { findingsVerdict, decidingNodeIds, decidingCount, count } = f;
  const reasons: string[] = [];
  if (decidingCount > 0 && findingsVerdict !== 'Ship') {
    const shown = decidingNodeIds.slice(0, 5).join(', ');
    const more = decidingCount > 5 ? ` and ${decidingCount - 5} more` : '';
    reasons.push(`${findingsVerdict} from findings: ${shown}${more} (${describeClauses(f.clauses, findingsVerdict, rules)})`);
  } else {
    reasons.push(f.liveNodes === 0 ? 'Ship from findings: no live findings' : `Ship from findings: no live finding asks for more (${f.liveNodes} live)`);
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
    const mean = f.sum / count;
    const variance = Math.max(0, f.sumSq / count - mean * mean);
    base = (mean / CONFIDENCE_SCALE) * (1 - Math.sqrt(variance) / CONFIDENCE_SCALE);
  }
  const penalized = Math.max(0, base - incompleteGated * rules.confidence.penaltyPerIncompleteGatedAxis);
  const scale = 10 ** rules.confidence.decimals;
  const confidence = Math.min(1, Math.round(penalized * scale) / scale);

  return { verdict, findingsVerdict, confidence, rulesVersion: rules.rulesVersion, reasons, decidingNodeIds, decidingCount, contributing: count };
}

function forcedBy(status: AxisStatus, rules: Rules): Verdict | undefined {
  if (status === 'fail' || status === 'partial' || status === 'unavailable') return rules.axes.onGatedStatus[status];
  return undefined;
}

/** Only the clauses that decided: "P1 → Hold", not every clause of the table that maps to Hold. */
function describeClauses(clauses: readonly string[], v: Verdict, rules: Rules): string {
  const t = rules.verdict.blockThreshold;
  const parts = clauses.map((c) => {
    const [p, side] = c.split(':');
    return side === undefined ? `${p} → ${v}` : side === 'at' ? `${p} at confidence ≥ ${t} → ${v}` : `${p} below ${t} → ${v}`;
  });
  return `rules ${rules.rulesVersion}: ${parts.join('; ')}`;
}
