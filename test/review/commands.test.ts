import { newUuidV7 } from '../../src/events/ids';
import { runQuery } from '../../src/readmodels/queries/run-query';
import { nodeStatusQuery } from '../../src/readmodels/queries/node-status';
import { reviewStatusQuery } from '../../src/readmodels/queries/review-status';
import { verdictQuery } from '../../src/readmodels/queries/verdict';
import { reportingGroupsQuery } from '../../src/readmodels/queries/reporting-groups';
import { ALICE, BASE, BOB, CAROL, HEAD1, HEAD2, nodeInput, OWNER, REPO, reviewFixture } from './support';

type Fixture = Awaited<ReturnType<typeof reviewFixture>>;
let f: Fixture;
beforeEach(async () => {
  f = await reviewFixture();
});
afterEach(async () => f.cleanup());

/** Then: the command is refused with `code` and the store holds exactly as many events as before. */
async function expectRefused(p: Promise<unknown>, code: string) {
  const before = await f.count();
  await expect(p).rejects.toMatchObject({ code });
  expect(await f.count()).toBe(before);
}

const nodes = async (prNumber = 7) => (await runQuery(nodeStatusQuery, f.ws, { repoId: REPO, prNumber })).value;

describe('requestReview: one review per PR (SPEC §10)', () => {
  test('the first request snapshots the workspace level and its roster', async () => {
    const out = await f.request();
    expect(out.response.streamId).toBe(`pr-${REPO}-7`);
    expect(out.response.result).toEqual({ started: true, newRound: true, round: 1, level: 'balanced', roster: ['engineer', 'qa', 'architect'] });
  });

  test('requesting again at the same head returns the same review and writes nothing', async () => {
    await f.request();
    const before = await f.count();
    const again = await f.request(7, HEAD1, BOB);
    expect(again.response.streamId).toBe(`pr-${REPO}-7`);
    expect(again.response.result).toEqual({ started: false, newRound: false });
    expect(await f.count()).toBe(before);
  });

  test('requesting again after the head moved starts round 2 on the same stream', async () => {
    await f.request();
    await f.file(ALICE);
    const out = await f.request(7, HEAD2);
    // The repo is not registered, so nothing can be checked: the live node is carried as outdated (SPEC §5).
    expect(out.response.result).toEqual({ started: false, newRound: true, round: 2, carryOver: { carried: 0, outdated: 1, gone: 0 } });
    const status = (await runQuery(reviewStatusQuery, f.ws, f.pr())).value;
    expect(status).toMatchObject({ round: 2, reviewedHead: HEAD2, status: 'requested' });
  });

  test('10 concurrent first requests start exactly one review', async () => {
    const outs = await Promise.all(Array.from({ length: 10 }, (_, i) => f.run('requestReview', i % 2 ? ALICE : BOB, { ...f.pr(), baseSha: BASE, headSha: HEAD1 })));
    const events = await f.events();
    expect(events.filter((e) => e.type === 'ReviewRequested')).toHaveLength(1);
    expect(events.filter((e) => e.streamId.startsWith('pr-'))).toHaveLength(1);
    expect(outs.filter((o) => (o.response.result as { started: boolean }).started)).toHaveLength(1);
    expect(new Set(outs.map((o) => o.response.streamId))).toEqual(new Set([`pr-${REPO}-7`]));
  });

  test('the same idempotency key replays the original response byte for byte', async () => {
    const key = newUuidV7();
    const first = await f.run('requestReview', ALICE, { ...f.pr(), baseSha: BASE, headSha: HEAD1 }, key);
    const before = await f.count();
    const again = await f.run('requestReview', ALICE, { ...f.pr(), baseSha: BASE, headSha: HEAD1 }, key);
    expect(again.json).toBe(first.json);
    expect(await f.count()).toBe(before);
  });

  test('setReviewLevel changes the roster of later reviews only', async () => {
    await f.request(7);
    await f.run('setReviewLevel', OWNER, { level: 'light' });
    const later = await f.request(8);
    expect(later.response.result).toMatchObject({ level: 'light', roster: ['engineer'] });
    // PR 7 keeps its balanced snapshot: a qa node is still accepted there, refused on PR 8.
    await f.file(BOB, { brief: 'qa' }, 7);
    await expectRefused(f.run('addReviewNode', BOB, { ...f.pr(8), node: nodeInput({ brief: 'qa' }) }), 'brief_not_on_roster');
  });

  test('reporting groups follow the snapshotted level and never drop a node', async () => {
    await f.run('setReviewLevel', OWNER, { level: 'light' });
    await f.request(7);
    const ids: Record<string, string> = {};
    for (const p of ['P0', 'P1', 'P2', 'P3']) ids[p] = await f.file(ALICE, { priority: p });
    await f.run('dismissNode', CAROL, { ...f.pr(), nodeId: ids.P3, reason: 'nit' });
    const light = (await runQuery(reportingGroupsQuery, f.ws, f.pr())).value;
    expect(light).toEqual({ level: 'light', mainPriorities: ['P0', 'P1'], main: [ids.P0, ids.P1], belowThreshold: [ids.P2, ids.P3] });
    await f.run('setReviewLevel', OWNER, { level: 'thorough' });
    await f.request(8);
    const t = [await f.file(ALICE, { priority: 'P3', brief: 'performance' }, 8), await f.file(BOB, { priority: 'P2', brief: 'security' }, 8)];
    expect((await runQuery(reportingGroupsQuery, f.ws, f.pr(8))).value).toMatchObject({ level: 'thorough', main: t, belowThreshold: [] });
  });

  test('setReviewLevel needs admin', async () => {
    await expectRefused(f.run('setReviewLevel', ALICE, { level: 'thorough' }), 'forbidden');
  });
});

