import type { ApiContractComputation, AxisResult, ContractDecision } from '../types';

export type ContractGateResult = AxisResult & {
  /** Breaking, non-derived changes nobody has decided on yet: each one holds the gate. */
  undecidedBreaking: string[];
  /** Changes a human rejected (any severity): each one fails the gate. */
  rejected: string[];
};

/**
 * The API-contract gate of SPEC §11, as a pure function of the computed diff and the decisions recorded
 * so far (keyed by changeId). Decisions for changeIds that no longer appear are ignored, so a decision
 * survives a recompute exactly when the same change reappears.
 *
 * Only a computation that ran to completion (`pass`) can be gated; `partial`, `unavailable` and
 * `not_applicable` pass through unchanged, because absence of evidence never becomes a green gate.
 */
export function contractGate(computation: ApiContractComputation, decisions: ReadonlyMap<string, ContractDecision>): ContractGateResult {
  if (computation.status !== 'pass' && computation.status !== 'warn' && computation.status !== 'fail') {
    return { status: computation.status, reason: computation.reason ?? defaultReason(computation.status), undecidedBreaking: [], rejected: [] };
  }
  const rejected: string[] = [];
  const undecidedBreaking: string[] = [];
  let approvedBreaking = 0;
  for (const change of computation.changes) {
    // Advisory (derived) diffs are shown but never block, whatever was decided on them.
    if (change.derived) continue;
    const decision = decisions.get(change.changeId);
    if (decision === 'rejected') {
      rejected.push(change.changeId);
      continue;
    }
    if (change.severity !== 'breaking') continue;
    if (decision === 'approved') approvedBreaking++;
    else undecidedBreaking.push(change.changeId);
  }
  if (rejected.length > 0) {
    return { status: 'fail', reason: `${rejected.length} contract change(s) rejected`, undecidedBreaking, rejected };
  }
  if (undecidedBreaking.length > 0) {
    return { status: 'fail', reason: `${undecidedBreaking.length} breaking contract change(s) awaiting a decision`, undecidedBreaking, rejected };
  }
  if (approvedBreaking > 0) {
    return { status: 'warn', reason: `${approvedBreaking} breaking contract change(s) approved`, undecidedBreaking, rejected };
  }
  return { status: 'pass', undecidedBreaking, rejected };
}

function defaultReason(status: string): string {
  switch (status) {
    case 'not_applicable':
      return 'no API spec file changed';
    case 'partial':
      return 'the API contract diff could not finish';
    default:
      return 'the API contract diff could not run';
  }
}
