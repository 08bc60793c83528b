import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Ajv from 'ajv';
import { loadConfig } from '../../src/config';
import { newUuidV7 } from '../../src/events/ids';
import { collect } from '../../src/events/store/port';
import { Ledger } from '../../src/ledger';
import { runQuery } from '../../src/readmodels/queries/run-query';
import { GITHUB_SERVICE, OctokitGitHub } from '../../src/publish/github-client';
import { startServer, type RunningServer } from '../../src/server/bootstrap';
import { STATUS_SYNC_SERVICE } from '../../src/status-check/status-check.module';
import { STATUS_CHECK_OPTIONS_SERVICE, verdictStatusQuery, type VerdictStatusSync } from '../../src/status-check/sync';
import { GitFixture } from '../support/git-fixture';
import { closeSharedExtractPool } from '../../src/codegraph/extract-pool';
import { closeSharedDiffPools } from '../../src/axes/visual/pool';
import { createCommitStatusOperationId, createCommitStatusRequestSchema, FakeGitHub } from '../publish/fake-github';
import { githubFiles } from '../publish/support';
import { LedgerServices } from '../../src/slots';

/**
 * The verdict as a GitHub commit status (SPEC §14), end to end: a real server whose sync follows the
 * store, a real git repository, and the local GitHub stand-in validating every status body with the
 * `repos/create-commit-status` request schema of @octokit/openapi.
 */
const WS = 'acme';
const REPO = 'shop';
const PR = 3;
const CONTEXT = 'review-ledger/verdict';
/** Where the operator serves the ledger (stable across restarts, unlike the test's port 0). */
const PUBLIC_URL = 'https://review.example.test';
const TOKEN = 'ghp_status_test_token_0123456789';
const OWNER = { principal: 'user:owner' as const, role: 'owner' as const };
const ADMIN = { principal: 'user:ada' as const, role: 'admin' as const };
const AGENT = { principal: 'agent:rev' as const, role: 'member' as const };
const HUMAN = { principal: 'user:hugo' as const, role: 'member' as const };
type Actor = { principal: `user:${string}` | `agent:${string}`; role: 'owner' | 'admin' | 'member' };

