import { countsAsConsensus } from '../../src/review/consensus';
import { runQuery } from '../../src/readmodels/queries/run-query';
import { nodeStatusQuery } from '../../src/readmodels/queries/node-status';
import { verdictQuery } from '../../src/readmodels/queries/verdict';
import { ALICE, BOB, CAROL, computedEvent, HEAD1, REPO, reviewFixture } from './support';

type Fixture = Awaited<ReturnType<typeof reviewFixture>>;
let f: Fixture;
const STREAM = `pr-${REPO}-7`;
const tokenAxes = { correctness: { status: 'pass' }, security: { status: 'pass' }, testGap: { status: 'pass' } };
const verdict = async () => (await runQuery(verdictQuery, f.ws, f.pr())).value as any;
const axis = async (name: string) => (await verdict()).axes.find((a: any) => a.axis === name);
/** A round must be finalized before its verdict can be Ship (SPEC §7.1): these tests look at the axes of a finalized round. */
const finalize = () => f.run('finalizeReview', CAROL, { ...f.pr(), tokenAxes, walkthrough: 'x' });

beforeEach(async () => {
  f = await reviewFixture();
  await f.request();
});
afterEach(async () => f.cleanup());

describe('no self-confirmation, enforced independently of the command (SPEC §5)', () => {
  test('countsAsConsensus counts only confirmations by someone other than the author', () => {
    expect(countsAsConsensus({ author: 'agent:alice' }, [])).toBe(false);
    expect(countsAsConsensus({ author: 'agent:alice' }, [{ by: 'agent:alice' }])).toBe(false);
    expect(countsAsConsensus({ author: 'agent:alice' }, [{ by: 'agent:alice' }, { by: 'agent:bob' }])).toBe(true);
  });

  test('a forged self-confirmation appended straight to the store is not counted by the fold or the finalizer', async () => {
    const forged = await f.file(ALICE, { priority: 'P2' });
    const genuine = await f.file(ALICE, { priority: 'P3' });
    await f.append(STREAM, 'ReviewNodeConfirmed', { nodeId: forged, by: ALICE.principal, role: 'member' }, ALICE.principal);
    await f.run('confirmNode', BOB, { ...f.pr(), nodeId: genuine });
    const list = (await runQuery(nodeStatusQuery, f.ws, f.pr())).value;
    const byId = Object.fromEntries(list.nodes.map((n: any) => [n.nodeId, n]));
    expect(byId[forged]).toMatchObject({ status: 'open', consensus: false, confirmedBy: ['agent:alice'] });
    expect(byId[genuine]).toMatchObject({ status: 'consensus-ready', consensus: true });
    const out = await f.run('finalizeReview', CAROL, { ...f.pr(), tokenAxes, walkthrough: 'x' });
    expect((out.response.result as any).consensusNodeIds).toEqual([genuine]);
    const finalized = (await f.events()).find((e) => e.type === 'ReviewFinalized')!;
    expect((finalized.data as any).consensusNodeIds).toEqual([genuine]);
  });
});

