import { canonicalJson } from '../../src/events/canonical-json';
import type { RecordedEvent } from '../../src/events/envelope';
import { auditQuery } from '../../src/readmodels/queries/audit';
import { ciSignalsQuery } from '../../src/readmodels/queries/ci-signals';
import { nodeStatusQuery } from '../../src/readmodels/queries/node-status';
import type { QueryDefinition } from '../../src/readmodels/queries/query';
import { reReviewDeltaQuery } from '../../src/readmodels/queries/re-review-delta';
import { reportingGroupsQuery } from '../../src/readmodels/queries/reporting-groups';
import { reviewStatusQuery } from '../../src/readmodels/queries/review-status';
import { runQuery } from '../../src/readmodels/queries/run-query';
import { verdictQuery } from '../../src/readmodels/queries/verdict';
import { RULES_V1 } from '../../src/rules/rules';
import { ALICE, BOB, CAROL, computedEvent, HEAD1, HEAD2, OWNER, REPO, reviewFixture } from './support';

type Fixture = Awaited<ReturnType<typeof reviewFixture>>;
let f: Fixture;
afterAll(async () => f.cleanup());

/** A review with two rounds, confirmations, a forged self-confirmation, dismissals, decisions and a rules change. */
beforeAll(async () => {
  f = await reviewFixture();
  await f.request();
  const headHash = 'e'.repeat(64);
  await f.append(`pr-${REPO}-7`, 'ReviewComputed', computedEvent(HEAD1, {
    apiContract: { status: 'pass', specs: [], changes: [{ changeId: 'c-1', ruleId: 'r', severity: 'breaking', direction: 'request', message: 'm', specPath: 'openapi.yaml' }] },
    visual: { status: 'pass', snapshots: [{ snapshotId: 's', state: 'changed', harness: 'goldens', headHash }] },
  }));
  const ids: string[] = [];
  for (let i = 0; i < 12; i++) {
    const who = [ALICE, BOB, CAROL][i % 3];
    const brief = ['engineer', 'qa', 'architect'][i % 3];
    ids.push(await f.file(who, { brief, priority: ['P0', 'P1', 'P2', 'P3'][i % 4], confidence: (i * 7) % 10 / 10, title: `t${i % 5}`, anchor: { path: `src/f${i % 3}.ts`, startLine: i + 1, endLine: i + 5, symbolId: `s${i % 5}` } }));
  }
  await f.run('confirmNode', BOB, { ...f.pr(), nodeId: ids[0] });
  await f.append(`pr-${REPO}-7`, 'ReviewNodeConfirmed', { nodeId: ids[1], by: BOB.principal, role: 'member' }, BOB.principal);
  await f.run('dismissNode', CAROL, { ...f.pr(), nodeId: ids[2], reason: 'noise' });
  await f.run('resolveNode', CAROL, { ...f.pr(), nodeId: ids[3], reason: 'fixed' });
  await f.append(`pr-${REPO}-7`, 'ContractChangeDecided', { changeId: 'c-1', decision: 'approved', by: CAROL.principal, headSha: HEAD1 }, CAROL.principal);
  await f.run('recordCiSignal', ALICE, { ...f.pr(), name: 'build', status: 'completed', conclusion: 'success', headSha: HEAD1 });
  await f.run('finalizeReview', ALICE, { ...f.pr(), tokenAxes: { correctness: { status: 'pass' }, security: { status: 'warn', reason: 'r' }, testGap: { status: 'pass' } }, walkthrough: 'w' });
  await f.run('activateRules', OWNER, { document: { ...RULES_V1, rulesVersion: 'v1b', verdict: { ...RULES_V1.verdict, blockThreshold: 0.5 } } });
  await f.run('observeHead', ALICE, { ...f.pr(), headSha: HEAD2 });
  await f.request(7, HEAD2);
  await f.append(`pr-${REPO}-7`, 'VisualChangeApproved', { snapshotId: 's', approvalKey: headHash, by: CAROL.principal, headSha: HEAD2 }, CAROL.principal);
  for (let i = 0; i < 6; i++) await f.file(ALICE, { title: `t${i}`, priority: 'P1', anchor: { path: `src/f${i % 3}.ts`, startLine: 1, endLine: 2, symbolId: `s${i}` } });
});

