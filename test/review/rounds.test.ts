import { canonicalJson } from '../../src/events/canonical-json';
import { nodeStatusQuery } from '../../src/readmodels/queries/node-status';
import type { QueryDefinition } from '../../src/readmodels/queries/query';
import { reReviewDeltaQuery } from '../../src/readmodels/queries/re-review-delta';
import { foldForReplay, replayReviews } from '../../src/readmodels/queries/replay';
import { reviewStatusQuery } from '../../src/readmodels/queries/review-status';
import { runQuery } from '../../src/readmodels/queries/run-query';
import { verdictQuery } from '../../src/readmodels/queries/verdict';
import { evolvePr, initialPrState, NodeCore, PrState } from '../../src/review/pr-state';
import { RULES_V1 } from '../../src/rules/rules';
import { GitFixture } from '../support/git-fixture';
import { ALICE, BOB, CAROL, REPO, reviewFixture } from './support';

// Real git, real code graph (tree-sitter), real computes: slower than the in-memory review tests.
jest.setTimeout(120_000);

type Fixture = Awaited<ReturnType<typeof reviewFixture>>;
let f: Fixture;
let git: GitFixture;

const cart = (opts: { bug?: string; extra?: string; withTotal?: boolean } = {}) =>
  [
    '// cart',
    ...(opts.extra ? [opts.extra] : []),
    ...(opts.withTotal === false
      ? []
      : ['export function total(prices: number[]): number {', '  let sum = 0;', `  for (let i = 0; i <= prices.length; i++) sum += prices[i];${opts.bug ?? ''}`, '  return sum;', '}', '']),
    'export function count(prices: number[]): number {',
    '  return prices.length;',
    '}',
    '',
  ].join('\n');

const tokenAxes = { correctness: { status: 'pass' }, security: { status: 'pass' }, testGap: { status: 'pass' } };
const verdict = async () => (await runQuery(verdictQuery, f.ws, f.pr())).value as any;
const nodes = async () => (await runQuery(nodeStatusQuery, f.ws, f.pr())).value as any;
const delta = async () => (await runQuery(reReviewDeltaQuery, f.ws, f.pr())).value as any;
const nodeOf = async (id: string) => (await nodes()).nodes.find((n: any) => n.nodeId === id);
const finalize = () => f.run('finalizeReview', CAROL, { ...f.pr(), tokenAxes, walkthrough: 'w' });
const compute = (headSha: string) => f.run('computeReview', ALICE, { ...f.pr(), headSha });
const P1 = { kind: 'bug', priority: 'P1', triage: { category: 'correctness', severity: 'high', effort: 'small' }, confidence: 0.9, title: 'Off-by-one: reads past the end', body: 'i <= length', brief: 'engineer' };
const fileP1 = async (actor = ALICE, over: Record<string, unknown> = {}) =>
  (await f.run('addReviewNode', actor, { ...f.pr(), node: { ...P1, anchor: { path: 'src/cart.ts', startLine: 4, endLine: 4 }, ...over } })).response.result as { nodeId: string; fingerprint: string; joins?: string };

let base: string;
let head1: string;

/** Given: round 1 at head1, a P1 on the loop line of total() confirmed by a second principal, finalized → Hold. */
beforeEach(async () => {
  git = new GitFixture();
  f = await reviewFixture();
  await f.append(`repo-${REPO}`, 'RepoRegistered', { repoId: REPO, path: git.dir, forge: { kind: 'github', owner: 'acme', name: 'web-app', url: 'https://github.com/acme/web-app' } });
  git.write('README.md', 'shop\n');
  git.write('src/cart.ts', cart({ withTotal: false }));
  base = git.commit('base');
  git.write('src/cart.ts', cart());
  head1 = git.commit('add total()');
  await f.run('requestReview', ALICE, { ...f.pr(), baseSha: base, headSha: head1 });
  await compute(head1);
});
afterEach(async () => {
  await f.cleanup();
  git.cleanup();
});

async function confirmedP1AndFinalized() {
  const filed = await fileP1();
  await f.run('confirmNode', BOB, { ...f.pr(), nodeId: filed.nodeId });
  await finalize();
  expect(await verdict()).toMatchObject({ state: 'final', verdict: 'Hold', decidingNodeIds: [filed.nodeId] });
  return filed;
}

