import * as fs from 'node:fs';
import * as path from 'node:path';
import { buildDemoRepo, DemoRepo } from './repo';
import { RpcClient, RpcError } from './rpc-client';

/**
 * `review-ledger demo`: a real review of a real pull request, driven through the server's public
 * JSON-RPC exactly as a review UI, a human and two agent harnesses would drive it. Nothing is canned:
 * the repository is built with git, indexed with web-tree-sitter, computed (cohorts, blast radius,
 * contract diff, pixel diff), reviewed and finalized by commands, and the Review page shows the
 * projections of what those commands recorded.
 *
 * It needs an owner token of some workspace on that server (the first-start token in
 * `<dataDir>/owner-token`); everything else — the demo workspace, its members and their tokens — it
 * provisions itself, members first, each token for an existing member and never above its role.
 */
export interface DemoOptions {
  /** The server, e.g. http://127.0.0.1:3000. */
  url: string;
  /** The server's data dir: where the owner token is read and the demo's own files are kept. */
  dataDir: string;
  ownerToken: string;
  /**
   * The server's repo root: repos registered over RPC must live under `<repoRoot>/<workspaceId>/`
   * (default `<dataDir>/repos`, the server's own default).
   */
  repoRoot?: string;
  /** Workspace to create (or reuse, when its owner token from an earlier demo is on file). */
  workspaceId?: string;
  log?: (line: string) => void;
}

export interface DemoResult {
  workspaceId: string;
  repoId: string;
  prNumber: number;
  repoDir: string;
  baseSha: string;
  headSha: string;
  /** The Review page, without credentials. */
  pageUrl: string;
  /** The page with the sign-in fragment for the demo's human (`#token=…`: never sent to the server). */
  signInUrl: string;
  /** Who that link signs in as. */
  signInPrincipal: string;
  verdict: { verdict: string; confidence: number; reasons: string[] };
  cohorts: number;
  findings: number;
  /** Tokens the demo minted, by principal (so a reader can replay the tutorial against this review). */
  tokens: Record<string, string>;
}

export const DEMO_WORKSPACE = 'demo';
const DEMO_OWNER_FILE = 'demo-owner-token';

/** The cast: two humans and two reviewer agents, each provisioned as a member before its token exists. */
export const DEMO_CAST = {
  you: 'user:demo-you',
  alice: 'user:demo-alice',
  engineer: 'agent:demo-engineer',
  qa: 'agent:demo-qa',
} as const;