const QUERIES: Array<[QueryDefinition, object]> = [
  [verdictQuery, { repoId: REPO, prNumber: 7 }],
  [nodeStatusQuery, { repoId: REPO, prNumber: 7, allRounds: true }],
  [reReviewDeltaQuery, { repoId: REPO, prNumber: 7 }],
  [reviewStatusQuery, { repoId: REPO, prNumber: 7 }],
  [reportingGroupsQuery, { repoId: REPO, prNumber: 7 }],
  [ciSignalsQuery, { repoId: REPO, prNumber: 7, headSha: HEAD1 }],
  [auditQuery, {}],
];

async function eventsOf(q: QueryDefinition, input: object): Promise<RecordedEvent[]> {
  const all = await f.events();
  const sources = q.sources(input);
  return all.filter((e) => (sources === 'all' || sources.includes(e.streamId)) && q.affects(input, e));
}

/** Runs `fn` with the clock and randomness trapped: a fold that reads either throws. */
function withoutClockOrRandomness<T>(fn: () => T): T {
  const RealDate = Date;
  const now = jest.spyOn(Date, 'now').mockImplementation(() => {
    throw new Error('a projection read the clock (Date.now)');
  });
  const random = jest.spyOn(Math, 'random').mockImplementation(() => {
    throw new Error('a projection read Math.random');
  });
  (globalThis as any).Date = class extends RealDate {
    constructor(...args: any[]) {
      if (args.length === 0) throw new Error('a projection read the clock (new Date())');
      super(...(args as [any]));
    }
  };
  try {
    return fn();
  } finally {
    (globalThis as any).Date = RealDate;
    now.mockRestore();
    random.mockRestore();
  }
}

describe('projections are deterministic (SPEC §2)', () => {
  test.each(QUERIES.map(([q, i]) => [q.name, q, i] as const))('%s: full log twice and from a mid-point snapshot give byte-identical JSON', async (_name, q, input) => {
    const events = await eventsOf(q, input);
    expect(events.length).toBeGreaterThan(2);
    const fold = await q.fold(input, f.ws);
    const full = () => withoutClockOrRandomness(() => canonicalJson(q.view(events.reduce((s, e) => fold.evolve(s, e), fold.initialState()), input)));
    const first = full();
    const second = full();
    expect(second).toBe(first);

    const mid = Math.floor(events.length / 2);
    const snapshot = withoutClockOrRandomness(() => canonicalJson(events.slice(0, mid).reduce((s, e) => fold.evolve(s, e), fold.initialState())));
    const resumed = withoutClockOrRandomness(() => canonicalJson(q.view(events.slice(mid).reduce((s, e) => fold.evolve(s, e), JSON.parse(snapshot)), input)));
    expect(resumed).toBe(first);

    // And the store-backed read agrees with the in-memory fold.
    const answered = await runQuery(q, f.ws, input);
    expect(canonicalJson(answered.value)).toBe(first);
  });

  test('the scenario exercised what it claims (sanity of the fixture)', async () => {
    const v = (await runQuery(verdictQuery, f.ws, { repoId: REPO, prNumber: 7 })).value as any;
    // Round 1's live P0s are carried into round 2 as outdated (unregistered repo: not checked) and block under v1b.
    expect(v).toMatchObject({ round: 2, rulesVersion: 'v1b', verdict: 'Block', state: 'provisional' });
    const round2 = (await runQuery(nodeStatusQuery, f.ws, { repoId: REPO, prNumber: 7 })).value as any;
    expect(round2.reReview.length).toBeGreaterThan(0);
    const n = (await runQuery(nodeStatusQuery, f.ws, { repoId: REPO, prNumber: 7, allRounds: true })).value as any;
    // n2 (forged self-confirmation) was never consensus; outdated into round 2, it was superseded by a re-filing.
    expect(n.nodes.find((x: any) => x.nodeId === 'n2')).toMatchObject({ status: 'superseded', consensus: false, outdatedConfirmedBy: ['agent:bob'] });
  });
});
