// pixelmatch (visual axis, reached through the compute pipeline) is ESM-only: load the real source as CommonJS under jest.
import '../axes/visual/support/esm';
import type { ProgressView } from '../../src/review-progress/progress';
import { cohortContextQuery } from '../../src/readmodels/queries/cohort-context';
import type { ReviewMetrics } from '../../src/readmodels/queries/review-metrics';
import { AGENT, contextFixture, QA, REPO } from './support';

jest.setTimeout(120_000);

const PASS = { correctness: { status: 'pass' }, security: { status: 'pass' }, testGap: { status: 'warn', reason: 'no test for the widened steps' } };
type Cohort = { key: string; title: string; files: string[] };

describe('cohort review progress, finalize and metrics on a real repository', () => {
  let f: Awaited<ReturnType<typeof contextFixture>>;
  let cohorts: Cohort[];
  const pr = { repoId: REPO, prNumber: 2 };
  const mark = (cohortKey: string, brief: string, status: string, reason?: string, who: typeof AGENT | typeof QA = AGENT) => f.run('markCohortReviewed', { ...pr, cohortKey, brief, status, ...(reason ? { reason } : {}) }, who);
  const progress = () => f.query<ProgressView>('cohortProgress', pr);
  const finalized = async () => (await f.lf.events()).filter((e) => e.type === 'ReviewFinalized' && e.streamId === `pr-${REPO}-2`).pop()!.data as { tokenAxes: Record<string, { status: string; reason?: string }> };

  beforeAll(async () => {
    f = await contextFixture();
    await f.run('requestReview', { ...pr, baseSha: f.base, headSha: f.head2 }, AGENT);
    await f.run('computeReview', pr, AGENT);
    const computed = (await f.lf.events()).filter((e) => e.type === 'ReviewComputed').pop()!;
    cohorts = (computed.data as { cohorts: Cohort[] }).cohorts;
    expect(cohorts.length).toBeGreaterThan(0);
    // A finding moves the review to in_progress (finalize is a ladder step from there).
    await f.run('addReviewNode', { ...pr, node: { kind: 'suggestion', priority: 'P3', triage: { category: 'maintainability', severity: 'low', effort: 'trivial' }, confidence: 0.5, title: 'name the steps', body: 'x', brief: 'engineer' } }, AGENT);
  });
  afterAll(() => f.cleanup());

  it('refuses marks by a brief off the roster, a partial without a reason and an unknown cohort', async () => {
    await expect(mark(cohorts[0].key, 'security', 'complete')).rejects.toMatchObject({ code: 'brief_not_on_roster' });
    await expect(mark(cohorts[0].key, 'qa', 'partial')).rejects.toMatchObject({ code: 'invalid_payload', message: expect.stringMatching(/^reason: /) });
    await expect(mark('c-00000000deadbeef', 'qa', 'complete')).rejects.toMatchObject({ code: 'cohort_not_found' });
  });

  it('a cohort left partial makes finalize record partial token axes naming it; complete review keeps them', async () => {
    const math = cohorts.find((c) => c.files.includes('src/math.ts'))!;
    for (const c of cohorts) {
      await mark(c.key, 'engineer', 'complete');
      await mark(c.key, 'architect', 'complete');
      if (c !== math) await mark(c.key, 'qa', 'complete', undefined, QA);
    }
    await mark(math.key, 'qa', 'partial', 'ran out of budget before the clamp callee', QA);
    const p = await progress();
    expect(p.cohorts.find((c) => c.cohortKey === math.key)).toMatchObject({ status: 'partial', briefs: expect.arrayContaining([{ brief: 'qa', status: 'partial', reason: 'ran out of budget before the clamp callee', by: QA.principal, headSha: f.head2 }]) });
    expect(p.totals).toEqual({ cohorts: cohorts.length, complete: cohorts.length - 1, partial: 1, pending: 0 });

    const out = await f.run('finalizeReview', { ...pr, tokenAxes: { ...PASS, security: { status: 'fail', reason: 'token logged' } }, walkthrough: 'w' }, AGENT);
    const axes = (await finalized()).tokenAxes;
    expect(axes.correctness.status).toBe('partial');
    // Short per axis (the cohort named), the details said once in the answer.
    expect(axes.correctness.reason).toBe(`1 cohort(s) not reviewed completely: "${math.title}" [${math.key}]`);
    const note = (out.response.result as { note: string }).note;
    expect(note).toBe(`correctness, testGap submitted as pass/warn recorded as partial: 1 cohort(s) not reviewed completely by the roster — "${math.title}" [${math.key}] (qa: partial (ran out of budget before the clamp callee))`);
    expect(((await finalized()) as any).progress).toEqual({ adjustedAxes: ['correctness', 'testGap'], incomplete: 1, cohorts: [{ cohortKey: math.key, title: math.title, missing: 'qa: partial (ran out of budget before the clamp callee)' }] });
    expect(axes.testGap.status).toBe('partial');
    expect(axes.testGap.reason).toContain('(reviewer said: no test for the widened steps)');
    // A found problem is not softened into "incomplete".
    expect(axes.security).toEqual({ status: 'fail', reason: 'token logged' });

    const metrics = await f.query<ReviewMetrics>('reviewMetrics', pr);
    expect(metrics.progress).toEqual({ clean: cohorts.length - 1, partial: 1, unreviewed: 0, orphanedMarks: 0 });

    await mark(math.key, 'qa', 'complete', undefined, QA);
    await f.run('finalizeReview', { ...pr, tokenAxes: PASS, walkthrough: 'w2' }, AGENT);
    expect((await finalized()).tokenAxes).toEqual(PASS);
  });

  it('progress set before a rebase is still there after the recompute', async () => {
    const before = await progress();
    const math0 = cohorts.find((c) => c.files.includes('src/math.ts'))!;
    const ws = await f.lf.ledger.workspace(f.ws);
    const input = cohortContextQuery.input.parse({ ...pr, cohortKey: math0.key });
    const watcherFold = await cohortContextQuery.fold(input, ws);
    f.git.git('checkout', '-q', 'main');
    f.git.write('README.md', 'shop\n');
    const newBase = f.git.commit('main moves');
    f.git.git('checkout', '-q', 'pr2');
    f.git.git('rebase', '-q', 'main');
    const rebased = f.git.git('rev-parse', 'HEAD');
    expect(rebased).not.toBe(f.head2);
    await f.run('requestReview', { ...pr, baseSha: newBase, headSha: rebased }, AGENT);
    await f.run('computeReview', pr, AGENT);
    const after = await progress();
    expect(after.computedHead).toBe(rebased);
    expect(after.cohorts.map((c) => c.cohortKey).sort()).toEqual(before.cohorts.map((c) => c.cohortKey).sort());
    expect(after.cohorts).toEqual(before.cohorts);
    expect(after.totals.complete).toBe(cohorts.length);
    expect(after.orphaned).toEqual([]);
    // A watcher that loaded the old head is told to ask again rather than shown the old head's code.
    let watched = watcherFold.initialState();
    for (const e of await f.lf.events()) if (cohortContextQuery.affects(input, e)) watched = watcherFold.evolve(watched, e);
    expect(cohortContextQuery.view(watched, input)).toMatchObject({ stale: true, loadedHead: f.head2, computedHead: rebased });
    // The context of the same key now comes from the rebased head.
    const math = cohorts.find((c) => c.files.includes('src/math.ts'))!;
    const pack = await f.query<{ headSha: string; baseSha: string; fragments: Array<{ symbolId?: string }> }>('cohortContext', { ...pr, cohortKey: math.key });
    expect(pack).toMatchObject({ headSha: rebased, baseSha: newBase });
    expect(pack.fragments.map((x) => x.symbolId)).toContain('src/math.ts#scale');
  });

  it('reports review metrics: files, cohorts vs target files, merge ratio, bytes per context pack', async () => {
    const m = await f.query<ReviewMetrics>('reviewMetrics', pr);
    // After the rebase the PR still changes src/math.ts, package.json and openapi.yaml (the README moved into the base).
    expect(m.files).toEqual({ changed: 3, filteredOut: { generated: 0, vendored: 0, versionOnly: 0, total: 0 }, underReview: 3, targets: 2 });
    expect(m.cohorts).toMatchObject({ count: 2, withinTargetFiles: true, loopsPerTargetFile: 1, semantic: 1, pathGrouped: 1 });
    const perCohort = 'perCohort' in m.contextPacks ? m.contextPacks.perCohort! : [];
    expect(perCohort.map((p) => p.cohortKey).sort()).toEqual(cohorts.map((c) => c.key).sort());
    for (const c of cohorts) {
      const pack = await f.query<{ usedBytes: number }>('cohortContext', { ...pr, cohortKey: c.key });
      expect(perCohort.find((p) => p.cohortKey === c.key)!.bytes).toBe(pack.usedBytes);
    }
  });
});
