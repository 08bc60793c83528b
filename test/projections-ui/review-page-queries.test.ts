import { closeSharedDiffPools } from '../../src/axes/visual/pool';
import type { Ledger } from '../../src/ledger';
import { newUuidV7 } from '../../src/events/ids';
import { runQuery } from '../../src/readmodels/queries/run-query';
import { queryByName } from '../../src/readmodels/queries/queries';
import { verdictQuery } from '../../src/readmodels/queries/verdict';
import type { RecordedEvent } from '../../src/events/envelope';
import { methodTable } from '../../src/rpc/methods';
import { requestedReview, type RequestedReview } from '../support/review-fixture';
import { OPENAPI_BASE, OPENAPI_HEAD, png } from '../e2e/support';

const AGENT = { principal: 'agent:rev1' as const, role: 'member' as const };
const PEER = { principal: 'agent:rev2' as const, role: 'member' as const };
const HUMAN = { principal: 'user:alice' as const, role: 'member' as const };

/** The page's queries over a review built by real commands on a real git repository. */
describe('review page queries', () => {
  let review: RequestedReview;
  let ledger: Ledger;
  let baseSha: string;
  let headSha: string;
  const ws = 'ui';
  const target = { repoId: 'shop', prNumber: 3 };
  const run = (cmd: string, payload: Record<string, unknown>, who: { principal: `user:${string}` | `agent:${string}`; role: 'owner' | 'member' } = AGENT) =>
    ledger.run(cmd, ws, { ...who, idempotencyKey: newUuidV7() }, { ...target, ...payload });
  const ask = async (name: string, input: Record<string, unknown> = {}) => {
    const q = queryByName(name)!;
    return (await runQuery(q, await ledger.workspace(ws), q.input.parse({ ...target, ...input }))).value as any;
  };
  const file = async (who: typeof AGENT | typeof PEER, node: Record<string, unknown>) =>
    (await run('addReviewNode', { node: { triage: { category: 'correctness', severity: 'medium', effort: 'small' }, confidence: 0.8, body: 'b', brief: 'engineer', ...node } }, who)).response.result as { nodeId: string };

  beforeAll(async () => {
    review = await requestedReview({
      workspaceId: ws,
      target,
      by: AGENT,
      prefix: 'rl-ui-',
      base: (r) => {
        r.write('openapi.yaml', OPENAPI_BASE);
        r.write('goldens/button.png', png(24, 16, [200, 40, 40]));
        r.write('package.json', JSON.stringify({ name: 'shop', dependencies: { express: '^4.18.0', leftpad: '^1.0.0' } }));
      },
      head: (r) => {
        r.write('openapi.yaml', OPENAPI_HEAD);
        r.write('goldens/button.png', png(24, 16, [200, 40, 40], { x: 0, y: 0, w: 4, h: 4, rgb: [0, 0, 0] }));
        r.write('package.json', JSON.stringify({ name: 'shop', dependencies: { express: '^5.1.0' } }));
      },
    });
    ({ baseSha, headSha } = review);
    ledger = review.fx.ledger;
  });
  afterAll(async () => {
    await review.cleanup();
    // The compute diffed the golden in the process-wide worker pool.
    await closeSharedDiffPools();
  });

  it('registers every page query as review_studio.<name> and watch<Name>', () => {
    const t = methodTable();
    for (const name of ['cohorts', 'apiContract', 'visual', 'dependencyDiffs', 'blastRadius', 'cohortImpact', 'publishPreview']) {
      expect(t.get(`review_studio.${name}`)?.kind).toBe('query');
      expect(t.get(`watch${name[0].toUpperCase()}${name.slice(1)}`)?.kind).toBe('watch');
    }
    expect(t.get('review_studio.setContractDecision')?.kind).toBe('command');
    expect(t.get('review_studio.approveVisual')?.kind).toBe('command');
  });

  it('answers "not computed" before the computation, for every page query', async () => {
    expect(await ask('cohorts')).toMatchObject({ computed: false, cohorts: [] });
    expect(await ask('apiContract')).toMatchObject({ computed: false, changes: [] });
    expect(await ask('visual')).toMatchObject({ computed: false, snapshots: [] });
    expect(await ask('dependencyDiffs')).toMatchObject({ computed: false, diffs: [] });
    expect(await ask('cohortImpact', { cohortKey: 'c-0123456789abcdef' })).toMatchObject({ found: false, reason: 'the review has not been computed yet' });
    expect(await ask('blastRadius', { path: 'src/price.ts' })).toMatchObject({ available: false });
    expect(await ask('publishPreview')).toMatchObject({ enabled: false, inline: [], folded: [] });
  });

  it('cohorts: reading order by rank, with summary, diagrams and their unverified edges counted', async () => {
    await run('computeReview', {});
    const before = await ask('cohorts');
    expect(before.computed).toBe(true);
    expect(before.headSha).toBe(headSha);
    expect(before.cohorts.map((c: any) => c.rank)).toEqual([...before.cohorts.map((c: any) => c.rank)].sort((a, b) => a - b));
    const code = before.cohorts.find((c: any) => c.files.includes('src/cart.ts'));
    expect(code.files).toEqual(['src/cart.ts', 'src/price.ts']);
    expect(code.summary).toBeNull();
    expect(['semantic', 'path']).toContain(code.grouping);
    expect(code.blastRadius.score).toBeGreaterThan(0);

    await run('setCohortSummary', { cohortKey: code.key, markdown: 'rounds to cents' });
    await run('addReviewDiagram', {
      cohortKey: code.key,
      diagram: { kind: 'sequence', participants: [{ id: 't', symbolId: 'src/cart.ts#total' }, { id: 'p', symbolId: 'src/price.ts#price' }], messages: [{ from: 't', to: 'p', label: 'calls' }, { from: 'p', to: 't', label: 'claims' }] },
    });
    const after = (await ask('cohorts')).cohorts.find((c: any) => c.key === code.key);
    expect(after.summary).toMatchObject({ markdown: 'rounds to cents', by: 'agent:rev1' });
    expect(after.diagrams).toHaveLength(1);
    expect(after.diagrams[0]).toMatchObject({ edgeCount: 2, unverifiedEdges: 1, headSha });
    expect(after.diagrams[0].diagram.messages.map((m: any) => m.verified)).toEqual([true, false]);
  });

  it('apiContract: breaking changes with rule and message, decisions and the same gate the verdict folds in', async () => {
    const c = await ask('apiContract');
    expect(c).toMatchObject({ computed: true, headSha, status: 'fail' });
    const breaking = c.changes.filter((x: any) => x.severity === 'breaking');
    expect(breaking.length).toBeGreaterThanOrEqual(2);
    expect(c.changes.slice(0, breaking.length).every((x: any) => x.severity === 'breaking')).toBe(true);
    expect(breaking.map((x: any) => x.ruleId)).toEqual(expect.arrayContaining(['api-removed-without-deprecation']));
    expect(breaking.every((x: any) => x.decision === null && x.message.length > 0)).toBe(true);
    expect(c.undecidedBreaking).toHaveLength(breaking.length);

    await run('setContractDecision', { changeId: breaking[0].changeId, decision: 'rejected' }, HUMAN);
    const rejected = await ask('apiContract');
    expect(rejected.rejected).toEqual([breaking[0].changeId]);
    expect(rejected.changes[0].decision).toMatchObject({ decision: 'rejected', by: 'user:alice' });
    for (const ch of breaking) await run('setContractDecision', { changeId: ch.changeId, decision: 'approved' }, HUMAN);
    const approved = await ask('apiContract');
    expect(approved).toMatchObject({ status: 'warn', undecidedBreaking: [], rejected: [] });
    const verdict = (await runQuery(verdictQuery, await ledger.workspace(ws), target)).value as any;
    expect(verdict.axes.find((a: any) => a.axis === 'apiContract')).toMatchObject({ status: approved.status, reason: approved.reason });
  });

  it('visual: a changed snapshot with its hashes and ratio needs an approval; approving it flips the state and the gate', async () => {
    const v = await ask('visual');
    expect(v).toMatchObject({ computed: true, status: 'fail', pending: ['goldens/button.png'] });
    const snap = v.snapshots[0];
    expect(snap).toMatchObject({ snapshotId: 'goldens/button.png', state: 'changed', displayState: 'changed', needsApproval: true, approval: null, changedPixels: 16 });
    expect(snap.changedRatio).toBeCloseTo(16 / (24 * 16), 6);
    expect(snap.baseHash).toMatch(/^[0-9a-f]{64}$/);
    expect(snap.diffHash).toMatch(/^[0-9a-f]{64}$/);
    await run('approveVisual', { snapshotId: 'goldens/button.png' }, HUMAN);
    const after = await ask('visual');
    expect(after).toMatchObject({ status: 'warn', pending: [] });
    expect(after.snapshots[0]).toMatchObject({ displayState: 'approved', needsApproval: false, approval: { by: 'user:alice' } });
  });

  it('dependencyDiffs: per manifest, with major bumps flagged and counted', async () => {
    const d = await ask('dependencyDiffs');
    expect(d.computed).toBe(true);
    const changes = d.diffs.flatMap((m: any) => m.changes);
    expect(changes).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'express', change: 'upgraded', major: true }), expect.objectContaining({ name: 'leftpad', change: 'removed' })]));
    expect(d.majorBumps).toBe(changes.filter((c: any) => c.major).length);
  });

  it('cohortImpact and blastRadius: dependents of a cohort (from the computation) and of a symbol (from the code graph)', async () => {
    const code = (await ask('cohorts')).cohorts.find((c: any) => c.files.includes('src/cart.ts'));
    const impact = await ask('cohortImpact', { cohortKey: code.key });
    expect(impact).toMatchObject({ found: true, cohortKey: code.key, headSha, files: code.files, blastRadius: code.blastRadius });
    expect(await ask('cohortImpact', { cohortKey: 'c-0123456789abcdef' })).toMatchObject({ found: false });

    const radius = await ask('blastRadius', { symbolId: 'src/price.ts#price' });
    expect(radius).toMatchObject({ available: true, stale: false, commit: headSha });
    expect(radius.dependents.files).toContain('src/cart.ts');

    // A watcher's fold loaded the graph for one head; a recompute at another head makes its answer stale.
    const q = queryByName('blastRadius')!;
    const input = q.input.parse({ ...target, symbolId: 'src/price.ts#price' });
    const fold = await q.fold(input, await ledger.workspace(ws));
    let state = fold.initialState();
    const computedAt = (sha: string, pos: number): RecordedEvent => ({ eventId: newUuidV7(), type: 'ReviewComputed', schemaVersion: 1, data: { headSha: sha }, metadata: {} as any, streamId: 'pr-shop-3', streamRevision: pos, globalPosition: pos }) as RecordedEvent;
    state = fold.evolve(state, computedAt(headSha, 1));
    expect(q.view(state, input)).toMatchObject({ available: true, stale: false });
    state = fold.evolve(state, computedAt('f'.repeat(40), 2));
    expect(q.view(state, input)).toMatchObject({ available: true, stale: true });
  });

  it('publishPreview: disabled until finalized; then the selection split into inline and folded, duplicates and closed nodes out', async () => {
    const anchored = await file(AGENT, { kind: 'bug', priority: 'P1', title: 'doubles every price', anchor: { path: 'src/cart.ts', startLine: 5, endLine: 5 } });
    const dup = await file(PEER, { kind: 'bug', priority: 'P1', title: 'doubles every price', anchor: { path: 'src/cart.ts', startLine: 5, endLine: 5 }, brief: 'qa' });
    const loose = await file(AGENT, { kind: 'question', priority: 'P2', title: 'why round here?' });
    const elsewhere = await file(AGENT, { kind: 'suggestion', priority: 'P3', title: 'readme typo', anchor: { path: 'README.md', startLine: 1, endLine: 1 } });
    const closed = await file(AGENT, { kind: 'suggestion', priority: 'P2', title: 'gone soon' });
    await run('resolveNode', { nodeId: closed.nodeId, reason: 'fixed' }, PEER);
    const early = await ask('publishPreview');
    expect(early).toMatchObject({ enabled: false, status: 'in_progress', verdict: null, event: null });

    await run('finalizeReview', { tokenAxes: { correctness: { status: 'warn' }, security: { status: 'pass' }, testGap: { status: 'pass' } }, walkthrough: 'w' });
    const p = await ask('publishPreview');
    expect(p).toMatchObject({ enabled: true, blockedBy: null, status: 'awaiting_approval', selection: 'all_open', verdict: 'Hold', event: 'COMMENT' });
    expect(p.inline).toEqual([expect.objectContaining({ nodeId: anchored.nodeId, duplicates: 1, placement: { inline: true, path: 'src/cart.ts', startLine: 5, endLine: 5 } })]);
    expect(p.folded).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ nodeId: loose.nodeId, placement: { inline: false, reason: 'no_anchor' } }),
        expect.objectContaining({ nodeId: elsewhere.nodeId, placement: { inline: false, reason: 'not_in_diff' } }),
      ]),
    );
    expect([...p.inline, ...p.folded].map((x: any) => x.nodeId)).not.toContain(closed.nodeId);
    expect(p.excluded).toEqual([{ nodeId: dup.nodeId, why: 'duplicate' }]);

    const consensus = await ask('publishPreview', { selection: 'consensus' });
    expect([...consensus.inline, ...consensus.folded]).toEqual([]);
    await run('confirmNode', { nodeId: loose.nodeId }, PEER);
    const confirmed = await ask('publishPreview', { selection: 'consensus' });
    expect(confirmed.folded.map((x: any) => x.nodeId)).toEqual([loose.nodeId]);
  });
});