describe('(1) a push that does not touch the finding: carried, with its confirmation (SPEC §5, §7.1)', () => {
  test('given a confirmed P1 finalized as Hold, when a push edits another file and the new head is observed and computed, then the verdict is provisional Hold (never Ship) and the P1 is carried with its confirmation', async () => {
    const p1 = await confirmedP1AndFinalized();
    git.write('README.md', 'shop, now with docs\n');
    const head2 = git.commit('docs only');

    await f.run('observeHead', ALICE, { ...f.pr(), headSha: head2, source: 'webhook' });
    expect(await verdict()).toMatchObject({ state: 'provisional', verdict: 'Hold', stale: true, previous: { verdict: 'Hold', headSha: head1 } });

    const computed = await compute(head2);
    expect(computed.response.result).toMatchObject({ recorded: true, newRound: 2, carryOver: { carried: 1, outdated: 0, gone: 0 } });
    const v = await verdict();
    expect(v).toMatchObject({ round: 2, headSha: head2, state: 'provisional', verdict: 'Hold', findingsVerdict: 'Hold', decidingNodeIds: [p1.nodeId], previous: { verdict: 'Hold', headSha: head1 }, stale: false, previousStale: true });
    // One definition of stale (issue 38): the verdict's and the status's agree at every position.
    expect((await runQuery(reviewStatusQuery, f.ws, f.pr())).value).toMatchObject({ stale: false });
    expect(await nodeOf(p1.nodeId)).toMatchObject({ status: 'consensus-ready', confirmedBy: [BOB.principal], consensus: true, carry: { fate: 'carried', fromRound: 1 } });
    expect((await delta()).entries).toEqual([expect.objectContaining({ fingerprint: p1.fingerprint, state: 'carried', nodeIds: [p1.nodeId] })]);

    // The agent re-files the same finding: it joins the carried node, which keeps its confirmation.
    const again = await fileP1(ALICE);
    expect(again).toMatchObject({ fingerprint: p1.fingerprint, joins: p1.nodeId });
    expect(await nodeOf(p1.nodeId)).toMatchObject({ confirmedBy: [BOB.principal], consensus: true });
    expect(await nodeOf(again.nodeId)).toMatchObject({ duplicateOf: p1.nodeId, joins: p1.nodeId });
    expect((await delta()).entries).toEqual([expect.objectContaining({ state: 'carried', nodeIds: [p1.nodeId, again.nodeId] })]);

    // Until finalized the round stays provisional; finalized, Hold is final, and the consensus carried.
    const out = await finalize();
    expect(out.response.result).toMatchObject({ verdict: 'Hold', round: 2, consensusNodeIds: [p1.nodeId] });
    expect(await verdict()).toMatchObject({ state: 'final', verdict: 'Hold', stale: false, previous: null });
  });

  test('given the same, when the round starts by requestReview and the code above the finding grows, then the carried anchor follows the moved lines', async () => {
    const p1 = await confirmedP1AndFinalized();
    git.write('src/cart.ts', cart({ extra: '// a comment\n// and another' }));
    const head2 = git.commit('comments above');
    const out = await f.run('requestReview', ALICE, { ...f.pr(), baseSha: base, headSha: head2 });
    expect(out.response.result).toMatchObject({ newRound: true, round: 2, carryOver: { carried: 1, outdated: 0, gone: 0 } });
    const n = await nodeOf(p1.nodeId);
    expect(n).toMatchObject({ carry: { fate: 'carried' }, consensus: true, anchor: { path: 'src/cart.ts', startLine: 6, endLine: 6 } });
    expect(await verdict()).toMatchObject({ round: 2, state: 'provisional', verdict: 'Hold' });
  });
});

