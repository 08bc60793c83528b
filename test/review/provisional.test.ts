import { publishPreviewQuery } from '../../src/readmodels/queries/publish-preview';
import { reviewStatusQuery } from '../../src/readmodels/queries/review-status';
import { runQuery } from '../../src/readmodels/queries/run-query';
import { verdictQuery } from '../../src/readmodels/queries/verdict';
import { assertPublishable, loadPublishState } from '../../src/publish/run';
import { ALICE, BOB, CAROL, computedEvent, HEAD1, HEAD2, REPO, reviewFixture } from './support';

type Fixture = Awaited<ReturnType<typeof reviewFixture>>;
let f: Fixture;
const STREAM = `pr-${REPO}-7`;
const tokenAxes = { correctness: { status: 'pass' }, security: { status: 'pass' }, testGap: { status: 'pass' } };
const verdict = async () => (await runQuery(verdictQuery, f.ws, f.pr())).value as any;
const status = async () => (await runQuery(reviewStatusQuery, f.ws, f.pr())).value as any;
const preview = async () => (await runQuery(publishPreviewQuery, f.ws, f.pr())).value as any;
const finalize = () => f.run('finalizeReview', CAROL, { ...f.pr(), tokenAxes, walkthrough: 'x' });

beforeEach(async () => {
  f = await reviewFixture();
  await f.request();
});
afterEach(async () => f.cleanup());

describe('no verdict from nothing (SPEC §7.1)', () => {
  test('given a computed round with nothing found and every gate open, when nobody has finalized it, then the verdict is provisional Hold, never Ship', async () => {
    await f.append(STREAM, 'ReviewComputed', computedEvent(HEAD1));
    const v = await verdict();
    expect(v).toMatchObject({ state: 'provisional', verdict: 'Hold', findingsVerdict: 'Ship', confidence: 0, previous: null, stale: false });
    expect(v.reasons[0]).toMatch(/^Hold: provisional — round 1 at 111111111111 is not finalized yet/);
    expect(await status()).toMatchObject({ verdictState: 'provisional', previousVerdict: null });
  });

  test('given the same round, when it is finalized, then the verdict is final and may be Ship', async () => {
    await f.append(STREAM, 'ReviewComputed', computedEvent(HEAD1));
    await finalize();
    expect(await verdict()).toMatchObject({ state: 'final', verdict: 'Ship', confidence: 1, previous: null, stale: false, provisionalReason: null });
    expect(await status()).toMatchObject({ verdictState: 'final' });
    expect(await preview()).toMatchObject({ enabled: true, verdictState: 'final' });
  });

  test('given a finalized Ship, when a newer head is observed, then the verdict is provisional and stale with the finalized one as previous, and publishing is refused', async () => {
    await f.append(STREAM, 'ReviewComputed', computedEvent(HEAD1));
    await finalize();
    await f.run('observeHead', ALICE, { ...f.pr(), headSha: HEAD2 });
    const v = await verdict();
    expect(v).toMatchObject({ state: 'provisional', verdict: 'Hold', stale: true, latestHead: HEAD2, previous: { verdict: 'Ship', headSha: HEAD1, round: 1, by: CAROL.principal } });
    expect(v.provisionalReason).toMatch(/^head 222222222222 was observed after round 1 at 111111111111/);
    expect(await status()).toMatchObject({ verdictState: 'provisional', previousVerdict: { verdict: 'Ship', headSha: HEAD1 } });
    const p = await preview();
    expect(p).toMatchObject({ enabled: false, verdictState: 'provisional' });
    expect(p.blockedBy).toMatch(/^the verdict is provisional/);
    const s = await loadPublishState(f.ws, f.pr());
    expect(() => assertPublishable(s, f.pr())).toThrow(expect.objectContaining({ code: 'verdict_provisional' }));
  });

  test('given a finalized Ship, when a new round starts at the new head, then it is provisional with the last finalized verdict as previous (stale: it describes another head)', async () => {
    await f.append(STREAM, 'ReviewComputed', computedEvent(HEAD1));
    await finalize();
    await f.request(7, HEAD2);
    await f.append(STREAM, 'ReviewComputed', computedEvent(HEAD2));
    expect(await verdict()).toMatchObject({ round: 2, state: 'provisional', verdict: 'Hold', stale: false, previousStale: true, previous: { verdict: 'Ship', headSha: HEAD1, round: 1 } });
  });

  test('given a finalized round, when a node is filed after the finalization, then the verdict is provisional again until it is re-finalized', async () => {
    await f.append(STREAM, 'ReviewComputed', computedEvent(HEAD1));
    await finalize();
    await f.file(ALICE, { priority: 'P3' });
    expect(await verdict()).toMatchObject({ state: 'provisional', verdict: 'Hold', stale: false, previous: { verdict: 'Ship', headSha: HEAD1 } });
    await finalize();
    expect(await verdict()).toMatchObject({ state: 'final', verdict: 'Ship' });
  });

  test('given a round finalized Hold by a confirmed P1, when the P1 is resolved after the finalization, then the round reopens: provisional, the finalized Hold as previous, never a live verdict beside it (issue 38)', async () => {
    await f.append(STREAM, 'ReviewComputed', computedEvent(HEAD1));
    const id = await f.file(ALICE, { priority: 'P1', confidence: 0.8 });
    await f.run('confirmNode', BOB, { ...f.pr(), nodeId: id });
    await finalize();
    expect(await verdict()).toMatchObject({ state: 'final', verdict: 'Hold' });
    await f.run('resolveNode', CAROL, { ...f.pr(), nodeId: id, reason: 'fixed' });
    expect(await status()).toMatchObject({ status: 'in_progress', verdictState: 'provisional' });
    const v = await verdict();
    expect(v).toMatchObject({ state: 'provisional', verdict: 'Hold', findingsVerdict: 'Ship', previous: { verdict: 'Hold', round: 1 } });
    expect(v.provisionalReason).toBe('round 1 changed after it was finalized (status in_progress); finalize it again');
    await finalize();
    expect(await verdict()).toMatchObject({ state: 'final', verdict: 'Ship' });
  });

  test('given a P1 finding, when the round is not finalized, then the provisional verdict is the Hold the finding asks for, with its confidence', async () => {
    await f.append(STREAM, 'ReviewComputed', computedEvent(HEAD1));
    const id = await f.file(ALICE, { priority: 'P1', confidence: 0.8 });
    await f.run('confirmNode', BOB, { ...f.pr(), nodeId: id });
    const v = await verdict();
    expect(v).toMatchObject({ state: 'provisional', verdict: 'Hold', findingsVerdict: 'Hold', confidence: 0.8, decidingNodeIds: [id] });
    expect(v.reasons[0]).toMatch(/^Hold from findings/);
  });
});