describe('review node rules (SPEC §5, §9)', () => {
  beforeEach(async () => {
    await f.request();
  });

  test('a node is filed under the caller principal, open, and moves the ladder to in progress', async () => {
    const id = await f.file(ALICE, { brief: 'architect' });
    const list = await nodes();
    expect(list.nodes[0]).toMatchObject({ nodeId: id, author: 'agent:alice', status: 'open', brief: 'architect', consensus: false });
    expect((await runQuery(reviewStatusQuery, f.ws, f.pr())).value.status).toBe('in_progress');
  });

  test('refused: a principal confirming its own node', async () => {
    const id = await f.file(ALICE);
    await expectRefused(f.run('confirmNode', ALICE, { ...f.pr(), nodeId: id }), 'self_confirmation_refused');
  });

  test('a different principal confirming makes the node consensus-ready; confirming twice is a no-op', async () => {
    const id = await f.file(ALICE);
    await f.run('confirmNode', BOB, { ...f.pr(), nodeId: id });
    const before = await f.count();
    await f.run('confirmNode', BOB, { ...f.pr(), nodeId: id });
    expect(await f.count()).toBe(before);
    expect((await nodes()).nodes[0]).toMatchObject({ status: 'consensus-ready', confirmedBy: ['agent:bob'], consensus: true });
  });

  test('refused: confirming or dismissing a node already resolved', async () => {
    const id = await f.file(ALICE);
    await f.run('resolveNode', CAROL, { ...f.pr(), nodeId: id, reason: 'fixed in the next push' });
    await expectRefused(f.run('confirmNode', BOB, { ...f.pr(), nodeId: id }), 'node_closed');
    await expectRefused(f.run('dismissNode', CAROL, { ...f.pr(), nodeId: id, reason: 'noise' }), 'node_closed');
  });

  test('refused: confirming, dismissing or resolving a node already dismissed', async () => {
    const id = await f.file(ALICE);
    await f.run('dismissNode', CAROL, { ...f.pr(), nodeId: id, reason: 'not a bug' });
    await expectRefused(f.run('confirmNode', BOB, { ...f.pr(), nodeId: id }), 'node_closed');
    await expectRefused(f.run('dismissNode', CAROL, { ...f.pr(), nodeId: id, reason: 'again' }), 'node_closed');
    await expectRefused(f.run('resolveNode', CAROL, { ...f.pr(), nodeId: id, reason: 'again' }), 'node_closed');
  });

  test('refused: a node filed under a brief not on the roster', async () => {
    await expectRefused(f.run('addReviewNode', ALICE, { ...f.pr(), node: nodeInput({ brief: 'security' }) }), 'brief_not_on_roster');
  });

  test.each([['../etc/passwd'], ['src/../../outside.ts'], ['/etc/passwd'], ['src/a\0b.ts'], ['C:/windows/system.ini']])('refused: anchor path %j escapes the repo', async (p) => {
    const before = await f.count();
    const err = await f.run('addReviewNode', ALICE, { ...f.pr(), node: nodeInput({ anchor: { path: p, startLine: 1, endLine: 2 } }) }).catch((e) => e);
    expect(err).toMatchObject({ code: 'invalid_payload' });
    expect(err.message).toMatch(/node\.anchor\.path/);
    expect(await f.count()).toBe(before);
  });

  test('an anchor path is stored normalized', async () => {
    await f.file(ALICE, { anchor: { path: './src//lib/../app.ts', startLine: 1, endLine: 1 } });
    expect((await nodes()).nodes[0].anchor!.path).toBe('src/app.ts');
  });

  test.each([[1.01], [-0.1], [2]])('refused: confidence %p outside [0, 1]', async (c) => {
    const before = await f.count();
    const err = await f.run('addReviewNode', ALICE, { ...f.pr(), node: nodeInput({ confidence: c }) }).catch((e) => e);
    expect(err).toMatchObject({ code: 'invalid_payload' });
    expect(err.message).toMatch(/node\.confidence: confidence must be in \[0, 1\]/);
    expect(await f.count()).toBe(before);
  });

  test('refused: startLine after endLine', async () => {
    await expectRefused(f.run('addReviewNode', ALICE, { ...f.pr(), node: nodeInput({ anchor: { path: 'a.ts', startLine: 9, endLine: 3 } }) }), 'invalid_payload');
  });

  test('refused: filing against a head that is not the current round', async () => {
    await expectRefused(f.run('addReviewNode', ALICE, { ...f.pr(), headSha: HEAD2, node: nodeInput() }), 'stale_head');
  });

  test('refused: acting on a PR with no review', async () => {
    await expectRefused(f.run('addReviewNode', ALICE, { ...f.pr(99), node: nodeInput() }), 'review_not_found');
  });

  test('a dismissal records a suppression fact and a later node with that fingerprint is flagged, not hidden', async () => {
    const node = { title: 'Unchecked null', anchor: { path: 'src/a.ts', startLine: 3, endLine: 4, symbolId: 'src/a.ts#load' } };
    const first = await f.file(ALICE, node);
    await f.run('dismissNode', CAROL, { ...f.pr(), nodeId: first, reason: 'guarded by the caller' });
    const facts = (await f.events()).filter((e) => e.type === 'SuppressionFactRecorded');
    expect(facts).toHaveLength(1);
    expect(facts[0]).toMatchObject({ streamId: 'workspace', data: { nodeId: first, repoId: REPO, prNumber: 7, confidence: 'low', reason: 'guarded by the caller' } });
    // Another PR, another reviewer, same defect.
    await f.request(8);
    const later = await f.file(BOB, node, 8);
    const list = await nodes(8);
    expect(list.nodes).toHaveLength(1);
    expect(list.nodes[0]).toMatchObject({ nodeId: later, status: 'open', previouslyDismissed: { nodeId: first, repoId: REPO, prNumber: 7 } });
  });

  test('duplicates in a round are demoted to the highest-priority, earliest node', async () => {
    const same = { title: 'Race on save', kind: 'bug', anchor: { path: 'src/s.ts', startLine: 1, endLine: 2, symbolId: 'src/s.ts#save' } };
    const a = await f.file(ALICE, { ...same, priority: 'P2' });
    const b = await f.file(BOB, { ...same, priority: 'P1', brief: 'qa' });
    const c = await f.file(CAROL, { ...same, priority: 'P1', brief: 'architect' });
    const byId = Object.fromEntries((await nodes()).nodes.map((n: any) => [n.nodeId, n]));
    expect(byId[b].duplicateOf).toBeNull();
    expect(byId[a].duplicateOf).toBe(b);
    expect(byId[c].duplicateOf).toBe(b);
    expect((await runQuery(verdictQuery, f.ws, f.pr())).value).toMatchObject({ liveNodes: 3, duplicates: 2 });
  });

  test('disagreements (overlapping anchors, priorities ≥ 2 apart or bug vs suggestion) are listed first', async () => {
    await f.file(ALICE, { anchor: { path: 'src/x.ts', startLine: 100, endLine: 110 }, priority: 'P3' });
    const p0 = await f.file(ALICE, { anchor: { path: 'src/y.ts', startLine: 5, endLine: 9 }, priority: 'P0' });
    const p2 = await f.file(BOB, { anchor: { path: 'src/y.ts', startLine: 8, endLine: 12 }, priority: 'P2', brief: 'qa' });
    const bug = await f.file(ALICE, { anchor: { path: 'src/z.ts', startLine: 1, endLine: 3 }, kind: 'bug', priority: 'P2' });
    const sug = await f.file(BOB, { anchor: { path: 'src/z.ts', startLine: 3, endLine: 3 }, kind: 'suggestion', priority: 'P2' });
    // Same reviewer, overlapping, far apart in priority: not a disagreement.
    await f.file(ALICE, { anchor: { path: 'src/y.ts', startLine: 6, endLine: 6 }, priority: 'P3' });
    const list = await nodes();
    expect(list.disagreements.map((d: any) => d.nodeIds)).toEqual([
      [p0, p2],
      [bug, sug],
    ]);
    expect(list.nodes.slice(0, 4).map((n: any) => n.nodeId)).toEqual([p0, p2, bug, sug]);
  });
});