describe('(2) a push that edits the anchored lines: outdated, listed for re-review (SPEC §5)', () => {
  test('given a confirmed P1, when a push changes its line, then it is outdated, listed for re-review, still holds the verdict, and its confirmation no longer counts', async () => {
    const p1 = await confirmedP1AndFinalized();
    git.write('src/cart.ts', cart({ bug: ' // still wrong?' }));
    const head2 = git.commit('touch the loop');
    await f.run('requestReview', ALICE, { ...f.pr(), baseSha: base, headSha: head2 });

    const n = await nodes();
    expect(n.reReview).toEqual([p1.nodeId]);
    expect(n.nodes.find((x: any) => x.nodeId === p1.nodeId)).toMatchObject({ status: 'open', confirmedBy: [], consensus: false, outdatedConfirmedBy: [BOB.principal], carry: { fate: 'outdated', reason: 'the anchored lines 4-4 changed' } });
    const d = await delta();
    expect(d.reReview).toEqual([p1.nodeId]);
    expect(d.entries).toEqual([expect.objectContaining({ fingerprint: p1.fingerprint, state: 'outdated', nodeIds: [p1.nodeId], reason: 'the anchored lines 4-4 changed' })]);
    // An outdated P1 still holds the verdict until re-reviewed — even once the round is finalized.
    expect(await verdict()).toMatchObject({ verdict: 'Hold', findingsVerdict: 'Hold', decidingNodeIds: [p1.nodeId] });
    await f.run('computeReview', ALICE, { ...f.pr() });
    expect((await finalize()).response.result).toMatchObject({ verdict: 'Hold', consensusNodeIds: [] });
  });

  test('given an outdated P1, when a reviewer re-files it at P3, then the re-review supersedes it and decides (persisting)', async () => {
    const p1 = await confirmedP1AndFinalized();
    git.write('src/cart.ts', cart({ bug: ' // bounded by the caller' }));
    const head2 = git.commit('touch the loop');
    await f.run('requestReview', ALICE, { ...f.pr(), baseSha: base, headSha: head2 });
    const again = await fileP1(BOB, { priority: 'P3', brief: 'qa' });
    expect(again).toMatchObject({ fingerprint: p1.fingerprint, joins: p1.nodeId });
    expect(await nodeOf(p1.nodeId)).toMatchObject({ status: 'superseded', closed: { by: BOB.principal } });
    const d = await delta();
    expect(d.reReview).toEqual([]);
    expect(d.entries).toEqual([expect.objectContaining({ state: 'persisting', nodeIds: [p1.nodeId, again.nodeId] })]);
    expect(await verdict()).toMatchObject({ findingsVerdict: 'Ship', liveNodes: 1 });
    await expect(f.run('confirmNode', CAROL, { ...f.pr(), nodeId: p1.nodeId })).rejects.toMatchObject({ code: 'node_closed' });
  });
});

describe('(3) a push that deletes the function: gone (SPEC §5)', () => {
  test('given a confirmed P1 inside total(), when a push deletes total(), then the finding is gone and no longer holds; finalized, the round may ship', async () => {
    const p1 = await confirmedP1AndFinalized();
    git.write('src/cart.ts', cart({ withTotal: false, extra: '// total() moved to the server' }));
    const head2 = git.commit('drop total()');
    const out = await f.run('requestReview', ALICE, { ...f.pr(), baseSha: base, headSha: head2 });
    expect(out.response.result).toMatchObject({ carryOver: { carried: 0, outdated: 0, gone: 1 } });
    expect((await nodes()).nodes).toEqual([]);
    expect((await delta()).entries).toEqual([expect.objectContaining({ fingerprint: p1.fingerprint, state: 'gone', nodeIds: [p1.nodeId], reason: 'src/cart.ts#total was deleted' })]);
    expect(await verdict()).toMatchObject({ state: 'provisional', verdict: 'Hold', findingsVerdict: 'Ship', liveNodes: 0 });
    await f.run('computeReview', ALICE, { ...f.pr() });
    await finalize();
    expect(await verdict()).toMatchObject({ state: 'final', verdict: 'Ship' });
  });
});