describe('axes fold in last (SPEC §6, §7.2) and decisions apply without a recompute', () => {
  const breaking = { changeId: 'c-1', ruleId: 'request-property-became-required', severity: 'breaking', direction: 'request', message: 'name became required', specPath: 'openapi.yaml' };

  test('before any compute the gated axes are unavailable: absence of evidence holds, never ships', async () => {
    const v = await verdict();
    expect(v).toMatchObject({ findingsVerdict: 'Ship', verdict: 'Hold', confidence: 0.5 });
    expect(v.axes.find((a: any) => a.axis === 'apiContract')).toMatchObject({ status: 'unavailable', gated: true });
  });

  test('an undecided breaking change blocks; approving it turns the axis to warn and the verdict to Ship at once', async () => {
    await f.append(STREAM, 'ReviewComputed', computedEvent(HEAD1, { apiContract: { status: 'pass', specs: [{ path: 'openapi.yaml', change: 'modified' }], changes: [breaking] } }));
    expect(await axis('apiContract')).toMatchObject({ status: 'fail', pending: ['c-1'] });
    expect((await verdict()).verdict).toBe('Block');
    await finalize();
    await f.append(STREAM, 'ContractChangeDecided', { changeId: 'c-1', decision: 'approved', by: CAROL.principal, headSha: HEAD1 }, CAROL.principal);
    expect(await axis('apiContract')).toMatchObject({ status: 'warn' });
    expect(await verdict()).toMatchObject({ verdict: 'Ship', confidence: 1, state: 'final' });
  });

  test('a rejected change fails the gate', async () => {
    await f.append(STREAM, 'ReviewComputed', computedEvent(HEAD1, { apiContract: { status: 'pass', specs: [], changes: [{ ...breaking, severity: 'non-breaking' }] } }));
    await finalize();
    expect((await verdict()).verdict).toBe('Ship');
    await f.append(STREAM, 'ContractChangeDecided', { changeId: 'c-1', decision: 'rejected', by: CAROL.principal, headSha: HEAD1 }, CAROL.principal);
    expect((await verdict()).verdict).toBe('Block');
  });

  test('a changed snapshot blocks until its head image is approved', async () => {
    const headHash = 'a'.repeat(64);
    await f.append(STREAM, 'ReviewComputed', computedEvent(HEAD1, { visual: { status: 'pass', snapshots: [{ snapshotId: 'goldens/home.png', state: 'changed', harness: 'goldens', baseHash: 'b'.repeat(64), headHash }] } }));
    expect(await verdict()).toMatchObject({ verdict: 'Block' });
    await finalize();
    await f.append(STREAM, 'VisualChangeApproved', { snapshotId: 'goldens/home.png', approvalKey: headHash, by: CAROL.principal, headSha: HEAD1 }, CAROL.principal);
    expect(await axis('visual')).toMatchObject({ status: 'warn' });
    expect((await verdict()).verdict).toBe('Ship');
  });

  test('a recorded axis result can make a computed axis stricter, never greener', async () => {
    await f.append(STREAM, 'ReviewComputed', computedEvent(HEAD1, { apiContract: { status: 'pass', specs: [], changes: [breaking] } }));
    await f.run('recordAxis', ALICE, { ...f.pr(), axis: 'apiContract', status: 'pass' });
    expect(await axis('apiContract')).toMatchObject({ status: 'fail', source: 'compute' });
    await f.run('recordAxis', ALICE, { ...f.pr(), axis: 'visual', status: 'partial', reason: 'renderer timed out' });
    expect(await axis('visual')).toMatchObject({ status: 'partial', source: 'recorded' });
  });

  test('recordAxis requires a reason for a non-green status', async () => {
    const before = await f.count();
    await expect(f.run('recordAxis', ALICE, { ...f.pr(), axis: 'performance', status: 'fail' })).rejects.toMatchObject({ code: 'invalid_payload' });
    expect(await f.count()).toBe(before);
  });

  test('finalize records the token axes, verdict and confidence under the rules in force', async () => {
    await f.append(STREAM, 'ReviewComputed', computedEvent(HEAD1));
    await f.file(ALICE, { priority: 'P0', confidence: 0.9 });
    await f.file(BOB, { priority: 'P0', confidence: 0.7, brief: 'qa' });
    const out = await f.run('finalizeReview', CAROL, { ...f.pr(), tokenAxes: { ...tokenAxes, security: { status: 'fail', reason: 'token in logs' } }, walkthrough: '## Walkthrough' });
    expect(out.response.result).toMatchObject({ verdict: 'Block', confidence: 0.72 }); // mean 0.8 × (1 − 0.1)
    const v = await verdict();
    expect(v.axes.find((a: any) => a.axis === 'security')).toMatchObject({ status: 'fail', gated: false, source: 'finalize' });
    expect(v.finalized).toMatchObject({ verdict: 'Block', confidence: 0.72, rulesVersion: 'v1' });
  });
});
