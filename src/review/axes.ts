import { contractGate } from '../axes/api-contract/gate';
import type { ApiContractComputation, AxisName, AxisStatus, ContractDecision } from '../axes/types';
import { visualGate } from '../axes/visual/gate';
import type { TokenAxes } from '../events/catalogue/review';
import type { Rules } from '../rules/rules';
import { currentFinalization, currentRound, NodeCore, PrState } from './pr-state';

export interface AxisReport {
  axis: AxisName;
  status: AxisStatus;
  reason?: string;
  gated: boolean;
  /** Where the status came from: the compute (through its gate), a recorded result, the finalizer, or nothing yet. */
  source: 'compute' | 'recorded' | 'finalize' | 'none';
  /** Gate details for clients (changeIds / snapshotIds that hold the gate). */
  pending?: string[];
}

export const AXIS_ORDER: readonly AxisName[] = ['correctness', 'security', 'testGap', 'visual', 'apiContract', 'performance'];

/** How strongly a status holds a gate; on a tie between two sources the computed one is kept. */
const holdRank: Record<AxisStatus, number> = { not_applicable: 0, pass: 0, warn: 1, partial: 2, unavailable: 2, fail: 3 };

/**
 * The six axes of the current round (SPEC §6). Deterministic axes come from the compute of the round's
 * head folded through their gates with the decisions and approvals recorded so far, so an approval
 * changes the axis (and the verdict) at once, without a recompute. A recorded result may only make a
 * computed axis stricter: nobody can record a green gate over a computed red one.
 */
export function axesOf(s: PrState<NodeCore>, rules: Rules, tokenAxes?: TokenAxes): AxisReport[] {
  const round = currentRound(s);
  const head = round?.headSha;
  const compute = head ? s.computes[head] : undefined;
  const gated = new Set<string>(rules.axes.gated);
  const out: AxisReport[] = [];
  const tokens = tokenAxes ?? currentFinalization(s)?.tokenAxes;
  for (const axis of AXIS_ORDER) {
    let report: AxisReport;
    if (axis === 'correctness' || axis === 'security' || axis === 'testGap') {
      const t = tokens?.[axis];
      report = t ? { axis, status: t.status, reason: t.reason, gated: gated.has(axis), source: 'finalize' } : { axis, status: 'unavailable', reason: 'recorded by finalizeReview; not finalized for this round yet', gated: gated.has(axis), source: 'none' };
    } else if (axis === 'apiContract' && compute) {
      const g = contractGate(withSeverityOverrides(compute.apiContract, rules), contractDecisionMap(s));
      report = { axis, status: g.status, reason: g.reason, gated: gated.has(axis), source: 'compute', pending: [...g.rejected, ...g.undecidedBreaking] };
    } else if (axis === 'visual' && compute) {
      const g = visualGate(compute.visual, new Set(Object.keys(s.visualApprovals)));
      report = { axis, status: g.status, reason: g.reason, gated: gated.has(axis), source: 'compute', pending: g.pending };
    } else {
      report = { axis, status: 'unavailable', reason: head ? `no ${axis} result for head ${head} yet` : 'no review requested', gated: gated.has(axis), source: 'none' };
    }
    const recorded = head ? s.recordedAxes[`${head}/${axis}`] : undefined;
    if (recorded && (report.source === 'none' || holdRank[recorded.status as AxisStatus] > holdRank[report.status])) {
      report = { axis, status: recorded.status as AxisStatus, reason: recorded.reason, gated: report.gated, source: 'recorded' };
    }
    out.push(report);
  }
  return out;
}

function contractDecisionMap(s: PrState<NodeCore>): Map<string, ContractDecision> {
  const m = new Map<string, ContractDecision>();
  for (const id in s.contractDecisions) m.set(id, s.contractDecisions[id].decision);
  return m;
}

/** Rules may re-grade a contract rule's severity (SPEC §7.4 "contract severity overrides"). */
export function withSeverityOverrides(c: ApiContractComputation, rules: Rules): ApiContractComputation {
  const overrides = rules.contractSeverityOverrides;
  if (Object.keys(overrides).length === 0) return c;
  return { ...c, changes: c.changes.map((ch) => (overrides[ch.ruleId] ? { ...ch, severity: overrides[ch.ruleId] } : ch)) };
}
