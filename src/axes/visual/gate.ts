import type { AxisResult, VisualComputation, VisualSnapshot } from '../types';

export type GatedSnapshot = VisualSnapshot & { approved: boolean };
export type VisualGateResult = AxisResult & {
  snapshots: GatedSnapshot[];
  /** snapshotIds that hold the gate: changed, removed or errored, and not approved for their current image. */
  pending: string[];
};

const REMOVED_PREFIX = 'removed:';

/**
 * The key an approval of this snapshot is recorded under (`VisualChangeApproved.approvalKey`).
 *
 * An approval approves an image, not a snapshot name: the key is the sha256 of the approved HEAD PNG,
 * so it survives rebases and recomputes while the head image is byte-identical and lapses as soon as
 * the image changes. A removed snapshot has no head image; approving the removal is keyed
 * `removed:<sha256 of the base PNG>`, so it lapses if the snapshot comes back or the base changes.
 * A snapshot with neither hash (a harness error before any bytes were read) has no key and cannot
 * be approved: there is nothing a human could have looked at.
 */
export function approvalKeyOf(snapshot: VisualSnapshot): string | undefined {
  if (snapshot.state === 'removed') return snapshot.baseHash ? REMOVED_PREFIX + snapshot.baseHash : undefined;
  return snapshot.headHash;
}

function holdsGate(snapshot: VisualSnapshot): boolean {
  return snapshot.error !== undefined || snapshot.state === 'changed' || snapshot.state === 'removed';
}

/**
 * The visual gate of SPEC §12 as a pure function of the computed snapshots and the approval keys
 * recorded so far. Changed, removed and errored snapshots hold the gate (fail) until approved;
 * unchanged and added ones open it; when approvals were needed to open it the result is `warn`, so the
 * approved changes stay visible.
 *
 * Only a computation that ran to completion can be gated: `partial`, `unavailable` and
 * `not_applicable` pass through with their reason (absence of evidence never becomes a green gate),
 * though the snapshots are still annotated so clients can show and approve what was computed.
 */
export function visualGate(computation: VisualComputation, approvedHeadHashes: ReadonlySet<string>): VisualGateResult {
  const snapshots: GatedSnapshot[] = [];
  const pending: string[] = [];
  let approvedCount = 0;
  for (const snapshot of computation.snapshots) {
    if (!holdsGate(snapshot)) {
      snapshots.push({ ...snapshot, approved: false });
      continue;
    }
    const key = approvalKeyOf(snapshot);
    const approved = key !== undefined && approvedHeadHashes.has(key);
    snapshots.push({ ...snapshot, approved });
    if (approved) approvedCount++;
    else pending.push(snapshot.snapshotId);
  }

  if (computation.status !== 'pass' && computation.status !== 'warn' && computation.status !== 'fail') {
    return { status: computation.status, reason: computation.reason ?? defaultReason(computation.status), snapshots, pending };
  }
  if (pending.length > 0) {
    return { status: 'fail', reason: `${pending.length} visual snapshot(s) awaiting approval: ${describe(pending)}`, snapshots, pending };
  }
  if (approvedCount > 0) {
    return { status: 'warn', reason: `${approvedCount} visual change(s) approved`, snapshots, pending };
  }
  return { status: 'pass', snapshots, pending };
}

function describe(ids: string[]): string {
  const shown = ids.slice(0, 10).join(', ');
  return ids.length > 10 ? `${shown} and ${ids.length - 10} more` : shown;
}

function defaultReason(status: string): string {
  switch (status) {
    case 'not_applicable':
      return 'the PR changes no UI snapshot or component';
    case 'partial':
      return 'the visual harness could not finish';
    default:
      return 'the visual harness could not run';
  }
}