describe('(4) every SHA resolved to the full commit (SPEC §10)', () => {
  test('given round 1 requested with abbreviated SHAs, when it is computed and requested again with the full ones, then there is one round', async () => {
    // A fresh PR requested with 7-digit ids.
    const pr8 = { repoId: REPO, prNumber: 8 };
    const out = await f.run('requestReview', ALICE, { ...pr8, baseSha: base.slice(0, 7), headSha: head1.slice(0, 7) });
    expect(out.response.result).toMatchObject({ started: true });
    const requested = (await f.events()).find((e) => e.type === 'ReviewRequested' && e.streamId === `pr-${REPO}-8`)!;
    expect(requested.data).toMatchObject({ baseSha: base, headSha: head1 });
    await f.run('computeReview', ALICE, { ...pr8, headSha: head1.slice(0, 9) });
    expect((await f.run('requestReview', BOB, { ...pr8, baseSha: base, headSha: head1 })).response.result).toEqual({ started: false, newRound: false });
    await f.run('addReviewNode', ALICE, { ...pr8, headSha: head1.slice(0, 8), node: { ...P1, anchor: { path: 'src/cart.ts', startLine: 4, endLine: 4 } } });
    expect((await runQuery(reviewStatusQuery, f.ws, pr8)).value).toMatchObject({ round: 1, reviewedHead: head1 });
  });

  test('refused: an unknown commit at requestReview, naming the field; nothing is written', async () => {
    const before = await f.count();
    await expect(f.run('requestReview', ALICE, { repoId: REPO, prNumber: 9, baseSha: base, headSha: 'deadbeef' })).rejects.toMatchObject({ code: 'unknown_commit', message: expect.stringMatching(/^headSha: "deadbeef"/) });
    await expect(f.run('requestReview', ALICE, { repoId: REPO, prNumber: 9, baseSha: 'f'.repeat(40), headSha: head1 })).rejects.toMatchObject({ code: 'unknown_commit', message: expect.stringMatching(/^baseSha:/) });
    expect(await f.count()).toBe(before);
  });

  test('observeHead resolves an abbreviated head; a full head not fetched yet is taken as given', async () => {
    await f.run('observeHead', ALICE, { ...f.pr(), headSha: head1.slice(0, 10) });
    expect((await runQuery(reviewStatusQuery, f.ws, f.pr())).value).toMatchObject({ observedHead: head1, stale: false });
    await expect(f.run('observeHead', ALICE, { ...f.pr(), headSha: 'deadbeef' })).rejects.toMatchObject({ code: 'unknown_commit' });
    await f.run('observeHead', ALICE, { ...f.pr(), headSha: 'a'.repeat(40) });
    expect((await runQuery(reviewStatusQuery, f.ws, f.pr())).value).toMatchObject({ observedHead: 'a'.repeat(40), stale: true });
  });
});

describe('(4b) heads tracked by ancestry (issue 38)', () => {
  const status = async () => (await runQuery(reviewStatusQuery, f.ws, f.pr())).value as any;

  test('given head2 observed, when a descendant head3 is computed and finalized, then neither the status nor the verdict is stale, and the verdict is final', async () => {
    git.write('README.md', 'two\n');
    const head2 = git.commit('two');
    git.write('README.md', 'three\n');
    const head3 = git.commit('three');
    await f.run('observeHead', ALICE, { ...f.pr(), headSha: head2, source: 'webhook' });
    expect(await status()).toMatchObject({ stale: true, observedHead: head2 });

    await compute(head3);
    expect(await status()).toMatchObject({ stale: false, observedHead: head3 });
    expect(await verdict()).toMatchObject({ round: 2, headSha: head3, stale: false, latestHead: head3 });
    await finalize();
    expect(await verdict()).toMatchObject({ state: 'final', stale: false, provisionalReason: null });
  });

  test('given head2 observed, when a review is requested again at its descendant head3, then the status is not stale', async () => {
    git.write('README.md', 'two\n');
    const head2 = git.commit('two');
    git.write('README.md', 'three\n');
    const head3 = git.commit('three');
    await f.run('observeHead', ALICE, { ...f.pr(), headSha: head2, source: 'webhook' });
    await f.run('requestReview', ALICE, { ...f.pr(), baseSha: base, headSha: head3 });
    expect(await status()).toMatchObject({ stale: false, observedHead: head3, reviewedHead: head3 });
  });

  test('given an observed head that is not an ancestor (a force-push), when another head is computed, then the review stays stale', async () => {
    git.write('README.md', 'two\n');
    const head2 = git.commit('two');
    git.git('reset', '--hard', head1);
    git.write('README.md', 'other\n');
    const other = git.commit('rewritten');
    await f.run('observeHead', ALICE, { ...f.pr(), headSha: head2, source: 'webhook' });
    await compute(other);
    expect(await status()).toMatchObject({ stale: true, observedHead: head2 });
  });

  test('given a newer head observed, when compute runs without SHAs, then it computes the observed head and says so; run again, it names the head it found unchanged', async () => {
    git.write('README.md', 'two\n');
    const head2 = git.commit('two');
    await f.run('observeHead', ALICE, { ...f.pr(), headSha: head2, source: 'webhook' });
    const first = await f.run('computeReview', ALICE, f.pr());
    expect(first.response.result).toMatchObject({ recorded: true, headSha: head2 });
    expect(await status()).toMatchObject({ stale: false });
    const again = await f.run('computeReview', ALICE, f.pr());
    expect(again.response.result).toEqual({ recorded: false, headSha: head2, baseSha: base, reason: `identical inputs: the latest computation of ${head2.slice(0, 12)} stands` });
  });
});

