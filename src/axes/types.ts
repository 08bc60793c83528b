/**
 * Shared vocabulary of the axes (SPEC §6). Each axis lives in its own folder under src/axes and
 * exports a pure gate function; the verdict projection folds those results in last.
 */
export type AxisName = 'correctness' | 'security' | 'testGap' | 'visual' | 'apiContract' | 'performance';

/**
 * pass: ran, nothing blocking · warn: ran, non-blocking concerns · fail: ran, blocking problem ·
 * partial: ran, could not finish · unavailable: could not run at all · not_applicable: the PR touches
 * nothing the axis covers. Only pass and warn open a gate: absence of evidence is never green.
 */
export type AxisStatus = 'pass' | 'warn' | 'fail' | 'partial' | 'unavailable' | 'not_applicable';

export interface AxisResult {
  status: AxisStatus;
  /** Why this status (always set for fail/partial/unavailable/not_applicable). */
  reason?: string;
}

// ---- API contract (SPEC §11) --------------------------------------------------------------------
/**
 * breaking: clients break · warning: clients may break (oasdiff's WARN: a request property or allOf branch
 * removed, …) — needs a decision exactly like a breaking change and counts as breaking in the CLI exit code ·
 * non-breaking: additive · info: worth knowing, no client impact.
 */
export type ContractSeverity = 'breaking' | 'warning' | 'non-breaking' | 'info';
/** Every severity, most severe first (display order). */
export const CONTRACT_SEVERITIES: readonly ContractSeverity[] = ['breaking', 'warning', 'non-breaking', 'info'];
/** Severities that hold the gate until a human decides (SPEC §11). */
export const needsDecision = (s: ContractSeverity): boolean => s === 'breaking' || s === 'warning';
export interface ContractChange {
  /** Stable across recomputes: same change, same id (derived from rule id + spec path + pointers). */
  changeId: string;
  ruleId: string;
  severity: ContractSeverity;
  direction: 'request' | 'response' | 'none';
  message: string;
  specPath: string;
  /** e.g. "GET /users/{}" */
  operation?: string;
  basePointer?: string;
  headPointer?: string;
  /** Advisory diff (not from an explicit spec): never blocks. */
  derived?: boolean;
}
export interface ApiContractComputation {
  /** pass/not_applicable/partial/unavailable as computed; decisions are applied by contractGate. */
  status: AxisStatus;
  reason?: string;
  specs: Array<{ path: string; change: 'added' | 'modified' | 'deleted' | 'renamed'; error?: string }>;
  changes: ContractChange[];
}
export type ContractDecision = 'approved' | 'rejected';

// ---- Visual (SPEC §12) --------------------------------------------------------------------------
export type SnapshotState = 'unchanged' | 'added' | 'changed' | 'removed' | 'approved';
export interface VisualSnapshot {
  snapshotId: string;
  state: Exclude<SnapshotState, 'approved'>;
  harness: 'goldens' | 'render' | 'flutter';
  /** sha256 of the base / head PNG bytes (content addresses). */
  baseHash?: string;
  headHash?: string;
  /** Content address of the stored diff PNG. */
  diffHash?: string;
  changedPixels?: number;
  changedRatio?: number;
  width?: number;
  height?: number;
  /** Per-snapshot failure (malformed PNG, …): the snapshot holds the gate like a change. */
  error?: string;
}
export interface VisualComputation {
  status: AxisStatus;
  reason?: string;
  snapshots: VisualSnapshot[];
}