describe('ladder (SPEC §10)', () => {
  const tokenAxes = { correctness: { status: 'pass' }, security: { status: 'pass' }, testGap: { status: 'warn', reason: 'no tests for the retry path' } };

  test('refused: finalizing a review that is still "requested" is an illegal ladder transition', async () => {
    await f.request();
    await expectRefused(f.run('finalizeReview', ALICE, { ...f.pr(), tokenAxes, walkthrough: 'x' }), 'illegal_ladder_transition');
  });

  test('requested → in progress → awaiting approval; stale once a newer head is observed', async () => {
    await f.request();
    await f.file(ALICE, { priority: 'P1' });
    const out = await f.run('finalizeReview', BOB, { ...f.pr(), tokenAxes, walkthrough: '## Walkthrough' });
    expect(out.response.result).toMatchObject({ verdict: 'Hold', round: 1 });
    let status = (await runQuery(reviewStatusQuery, f.ws, f.pr())).value;
    expect(status).toMatchObject({ status: 'awaiting_approval', stale: false, finalized: { verdict: 'Hold' } });
    await f.run('observeHead', ALICE, { ...f.pr(), headSha: HEAD2 });
    status = (await runQuery(reviewStatusQuery, f.ws, f.pr())).value;
    expect(status).toMatchObject({ status: 'awaiting_approval', stale: true, reviewedHead: HEAD1, observedHead: HEAD2 });
    const changes = (await f.events()).filter((e) => e.type === 'ReviewStatusChanged').map((e) => e.data);
    expect(changes).toEqual([
      { from: 'requested', to: 'in_progress', reason: 'a node was filed' },
      { from: 'in_progress', to: 'awaiting_approval', reason: 'review finalized' },
    ]);
  });

  test('refused: finalizing a completed review', async () => {
    await f.request();
    await f.file(ALICE);
    await f.run('finalizeReview', BOB, { ...f.pr(), tokenAxes, walkthrough: 'x' });
    await f.append(`pr-${REPO}-7`, 'ReviewPublished', { forgeReviewId: '123', event: 'COMMENT', inline: [], folded: [], fallbackUsed: false, publishedBy: 'user:carol' });
    await expectRefused(f.run('finalizeReview', BOB, { ...f.pr(), tokenAxes, walkthrough: 'y' }), 'illegal_ladder_transition');
    await expectRefused(f.run('addReviewNode', ALICE, { ...f.pr(), node: nodeInput() }), 'review_completed');
  });

  test('recordCiSignal keeps the latest state per check; a redelivery records nothing', async () => {
    await f.request();
    const sig = { ...f.pr(), name: 'build', status: 'completed', conclusion: 'failure', url: 'https://ci.example.com/1', headSha: HEAD1 };
    await f.run('recordCiSignal', ALICE, sig);
    const before = await f.count();
    await f.run('recordCiSignal', ALICE, sig);
    expect(await f.count()).toBe(before);
  });
});