describe('the verdict as a GitHub commit status', () => {
  let github: FakeGitHub;
  let repo: GitFixture;
  let dataDir: string;
  let base: string;
  let head: string;
  let server: RunningServer | null = null;
  const sleeps: number[] = [];

  const services = () =>
    new LedgerServices()
      .set(GITHUB_SERVICE, () => new OctokitGitHub({ baseUrl: github.baseUrl, auth: { kind: 'token', token: TOKEN } }))
      .set(STATUS_CHECK_OPTIONS_SERVICE, { debounceMs: 5, publicUrl: PUBLIC_URL, sleep: async (ms: number) => void sleeps.push(ms) });
  const start = async () => {
    server = await startServer({ port: 0 }, new Ledger(loadConfig({ dataDir }, {}), { services: services() }));
    return server;
  };
  const stop = async () => {
    await server?.close();
    server = null;
  };
  const ledger = () => server!.ledger;
  const sync = () => ledger().services.get(STATUS_SYNC_SERVICE) as VerdictStatusSync;
  const run = (command: string, actor: Actor, payload: Record<string, unknown>) => ledger().run(command, WS, { ...actor, idempotencyKey: newUuidV7() }, payload);
  const onPr = (command: string, actor: Actor, payload: Record<string, unknown> = {}) => run(command, actor, { repoId: REPO, prNumber: PR, ...payload });
  const file = async (priority: string, confidence: number, title: string) =>
    ((await onPr('addReviewNode', AGENT, { node: { kind: 'bug', priority, triage: { category: 'correctness', severity: 'high', effort: 'small' }, confidence, title, body: 'details', brief: 'engineer' } })).response.result as { nodeId: string }).nodeId;
  const finalize = () => onPr('finalizeReview', AGENT, { walkthrough: 'walkthrough', tokenAxes: { correctness: { status: 'pass' }, security: { status: 'pass' }, testGap: { status: 'pass' } } });
  const settle = () => sync().settled();
  const latest = (sha: string) => github.latestStatus(sha, CONTEXT);
  const statusEvents = async (type: string) => (await collect((await ledger().workspace(WS)).store.readStream(`status-${REPO}-${PR}`))).filter((e) => e.type === type);
  const pageLink = () => `${PUBLIC_URL}/workspaces/${WS}/repos/${REPO}/prs/${PR}`;

  beforeEach(async () => {
    sleeps.length = 0;
    github = new FakeGitHub();
    github.tokens.set(TOKEN, 'review-ledger[bot]');
    await github.start();
    repo = new GitFixture('rl-status-');
    repo.git('remote', 'add', 'origin', 'https://github.com/acme/shop.git');
    repo.write('src/price.ts', 'export function price(q: number, u: number): number {\n  return q * u;\n}\n');
    base = repo.commit('base');
    repo.write('src/price.ts', 'export function price(q: number, u: number): number {\n  return Math.round(q * u * 100) / 100;\n}\n');
    head = repo.commit('head');
    github.addPull({ number: PR, author: 'octocat', headSha: head, baseSha: base, files: githubFiles(repo, base, head) });
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-status-data-'));
    await start();
    await ledger().createWorkspace({ ...OWNER, idempotencyKey: newUuidV7() }, { workspaceId: WS });
    for (const a of [ADMIN, AGENT, HUMAN]) await run('addMember', OWNER, { principal: a.principal, role: a.role });
    await run('registerRepo', OWNER, { repoId: REPO, path: repo.dir });
    await onPr('requestReview', AGENT, { baseSha: base, headSha: head });
    await onPr('computeReview', AGENT);
  });

  afterAll(async () => {
    await closeSharedDiffPools();
    await closeSharedExtractPool();
  });

  afterEach(async () => {
    await stop();
    await github.stop();
    repo.cleanup();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('is off by default: a finalized review posts nothing until an admin opts the repo in; members cannot', async () => {
    await file('P3', 0.6, 'nit');
    await finalize();
    await settle();
    expect(github.statusPosts()).toHaveLength(0);
    await expect(run('setVerdictStatusCheck', AGENT, { repoId: REPO, enabled: true })).rejects.toMatchObject({ code: 'forbidden' });
    await expect(run('setVerdictStatusCheck', ADMIN, { repoId: 'nope', enabled: true })).rejects.toMatchObject({ code: 'repo_not_found' });
    await settle();
    expect(github.statusPosts()).toHaveLength(0);

    await run('setVerdictStatusCheck', ADMIN, { repoId: REPO, enabled: true });
    await settle();
    expect(latest(head)).toMatchObject({ state: 'success', target_url: pageLink() });
    // Opting out stops the sync: a later verdict change posts nothing.
    await run('setVerdictStatusCheck', ADMIN, { repoId: REPO, enabled: false });
    await file('P0', 0.9, 'a crash');
    await settle();
    expect(github.statusPosts()).toHaveLength(1);
  });

  it('provisional → pending, Ship → success, Hold → failure, Block → failure, each with the deciding reason and the Review page link', async () => {
    await run('setVerdictStatusCheck', ADMIN, { repoId: REPO, enabled: true });
    await settle();
    // An open round with no findings is provisional: pending, never success.
    expect(latest(head)).toMatchObject({ state: 'pending', context: CONTEXT, target_url: pageLink() });
    expect(latest(head)!.description).toMatch(/^provisional Hold: round 1 at [0-9a-f]+ is not finalized yet/);

    await file('P3', 0.6, 'rename');
    await finalize();
    await settle();
    expect(latest(head)!.state).toBe('success');
    expect(latest(head)!.description).toMatch(/^Ship \(confidence 0\.6\): Ship from findings/);

    // A finding filed after the finalization makes the round provisional again: pending until re-finalized.
    const hold = await file('P1', 0.8, 'rounding loses cents');
    await settle();
    expect(latest(head)!.state).toBe('pending');
    expect(latest(head)!.description).toMatch(/^provisional Hold: round 1 changed after it was finalized/);
    await finalize();
    await settle();
    expect(latest(head)!.state).toBe('failure');
    expect(latest(head)!.description).toMatch(new RegExp(`^Hold \\(confidence [0-9.]+\\): Hold from findings: ${hold}`));

    const block = await file('P0', 0.95, 'price of 0 crashes');
    await finalize();
    await settle();
    expect(latest(head)!.state).toBe('failure');
    expect(latest(head)!.description).toMatch(new RegExp(`^Block \\(confidence [0-9.]+\\): Block from findings: ${block}`));

    await onPr('dismissNode', HUMAN, { nodeId: block, reason: 'not reachable' });
    await onPr('dismissNode', HUMAN, { nodeId: hold, reason: 'intended' });
    await finalize();
    await settle();
    expect(latest(head)!.state).toBe('success');

    // Every body GitHub received is valid under its own schema, and no description exceeds 140 characters.
    const validate = new Ajv({ strict: false }).compile(createCommitStatusRequestSchema);
    expect(createCommitStatusOperationId).toBe('repos/create-commit-status');
    const posts = github.statusPosts();
    const states = posts.map((p) => p.body.state);
    // Intermediate pendings may be posted or coalesced; the final states arrive in order.
    const decided = states.filter((x) => x !== 'pending');
    // (Dismissing the Block leaves a final Hold for a moment: it may be posted before the Hold is dismissed too.)
    expect(decided.slice(0, 3)).toEqual(['success', 'failure', 'failure']);
    expect(decided[decided.length - 1]).toBe('success');
    expect(states[0]).toBe('pending');
    for (const p of posts) {
      expect(validate(p.body)).toBe(true);
      expect(p.status).toBe(201);
      expect(p.body.description.length).toBeLessThanOrEqual(140);
      expect(p.path).toBe(`/repos/acme/shop/statuses/${head}`);
    }
    const recorded = await statusEvents('VerdictStatusPosted');
    expect(recorded.map((e) => (e.data as any).state)).toEqual(states);
    expect(recorded.every((e) => e.metadata.principal === 'system:verdict-status')).toBe(true);
  });

  it('never re-posts an unchanged state: not for events that leave the verdict alone, not after a restart', async () => {
    await run('setVerdictStatusCheck', ADMIN, { repoId: REPO, enabled: true });
    await file('P1', 0.8, 'rounding loses cents');
    await finalize();
    await settle();
    const posted = github.statusPosts().length;
    expect(latest(head)!.state).toBe('failure');

    // Events on the review that do not change what the status says: a CI signal, a cohort summary.
    await onPr('recordCiSignal', AGENT, { name: 'build', status: 'completed', conclusion: 'success', headSha: head });
    const [cohort] = ((await onPr('computeReview', AGENT, { headSha: head })).response.result as any).cohorts ?? [];
    if (cohort) await onPr('setCohortSummary', AGENT, { cohortKey: cohort.key, markdown: 'rounding' });
    await settle();
    expect(github.statusPosts().length).toBe(posted);

    await stop();
    await start();
    await settle();
    expect(github.statusPosts().length).toBe(posted);
    // Not even asked: the record says GitHub already shows this state.
    expect(github.log.filter((r) => r.method === 'GET' && r.path.includes('/statuses'))).toHaveLength(posted);
  });

  it('a restart re-syncs what changed while it was down, and finds on GitHub a status a dead process posted before recording it', async () => {
    await run('setVerdictStatusCheck', ADMIN, { repoId: REPO, enabled: true });
    await file('P3', 0.6, 'rename');
    await finalize();
    await settle();
    expect(latest(head)!.state).toBe('success');
    await stop();

    // While the server is down, a finding lands (another process on the same store).
    const offline = new Ledger(loadConfig({ dataDir }, {}));
    const late = await offline.run('addReviewNode', WS, { ...AGENT, idempotencyKey: newUuidV7() }, { repoId: REPO, prNumber: PR, node: { kind: 'bug', priority: 'P1', triage: { category: 'correctness', severity: 'high', effort: 'small' }, confidence: 0.8, title: 'late finding', body: 'b', brief: 'engineer' } });
    const lateId = (late.response.result as { nodeId: string }).nodeId;
    // …and an earlier server had already posted its status, then died before recording it.
    const intent = (await runQuery(verdictStatusQuery, await offline.workspace(WS), { repoId: REPO, prNumber: PR })).value!;
    await offline.close();
    expect(intent.state).toBe('pending');
    const before = github.statusPosts().length;
    github.statuses.get(head)!.push({ id: 99, state: intent.state, context: CONTEXT, description: intent.description, target_url: pageLink(), creator: 'review-ledger[bot]' });

    await start();
    await settle();
    expect(github.statusPosts().length).toBe(before);
    const recorded = await statusEvents('VerdictStatusPosted');
    expect(recorded[recorded.length - 1].data).toMatchObject({ state: 'pending', foundOnGitHub: true, githubStatusId: 99 });

    // A change after the restart is posted.
    await onPr('dismissNode', HUMAN, { nodeId: lateId, reason: 'fixed' });
    await finalize();
    await settle();
    expect(latest(head)!.state).toBe('success');
    expect(github.statusPosts().length).toBe(before + 1);
  });

  it('waits out 403 and 429 rate limits (retry-after), and records a failure when the wait is too long', async () => {
    github.statusRateLimits = [
      { status: 403, retryAfter: 2 },
      { status: 429, retryAfter: 1 },
    ];
    await run('setVerdictStatusCheck', ADMIN, { repoId: REPO, enabled: true });
    await settle();
    expect(github.statusPosts().map((p) => p.status)).toEqual([403, 429, 201]);
    expect(sleeps).toEqual([2000, 1000]);
    expect(latest(head)!.state).toBe('pending');
    expect(github.statuses.get(head)).toHaveLength(1);

    await file('P3', 0.6, 'rename');
    await settle();
    github.statusRateLimits = [{ status: 429, retryAfter: 3600 }];
    await finalize();
    await settle();
    expect(latest(head)!.state).toBe('pending');
    const [failed] = await statusEvents('VerdictStatusFailed');
    expect(failed.data).toMatchObject({ state: 'success', githubStatus: 429 });
    // The next change tries again.
    await file('P1', 0.8, 'rounding');
    await finalize();
    await settle();
    expect(latest(head)!.state).toBe('failure');
  });

  it('a head that moves while posting gets pending (nobody reviewed it); reviewing it moves the status there', async () => {
    await run('setVerdictStatusCheck', ADMIN, { repoId: REPO, enabled: true });
    await file('P1', 0.8, 'rounding loses cents');
    repo.write('src/price.ts', 'export function price(q: number, u: number): number {\n  return Math.round(q * u * 100) / 100 || 0;\n}\n');
    const next = repo.commit('next');
    let moved = false;
    github.afterStatusCreated = () => {
      if (moved) return;
      moved = true;
      github.pushHead(PR, next, githubFiles(repo, base, next));
    };
    await finalize();
    await settle();
    expect(latest(head)!.state).toBe('failure');
    expect(latest(next)).toMatchObject({ state: 'pending', target_url: pageLink() });
    expect(latest(next)!.description).toBe(`head ${next.slice(0, 7)} not reviewed yet (review of ${head.slice(0, 7)}: Hold)`);
    const posts = github.statusPosts().length;

    // The webhook tells the ledger: its own intent for the new head is the same pending — not re-posted.
    await onPr('observeHead', AGENT, { headSha: next });
    await settle();
    expect(github.statusPosts().length).toBe(posts);

    // A review of the new head moves the verdict there (the unanchored P1 is carried over: Hold); the
    // old head keeps its last status.
    await onPr('requestReview', AGENT, { baseSha: base, headSha: next });
    await onPr('computeReview', AGENT);
    await finalize();
    await settle();
    expect(latest(next)!.state).toBe('failure');
    expect(latest(next)!.description).toMatch(/^Hold /);
    expect(latest(head)!.state).toBe('failure');
  });
});
