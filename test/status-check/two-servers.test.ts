import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadConfig } from '../../src/config';
import { newUuidV7 } from '../../src/events/ids';
import { Ledger } from '../../src/ledger';
import { GITHUB_SERVICE, OctokitGitHub } from '../../src/publish/github-client';
import { startServer, type RunningServer } from '../../src/server/bootstrap';
import { STATUS_SYNC_SERVICE } from '../../src/status-check/status-check.module';
import { STATUS_CHECK_OPTIONS_SERVICE, type VerdictStatusSync } from '../../src/status-check/sync';
import { closeSharedExtractPool } from '../../src/codegraph/extract-pool';
import { closeSharedDiffPools } from '../../src/axes/visual/pool';
import { LedgerServices } from '../../src/slots';
import { GitFixture } from '../support/git-fixture';
import { FakeGitHub } from '../publish/fake-github';
import { githubFiles } from '../publish/support';
import { whenPostgres, ownDatabase } from '../scale/pg-support';

/**
 * Every server on one PostgreSQL store follows every verdict, and each posted the commit status it asked
 * for: both looked at the record and at GitHub, found nothing, and posted — each status twice, each
 * recorded twice. The look and the post now run in the store's exclusive section (EventStore.exclusive).
 */
const WS = 'acme';
const REPO = 'shop';
const PR = 3;
const TOKEN = 'ghp_status_two_servers_0123456789';
const OWNER = { principal: 'user:owner' as const, role: 'owner' as const };
const AGENT = { principal: 'agent:rev' as const, role: 'member' as const };

whenPostgres('the verdict status from two servers on one store', () => {
  const db = ownDatabase('stat2');
  const url = db.url;
  beforeAll(() => db.create());
  afterAll(async () => {
    await closeSharedDiffPools();
    await closeSharedExtractPool();
    await db.drop();
  });

  test('each status is posted once, whichever server follows the verdict first', async () => {
    const github = new FakeGitHub();
    github.tokens.set(TOKEN, 'review-ledger[bot]');
    await github.start();
    const repo = new GitFixture('rl-status2-');
    const dirs = [0, 1].map(() => fs.mkdtempSync(path.join(os.tmpdir(), 'rl-status2-data-')));
    const servers: RunningServer[] = [];
    try {
      repo.git('remote', 'add', 'origin', 'https://github.com/acme/shop.git');
      repo.write('src/price.ts', 'export function price(q: number, u: number): number {\n  return q * u;\n}\n');
      const base = repo.commit('base');
      repo.write('src/price.ts', 'export function price(q: number, u: number): number {\n  return Math.round(q * u * 100) / 100;\n}\n');
      const head = repo.commit('head');
      github.addPull({ number: PR, author: 'octocat', headSha: head, baseSha: base, files: githubFiles(repo, base, head) });
      for (const dataDir of dirs) {
        const services = new LedgerServices()
          .set(GITHUB_SERVICE, () => new OctokitGitHub({ baseUrl: github.baseUrl, auth: { kind: 'token', token: TOKEN } }))
          .set(STATUS_CHECK_OPTIONS_SERVICE, { debounceMs: 5, publicUrl: 'https://review.example.test', sleep: async () => undefined });
        servers.push(await startServer({ port: 0 }, new Ledger(loadConfig({ dataDir, store: 'postgres', databaseUrl: url }, {}), { services })));
      }
      const [a, b] = servers;
      const run = (command: string, actor: typeof OWNER | typeof AGENT, payload: Record<string, unknown>) => a.ledger.run(command, WS, { ...actor, idempotencyKey: newUuidV7() }, payload);
      await a.ledger.createWorkspace({ ...OWNER, idempotencyKey: newUuidV7() }, { workspaceId: WS });
      await run('addMember', OWNER, { principal: AGENT.principal, role: AGENT.role });
      await run('registerRepo', OWNER, { repoId: REPO, path: repo.dir });
      await run('requestReview', AGENT, { repoId: REPO, prNumber: PR, baseSha: base, headSha: head });
      await run('computeReview', AGENT, { repoId: REPO, prNumber: PR });
      // A slow GitHub: without the exclusive section both servers look before either posts.
      github.statusListingDelayMs = 300;
      await run('setVerdictStatusCheck', OWNER, { repoId: REPO, enabled: true });
      const settled = async () => {
        for (const s of servers) await (s.ledger.services.get(STATUS_SYNC_SERVICE) as VerdictStatusSync).settled();
      };
      await settled();
      await run('addReviewNode', AGENT, { repoId: REPO, prNumber: PR, node: { kind: 'bug', priority: 'P3', triage: { category: 'correctness', severity: 'low', effort: 'small' }, confidence: 0.6, title: 'rename', body: 'details', brief: 'engineer' } });
      await run('finalizeReview', AGENT, { repoId: REPO, prNumber: PR, walkthrough: 'walkthrough', tokenAxes: { correctness: { status: 'pass' }, security: { status: 'pass' }, testGap: { status: 'pass' } } });
      await settled();
      expect(github.latestStatus(head, 'review-ledger/verdict')).toMatchObject({ state: 'success' });
      const posts = github.statusPosts().map((p) => `${p.path} ${p.body.state} ${p.body.description}`);
      expect(posts.length).toBeGreaterThan(0);
      expect(posts).toEqual([...new Set(posts)]);
    } finally {
      for (const s of servers) await s.close().catch(() => undefined);
      await github.stop();
      repo.cleanup();
      for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
    }
  }, 180_000);
});
