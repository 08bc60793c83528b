import { needsDecision, type ApiContractComputation, type AxisResult, type ContractDecision } from '../types';

export type ContractGateResult = AxisResult & {
  /** Breaking or warning, non-derived changes nobody has decided on yet: each one holds the gate. */
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
    // A warning (a client may break) needs a decision exactly like a breaking change.
    if (!needsDecision(change.severity)) continue;
    if (decision === 'approved') approvedBreaking++;
    else undecidedBreaking.push(change.changeId);
  }
  if (rejected.length > 0) {
    return { status: 'fail', reason: `${rejected.length} contract change(s) rejected`, undecidedBreaking, rejected };
  }
  if (undecidedBreaking.length > 0) {
    return { status: 'fail', reason: `${undecidedBreaking.length} breaking contract change(s) awaiting a decision${withWarnings(computation, undecidedBreaking)}`, undecidedBreaking, rejected };
  }
  if (approvedBreaking > 0) {
    return { status: 'warn', reason: `${approvedBreaking} breaking contract change(s) approved`, undecidedBreaking, rejected };
  }
  return { status: 'pass', undecidedBreaking, rejected };
}

/** " (2 of them warnings)" when some of the undecided changes are warnings, so the reason says what it counts. */
function withWarnings(computation: ApiContractComputation, ids: string[]): string {
  const set = new Set(ids);
  const n = computation.changes.filter((c) => set.has(c.changeId) && c.severity === 'warning').length;
  return n === 0 ? '' : ` (${n} of them warning${n === 1 ? '' : 's'})`;
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