export async function runDemo(opts: DemoOptions): Promise<DemoResult> {
  const log = opts.log ?? (() => undefined);
  const root = new RpcClient(opts.url, workspaceOfToken(opts.ownerToken), opts.ownerToken);

  const ws = await demoWorkspace(root, opts.dataDir, opts.workspaceId ?? DEMO_WORKSPACE, log);
  const owner = root.as(ws.token, ws.workspaceId);

  const tokens: Record<string, string> = {};
  for (const principal of Object.values(DEMO_CAST)) {
    try {
      await owner.command('addMember', { principal, role: 'member' });
    } catch (err) {
      // A second demo in the same workspace: the cast is already provisioned.
      if (!(err instanceof RpcError && err.code === 'member_exists')) throw err;
    }
    tokens[principal] = (await owner.command<{ token: string }>('issueToken', { principal, role: 'member', label: 'review-ledger demo' })).token;
  }
  const as = (p: string) => owner.as(tokens[p]);
  const engineer = as(DEMO_CAST.engineer);
  const qa = as(DEMO_CAST.qa);
  const alice = as(DEMO_CAST.alice);
  log(`workspace "${ws.workspaceId}": members ${Object.values(DEMO_CAST).join(', ')}`);

  const repoId = `shop-${Date.now().toString(36)}`;
  const workspaceRepos = path.join(opts.repoRoot ?? path.join(opts.dataDir, 'repos'), ws.workspaceId);
  fs.mkdirSync(workspaceRepos, { recursive: true, mode: 0o700 });
  const repo: DemoRepo = buildDemoRepo(path.join(workspaceRepos, repoId));
  log(`built a git repository at ${repo.dir}: main ${repo.baseSha.slice(0, 8)} → feature/discount ${repo.headSha.slice(0, 8)} (2 commits)`);
  await owner.command('registerRepo', { repoId, path: repo.dir });
  for (const commit of [repo.baseSha, repo.headSha]) await engineer.command('indexCode', { repoId, commit });
  log(`registered and indexed ${repoId} at both commits`);

  const target = { repoId, prNumber: 1 };
  await engineer.command('requestReview', { ...target, baseSha: repo.baseSha, headSha: repo.headSha });
  const computed = await engineer.command<{ cohorts: Array<{ key: string; title: string; files: string[] }> }>('computeReview', target);
  log(`computed the review: ${computed.cohorts.length} cohort(s)`);

  const triage = (category: string, severity: string) => ({ category, severity, effort: 'small' });
  const bug = await engineer.command<{ nodeId: string }>('addReviewNode', {
    ...target,
    node: {
      kind: 'bug',
      priority: 'P1',
      triage: triage('correctness', 'high'),
      anchor: { path: 'src/cart.ts', startLine: 3, endLine: 7 },
      confidence: 0.85,
      reasoning: 'total() subtracts the discount after summing, with no lower bound.',
      title: 'A discount larger than the cart makes the total negative',
      body: '`total([[1, 5]], 10)` returns -5. Clamp at zero, or refuse a discount above the subtotal.',
      fix: { replacementLines: ['  return Math.max(0, sum - discount);'] },
      brief: 'engineer',
    },
  });
  await qa.command('addReviewNode', {
    ...target,
    node: {
      kind: 'suggestion',
      priority: 'P2',
      triage: triage('testing', 'medium'),
      anchor: { path: 'test/cart.test.ts', startLine: 7, endLine: 9 },
      confidence: 0.7,
      title: 'No test for a discount above the subtotal',
      body: 'Add a case for `total([[1, 5]], 10)` so the bound is pinned down.',
      brief: 'qa',
    },
  });
  await engineer.command('addReviewNode', {
    ...target,
    node: {
      kind: 'suggestion',
      priority: 'P3',
      triage: triage('maintainability', 'low'),
      anchor: { path: 'src/price.ts', startLine: 4, endLine: 4 },
      confidence: 0.6,
      title: 'Name the rounding rule',
      body: 'A `roundToCents` helper would say what `Math.round(x * 100) / 100` means.',
      brief: 'engineer',
    },
  });
  // A second principal — a human — confirms the agent's bug: it becomes consensus-ready.
  await alice.command('confirmNode', { ...target, nodeId: bug.nodeId });
  log(`agents filed 3 findings; ${DEMO_CAST.alice} confirmed ${bug.nodeId}`);

  const cohort = computed.cohorts[0];
  if (cohort) {
    await engineer.command('setCohortSummary', {
      ...target,
      cohortKey: cohort.key,
      markdown: '`total` takes a **discount**, and `price` now rounds every line to cents. The discount is not bounded below.',
    });
  }

  // Each brief of the balanced roster records that it went through every cohort (else finalize marks
  // the token axes partial: a review that did not look everywhere never reads as a clean one).
  for (const c of computed.cohorts) {
    for (const [brief, agent] of [['engineer', engineer], ['qa', qa], ['architect', engineer]] as const) {
      await agent.command('markCohortReviewed', { ...target, cohortKey: c.key, brief, status: 'complete' });
    }
  }

  // The human decides the API-contract changes; the changed golden is left for you to approve on the page.
  const contract = await alice.query<{ changes: Array<{ changeId: string; severity: string }> }>('apiContract', target);
  for (const change of contract.changes.filter((c) => c.severity === 'breaking')) {
    await alice.command('review_studio.setContractDecision', { ...target, changeId: change.changeId, decision: 'approved', note: 'v1.1 of the shop API announces both changes' });
  }
  log(`${DEMO_CAST.alice} approved ${contract.changes.filter((c) => c.severity === 'breaking').length} breaking contract change(s)`);

  await engineer.command('finalizeReview', {
    ...target,
    tokenAxes: { correctness: { status: 'warn', reason: 'negative totals' }, security: { status: 'pass' }, testGap: { status: 'warn', reason: 'no bound test' } },
    walkthrough: 'The PR adds a discount to `total` and rounds prices to cents. One real defect (an unbounded discount, confirmed), one missing test, one naming nit. The API gains `GET /cart/total`; the two breaking changes were approved. The checkout button golden changed and awaits a human look.',
  });

  const verdict = await alice.query<{ verdict: string; confidence: number; reasons: string[] }>('verdict', target);
  const nodes = await alice.query<{ nodes?: unknown[] }>('nodeStatus', target);
  const pageUrl = `${opts.url}/workspaces/${ws.workspaceId}/repos/${repoId}/prs/${target.prNumber}`;
  return {
    workspaceId: ws.workspaceId,
    repoId,
    prNumber: target.prNumber,
    repoDir: repo.dir,
    baseSha: repo.baseSha,
    headSha: repo.headSha,
    pageUrl,
    signInUrl: `${pageUrl}#token=${encodeURIComponent(tokens[DEMO_CAST.you])}`,
    signInPrincipal: DEMO_CAST.you,
    verdict: { verdict: verdict.verdict, confidence: verdict.confidence, reasons: verdict.reasons },
    cohorts: computed.cohorts.length,
    findings: Array.isArray(nodes.nodes) ? nodes.nodes.length : 3,
    tokens,
  };
}

