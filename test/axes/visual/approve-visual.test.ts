import { approveVisual } from '../../../src/commands/approve-visual';
import { CommandExecutor } from '../../../src/commands/kernel';
import { newUuidV7 } from '../../../src/events/ids';
import { runQuery } from '../../../src/readmodels/queries/run-query';
import { verdictQuery } from '../../../src/readmodels/queries/verdict';
import type { Role } from '../../../src/events/roles';
import { ALICE, computedEvent, HEAD1, REPO, reviewFixture } from '../../review/support';

const CAROL = { principal: 'user:carol', role: 'member' as Role };
const VIEWER = { principal: 'user:victor', role: 'viewer' as Role };
const STREAM = `pr-${REPO}-7`;
const h = (c: string) => c.repeat(64);

type Fixture = Awaited<ReturnType<typeof reviewFixture>>;
let f: Fixture;
const executor = new CommandExecutor();
const approve = (actor: { principal: string; role: Role }, payload: Record<string, unknown>) =>
  executor.execute(approveVisual, f.ws, { idempotencyKey: newUuidV7(), principal: actor.principal as never, role: actor.role }, { ...f.pr(), ...payload });
const verdict = async () => (await runQuery(verdictQuery, f.ws, f.pr())).value as { verdict: string; axes: Array<{ axis: string; status: string }> };
const visualAxis = async () => (await verdict()).axes.find((a) => a.axis === 'visual');

const snapshots = [
  { snapshotId: 'goldens/home.png', state: 'changed', harness: 'goldens', baseHash: h('b'), headHash: h('1') },
  { snapshotId: 'goldens/old.png', state: 'removed', harness: 'goldens', baseHash: h('c') },
  { snapshotId: 'goldens/same.png', state: 'unchanged', harness: 'goldens', baseHash: h('d'), headHash: h('d') },
];

beforeEach(async () => {
  f = await reviewFixture();
  await f.request();
  await f.append(STREAM, 'ReviewComputed', computedEvent(HEAD1, { visual: { status: 'pass', snapshots } }));
});
afterEach(async () => f.cleanup());

describe('approveVisual (SPEC §12)', () => {
  it('approving the last held snapshot opens the gate and changes the verdict at once, without a recompute', async () => {
    expect(await visualAxis()).toMatchObject({ status: 'fail' });
    const before = (await verdict()).verdict;
    expect(before).not.toBe('Ship');
    const first = await approve(CAROL, { snapshotId: 'goldens/home.png' });
    expect(first.response.result).toEqual({ approved: true, approvalKey: h('1') });
    expect(await visualAxis()).toMatchObject({ status: 'fail' });
    const second = await approve(CAROL, { snapshotId: 'goldens/old.png' });
    expect(second.response.result).toEqual({ approved: true, approvalKey: `removed:${h('c')}` });
    expect(await visualAxis()).toMatchObject({ status: 'warn' });
    // Nothing holds any more; the round is still not finalized, so it reads Hold until someone does (SPEC §7.1).
    expect(await verdict()).toMatchObject({ verdict: 'Hold', findingsVerdict: 'Ship', state: 'provisional' });
    await f.run('finalizeReview', CAROL, { ...f.pr(), tokenAxes: { correctness: { status: 'pass' }, security: { status: 'pass' }, testGap: { status: 'pass' } }, walkthrough: 'x' });
    expect(await verdict()).toMatchObject({ verdict: 'Ship', state: 'final' });
  });

  it('records the approval keyed by the head image hash, by the approving human, for the computed head', async () => {
    await approve(CAROL, { snapshotId: 'goldens/home.png' });
    const events = await f.events();
    expect(events.filter((e) => e.type === 'VisualChangeApproved').map((e) => e.data)).toEqual([
      { snapshotId: 'goldens/home.png', approvalKey: h('1'), by: 'user:carol', headSha: HEAD1 },
    ]);
  });

  it('approving the same image twice records it once', async () => {
    await approve(CAROL, { snapshotId: 'goldens/home.png' });
    const again = await approve(CAROL, { snapshotId: 'goldens/home.png' });
    expect(again.response.result).toEqual({ approved: false, approvalKey: null });
    expect((await f.events()).filter((e) => e.type === 'VisualChangeApproved')).toHaveLength(1);
  });

  it('refuses an unknown snapshotId with an error naming it', async () => {
    await expect(approve(CAROL, { snapshotId: 'goldens/nope.png' })).rejects.toMatchObject({ code: 'unknown_snapshot', message: expect.stringContaining('"goldens/nope.png"') });
  });

  it('refuses a snapshot that needs no approval', async () => {
    await expect(approve(CAROL, { snapshotId: 'goldens/same.png' })).rejects.toMatchObject({ code: 'visual_approval_not_needed' });
  });

  it('refuses agents and viewers: only human members or above approve', async () => {
    await expect(approve(ALICE, { snapshotId: 'goldens/home.png' })).rejects.toMatchObject({ code: 'forbidden' });
    await expect(approve(VIEWER, { snapshotId: 'goldens/home.png' })).rejects.toMatchObject({ code: 'forbidden' });
  });

  it('a recompute with a new head image closes the gate again', async () => {
    await approve(CAROL, { snapshotId: 'goldens/home.png' });
    await approve(CAROL, { snapshotId: 'goldens/old.png' });
    expect(await visualAxis()).toMatchObject({ status: 'warn' });
    const moved = snapshots.map((s) => (s.snapshotId === 'goldens/home.png' ? { ...s, headHash: h('2') } : s));
    await f.append(STREAM, 'ReviewComputed', computedEvent(HEAD1, { visual: { status: 'pass', snapshots: moved } }));
    expect(await visualAxis()).toMatchObject({ status: 'fail' });
  });
});
