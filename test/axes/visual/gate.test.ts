import { approvalKeyOf, visualGate } from '../../../src/axes/visual/gate';
import type { VisualComputation, VisualSnapshot } from '../../../src/axes/types';
import { VisualChangeApproved } from '../../../src/events/catalogue/visual';

const h = (c: string) => c.repeat(64);
const snap = (snapshotId: string, state: VisualSnapshot['state'], extra: Partial<VisualSnapshot> = {}): VisualSnapshot => ({
  snapshotId,
  state,
  harness: 'goldens',
  ...(state !== 'added' ? { baseHash: h('b') } : {}),
  ...(state !== 'removed' ? { headHash: h(snapshotId.slice(-1)) } : {}),
  ...extra,
});
const computed = (snapshots: VisualSnapshot[], status: VisualComputation['status'] = 'pass', reason?: string): VisualComputation => ({ status, reason, snapshots });

describe('visualGate (SPEC §12)', () => {
  it('passes when every snapshot is unchanged or added', () => {
    const r = visualGate(computed([snap('s1', 'unchanged'), snap('s2', 'added')]), new Set());
    expect(r.status).toBe('pass');
    expect(r.pending).toEqual([]);
    expect(r.snapshots.map((s) => s.approved)).toEqual([false, false]);
  });

  it('fails on a changed snapshot and names it in the reason', () => {
    const r = visualGate(computed([snap('s1', 'unchanged'), snap('button/a', 'changed')]), new Set());
    expect(r.status).toBe('fail');
    expect(r.pending).toEqual(['button/a']);
    expect(r.reason).toContain('button/a');
  });

  it('fails on a removed snapshot until its removal is approved under removed:<baseHash>', () => {
    const removed = snap('gone', 'removed');
    expect(approvalKeyOf(removed)).toBe('removed:' + h('b'));
    expect(visualGate(computed([removed]), new Set()).status).toBe('fail');
    // Approving the base image's hash as if it were a head image does not approve the removal.
    expect(visualGate(computed([removed]), new Set([h('b')])).status).toBe('fail');
    const r = visualGate(computed([removed]), new Set(['removed:' + h('b')]));
    expect(r.status).toBe('warn');
    expect(r.snapshots[0].approved).toBe(true);
  });

  it('holds the gate for a snapshot with an error, like a change', () => {
    const r = visualGate(computed([snap('broken1', 'changed', { error: 'head PNG is malformed' })]), new Set());
    expect(r.status).toBe('fail');
    expect(r.pending).toEqual(['broken1']);
  });

  it('an errored snapshot with no content hash can never be approved', () => {
    const s: VisualSnapshot = { snapshotId: 'x', state: 'changed', harness: 'render', error: 'render crashed' };
    expect(approvalKeyOf(s)).toBeUndefined();
    expect(visualGate(computed([s]), new Set([h('x')])).status).toBe('fail');
  });

  it('warns (not passes) once every change is approved, keeping approvals visible', () => {
    const r = visualGate(computed([snap('s1', 'changed'), snap('s2', 'unchanged')]), new Set([h('1')]));
    expect(r.status).toBe('warn');
    expect(r.pending).toEqual([]);
    expect(r.snapshots.find((s) => s.snapshotId === 's1')?.approved).toBe(true);
  });

  it('an approval lapses once the head image changes, and survives a recompute with the same image', () => {
    const approvals = new Set([h('1')]);
    expect(visualGate(computed([snap('s1', 'changed', { headHash: h('1') })]), approvals).status).toBe('warn');
    // Recompute after a rebase: different diff hash, same head image → still approved.
    expect(visualGate(computed([snap('s1', 'changed', { headHash: h('1'), diffHash: h('d') })]), approvals).status).toBe('warn');
    const r = visualGate(computed([snap('s1', 'changed', { headHash: h('2') })]), approvals);
    expect(r.status).toBe('fail');
    expect(r.pending).toEqual(['s1']);
  });

  it('an approval is keyed by image, so it also applies to another snapshot showing the same approved image', () => {
    const r = visualGate(computed([snap('a1', 'changed', { headHash: h('e') }), snap('b2', 'changed', { headHash: h('e') })]), new Set([h('e')]));
    expect(r.status).toBe('warn');
  });

  it.each(['partial', 'unavailable', 'not_applicable'] as const)('passes %s through, never turning it green', (status) => {
    const r = visualGate(computed([snap('s1', 'unchanged')], status, 'because'), new Set());
    expect(r.status).toBe(status);
    expect(r.reason).toBe('because');
  });

  it('gives a default reason to a pass-through status without one', () => {
    const r = visualGate(computed([], 'unavailable'), new Set());
    expect(r.reason).toMatch(/could not run/);
  });

  it('a partial computation stays partial even with every computed change approved', () => {
    const r = visualGate(computed([snap('s1', 'changed')], 'partial', 'render timed out'), new Set([h('1')]));
    expect(r.status).toBe('partial');
    expect(r.snapshots[0].approved).toBe(true);
  });
});

describe('VisualChangeApproved event', () => {
  const base = { snapshotId: 's1', by: 'user:alice', headSha: 'a'.repeat(40) };
  it('accepts a head content hash and a removed:<baseHash> key', () => {
    expect(VisualChangeApproved.schema.safeParse({ ...base, approvalKey: h('a') }).success).toBe(true);
    expect(VisualChangeApproved.schema.safeParse({ ...base, approvalKey: 'removed:' + h('a') }).success).toBe(true);
  });
  it('refuses an approval key that is not a content hash, naming the field', () => {
    const r = VisualChangeApproved.schema.safeParse({ ...base, approvalKey: 'abc' });
    expect(r.success).toBe(false);
    expect(JSON.stringify(r.error?.issues)).toContain('approvalKey');
  });
});