/** `rl_<workspaceId>_…` names its workspace. */
export function workspaceOfToken(token: string): string {
  const m = /^rl_([a-z0-9][a-z0-9-]{0,62})_/.exec(token);
  if (!m) throw new Error('the owner token is not a review-ledger token (rl_<workspace>_…)');
  return m[1];
}

/**
 * The demo workspace and an owner token for it. A new workspace's owner token comes back once, in the
 * createWorkspace answer; it is kept in `<dataDir>/demo-owner-token` (0600) so a second demo reuses the
 * workspace. If the workspace exists but its token is not on file, the next free `demo-<n>` is used.
 */
async function demoWorkspace(root: RpcClient, dataDir: string, wanted: string, log: (l: string) => void): Promise<{ workspaceId: string; token: string }> {
  const file = path.join(dataDir, DEMO_OWNER_FILE);
  const kept = fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim() : '';
  if (kept && workspaceOfToken(kept) === wanted) {
    try {
      // Any authenticated read proves the token still opens the workspace.
      await root.as(kept, wanted).query('reviewStatus', { repoId: 'demo-probe', prNumber: 1 });
      return { workspaceId: wanted, token: kept };
    } catch {
      // The kept token no longer works (revoked, or another data dir): make a fresh workspace.
    }
  }
  for (let n = 1; n < 100; n++) {
    const workspaceId = n === 1 ? wanted : `${wanted}-${n}`;
    try {
      const created = await root.command<{ workspaceId: string; token: string }>('createWorkspace', { workspaceId, name: 'review-ledger demo', defaultLevel: 'balanced' });
      fs.writeFileSync(file, `${created.token}\n`, { mode: 0o600 });
      log(`created workspace "${workspaceId}"`);
      return { workspaceId, token: created.token };
    } catch (err) {
      if (err instanceof RpcError && /exists/.test(err.code)) continue;
      throw err;
    }
  }
  throw new Error(`demo: no free workspace id ${wanted}, ${wanted}-2 … ${wanted}-99`);
}