describe('(5) determinism of the carry-over (SPEC §2, §7.4)', () => {
  test('given three rounds (carried, outdated, gone, a joined re-filing), then a full replay of the log, a resumed fold and `replay --rules` give byte-identical state', async () => {
    const p1 = await confirmedP1AndFinalized();
    await f.run('addReviewNode', BOB, { ...f.pr(), node: { ...P1, brief: 'qa', title: 'count() ignores holes', priority: 'P2', anchor: { path: 'src/cart.ts', startLine: 8, endLine: 8 } } });
    git.write('README.md', 'docs\n');
    const head2 = git.commit('docs');
    await f.run('observeHead', ALICE, { ...f.pr(), headSha: head2 });
    await compute(head2);
    await fileP1(ALICE);
    git.write('src/cart.ts', cart({ bug: ' // hmm' }));
    const head3 = git.commit('edit loop');
    await f.run('requestReview', ALICE, { ...f.pr(), baseSha: base, headSha: head3 });
    const n = await nodes();
    expect(n.nodes.map((x: any) => [x.nodeId, x.carry?.fate ?? null])).toEqual([
      [p1.nodeId, 'outdated'],
      ['n2', 'carried'],
      ['n3', 'outdated'],
    ]);

    const all = await f.events();
    const queries: Array<[QueryDefinition, object]> = [
      [verdictQuery, f.pr()],
      [nodeStatusQuery, { ...f.pr(), allRounds: true }],
      [nodeStatusQuery, f.pr()],
      [reReviewDeltaQuery, f.pr()],
      [reReviewDeltaQuery, { ...f.pr(), round: 2 }],
    ];
    for (const [q, input] of queries) {
      const events = all.filter((e) => (q.sources(input as any) as string[]).includes(e.streamId) && q.affects(input as any, e));
      const fold = await q.fold(input as any, f.ws);
      const full = () => canonicalJson(q.view(events.reduce((s, e) => fold.evolve(s, e), fold.initialState()), input as any));
      const first = full();
      expect(full()).toBe(first);
      const mid = Math.floor(events.length / 2);
      const snapshot = canonicalJson(events.slice(0, mid).reduce((s, e) => fold.evolve(s, e), fold.initialState()));
      expect(canonicalJson(q.view(events.slice(mid).reduce((s, e) => fold.evolve(s, e), JSON.parse(snapshot)), input as any))).toBe(first);
      expect(canonicalJson((await runQuery(q, f.ws, input as any)).value)).toBe(first);
    }

    // `replay --rules` folds the log its own way: the same PR state, carried/outdated included.
    const replayed = new Map<string, PrState<NodeCore>>();
    for (const e of all) foldForReplay(replayed, e, {}, () => undefined);
    const lean = all.filter((e) => e.streamId === `pr-${REPO}-7`).reduce((s, e) => evolvePr(s, e, true), initialPrState<NodeCore>());
    const state = replayed.get(`pr-${REPO}-7`)!;
    expect(canonicalJson(state)).toBe(canonicalJson(lean));
    expect(Object.keys(state.rounds[2].carry!.entries)).toEqual([p1.nodeId, 'n2', 'n3']);
    const rows = await replayReviews(f.ws, RULES_V1);
    expect(canonicalJson(rows)).toBe(canonicalJson(await replayReviews(f.ws, RULES_V1)));
    expect(rows).toEqual([expect.objectContaining({ prNumber: 7, old: expect.objectContaining({ verdict: 'Hold' }), changed: false })]);
  });
});
