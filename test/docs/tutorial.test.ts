import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { closeSharedDiffPools } from '../../src/axes/visual/pool';
import { closeSharedExtractPool } from '../../src/codegraph/extract-pool';
import { loadConfig } from '../../src/config';
import { Ledger } from '../../src/ledger';
import { GITHUB_SERVICE, OctokitGitHub } from '../../src/publish/github-client';
import { startServer, type RunningServer } from '../../src/server/bootstrap';
import { STATUS_SYNC_SERVICE } from '../../src/status-check/status-check.module';
import type { VerdictStatusSync } from '../../src/status-check/sync';
import { FakeGitHub } from '../publish/fake-github';
import { githubFiles } from '../publish/support';
import { DocBlockFailed, fencedBlocks, readRecordedChecks, runDocBlocks, BLOCK_KINDS } from './doc-runner';
import { mutantsOf, runCheck } from './mutants';
import { LedgerServices } from '../../src/slots';

/**
 * docs/tutorial.md is executed: every fenced block, in order, against a real server on port 0 with a
 * temporary data dir, GitHub replaced by the local stand-in (which validates every request body with
 * GitHub's own OpenAPI schemas). A documented command or payload that stops working fails here.
 */
const ROOT = path.resolve(__dirname, '..', '..');
const TUTORIAL = path.join(ROOT, 'docs', 'tutorial.md');
const GITHUB_TOKEN = 'ghp_tutorial_0123456789';

describe('docs/tutorial.md', () => {
  let server: RunningServer;
  let github: FakeGitHub;
  let dataDir: string;
  let work: string;
  let checks: string;

  beforeAll(async () => {
    github = new FakeGitHub();
    github.tokens.set(GITHUB_TOKEN, 'review-ledger[bot]');
    await github.start();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-tutorial-data-'));
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-tutorial-work-'));
    checks = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-tutorial-checks-'));
    const services = new LedgerServices().set(GITHUB_SERVICE, () => new OctokitGitHub({ baseUrl: github.baseUrl, auth: { kind: 'token', token: GITHUB_TOKEN } }));
    server = await startServer({ port: 0 }, new Ledger(loadConfig({ dataDir }, {}), { services }));
  });

  afterAll(async () => {
    await server?.close();
    await github?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.rmSync(work, { recursive: true, force: true });
    fs.rmSync(checks, { recursive: true, force: true });
    await closeSharedDiffPools();
    await closeSharedExtractPool();
  });

  const env = () => ({
    ...process.env,
    URL: server.url,
    TOKEN: fs.readFileSync(path.join(dataDir, 'owner-token'), 'utf8').trim(),
    WORK: work,
    REPO_ROOT: path.join(dataDir, 'repos'),
    REVIEW_LEDGER_FROM_SOURCE: '1',
  });

  it('has only blocks the runner executes, covering CLI, curl, SSE, WebSocket, MCP (stdio and HTTP), decisions, audit, replay and publishing', () => {
    const blocks = fencedBlocks(fs.readFileSync(TUTORIAL, 'utf8'));
    expect(blocks.length).toBeGreaterThan(20);
    expect(blocks.filter((b) => !(BLOCK_KINDS as readonly string[]).includes(b.info))).toEqual([]);
    const all = blocks.map((b) => b.text).join('\n');
    for (const needle of ['rl contract-diff', 'rl visual-diff', '/watch/verdict', "require('ws')", 'tools/call', 'confirmNode', 'setContractDecision', 'approveVisual', 'setVerdictStatusCheck', 'review_studio.audit', 'review_studio.replay', 'review_studio.publish']) {
      expect(all).toContain(needle);
    }
    expect(blocks.map((b) => b.info)).toEqual(expect.arrayContaining(['json mcp-stdio', 'json mcp-http']));
  });

  it('walks an Express-shaped repository end to end (issue 38): CommonJS lib/ with tests beside it, findings over MCP, a new head, a re-review', () => {
    const doc = fs.readFileSync(TUTORIAL, 'utf8');
    const section = doc.slice(doc.indexOf('## 11.'));
    const all = fencedBlocks(section).map((b) => b.text).join('\n');
    // The fixture's shape: lib/express.js requires its siblings, each module fills module.exports, tests in test/.
    for (const file of ['package.json', 'index.js', 'lib/express.js', 'lib/application.js', 'lib/request.js', 'lib/response.js', 'test/res.send.js']) expect(all).toContain(`"$EXPRESS_DIR/${file}"`);
    for (const needle of ["require('./application')", "require('./request')", "require('./response')", 'module.exports', "require('..')"]) expect(all).toContain(needle);
    // The steps, in order.
    const steps = ['registerRepo', 'indexCode', 'review_studio.compute', 'agent add_review_node', 'agent get_review', 'confirmNode', 'dismissNode', 'agent finalize_review', 'observeHead', 'review_studio.reReviewDelta', 'resolveNode', 'review_studio.replay', 'review_studio.audit'];
    const at = steps.map((s) => all.indexOf(s));
    expect(at.filter((i) => i < 0)).toEqual([]);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
    // Every block of the section ends its work with a check.
    for (const b of fencedBlocks(section)) expect({ line: b.line, checks: b.text.includes('check ') }).toEqual({ line: b.line, checks: true });
  });

  it('every check can fail: each goes through check(), which refuses an empty input, several documents and a false predicate (issue 38: `jq -e` on an empty file passed)', () => {
    const doc = fs.readFileSync(TUTORIAL, 'utf8');
    const definition = doc.split('\n').find((l) => l.startsWith('check() {'))!;
    expect(definition).toBeDefined();
    // No bare `jq -e` check left: only the rpc helper's error test, whose empty input fails the call anyway.
    expect(doc.split('\n').filter((l) => /jq -e/.test(l) && !l.includes('has("error")') && !l.startsWith('#'))).toEqual([]);
    const run = (input: string, expr: string) => {
      try {
        execFileSync('bash', ['-c', `${definition}\ncheck "$1"`, 'bash', expr], { input, stdio: ['pipe', 'pipe', 'pipe'] });
        return 0;
      } catch (err) {
        return (err as { status: number }).status;
      }
    };
    expect(run('{"nodes":["a","b"]}\n', '.nodes | length == 2')).toBe(0);
    expect(run('', '.nodes | length == 2')).not.toBe(0);
    expect(run('{"nodes":["a"]}\n', '.nodes | length == 2')).not.toBe(0);
    expect(run('{"nodes":["a","b"]}\n{"nodes":["a","b"]}\n', '.nodes | length == 2')).not.toBe(0);
    // Every documented check fails on an empty answer (what a dead subscriber or server leaves).
    for (const m of doc.matchAll(/check '([^']+)'/g)) expect({ check: m[1], onEmpty: run('', m[1]) !== 0 }).toEqual({ check: m[1], onEmpty: true });
  });

  it('runs every block in order against a real server, and GitHub (the stand-in) gets the status and the review', async () => {
    const blocks = fencedBlocks(fs.readFileSync(TUTORIAL, 'utf8'));
    let pull = false;
    await runDocBlocks(blocks, {
      cwd: ROOT,
      env: env(),
      vars: ['REPO_DIR', 'BASE', 'HEAD'],
      recordChecks: checks,
      afterBlock: (_block, v) => {
        // Once the tutorial has made its PR, the stand-in serves it, with the diff the real git computes.
        if (pull || !v.REPO_DIR || !v.BASE || !v.HEAD) return;
        const repo = { git: (...args: string[]) => execFileSync('git', args, { cwd: v.REPO_DIR, encoding: 'utf8' }).trim() };
        github.addPull({ number: 1, author: 'octocat', headSha: v.HEAD, baseSha: v.BASE, files: githubFiles(repo as any, v.BASE, v.HEAD) });
        pull = true;
      },
    });
    expect(pull).toBe(true);
    const head = github.pulls.get(1)!.headSha;
    // Section 7: the status check followed the verdict to failure (Hold), linking the Review page.
    await (server.ledger.services.get(STATUS_SYNC_SERVICE) as VerdictStatusSync).settled();
    const status = github.latestStatus(head, 'review-ledger/verdict');
    expect(status).toMatchObject({ state: 'failure', target_url: `${server.url}/workspaces/tutorial/repos/shop/prs/1` });
    expect(status!.description).toMatch(/^Hold /);
    // Section 10: one review, posted once, with the confirmed bug inline on src/cart.ts.
    const posts = github.reviewPosts();
    expect(posts.map((p) => p.status)).toEqual([200]);
    expect(posts[0].body.event).toBe('COMMENT');
    expect(posts[0].body.comments.map((c: any) => c.path)).toEqual(['src/cart.ts']);
  }, 300_000);

  it('no check is vacuous (issue 38): each check the run made fails on every mutant of its expected values and on a wrong output', () => {
    // Uses what the run above recorded (no second run of the page): every `check EXPR` call with the exact output it read.
    const doc = fs.readFileSync(TUTORIAL, 'utf8');
    const definition = doc.split('\n').find((l) => l.startsWith('check() {'))!;
    const recorded = readRecordedChecks(checks);
    const blocks = fencedBlocks(doc).filter((b) => b.info === 'sh');
    // Every block that calls check was recorded calling it: no check sits on a path that never runs.
    const calling = blocks.filter((b) => /(^|[|;]|\s)check '/m.test(b.text)).map((b) => b.index);
    expect([...new Set(recorded.map((r) => r.block))]).toEqual(calling);
    // Every sh block checks its output, except those starting a subscriber in the background (section 7 checks what they got).
    expect(blocks.filter((b) => !calling.includes(b.index)).map((b) => ({ line: b.line, background: /_PID=\$!\s*$/.test(b.text) }))).toEqual(
      blocks.filter((b) => !calling.includes(b.index)).map((b) => ({ line: b.line, background: true })),
    );
    // A failing check ends the block (set -e): none is softened by ||, &&, if, while or !.
    const softened = doc.split('\n').filter((l) => /\bcheck '/.test(l) && (/\bcheck '.*'.*(\|\||&&)/.test(l) || /^\s*(if|while|until|!)\s/.test(l)));
    expect(softened).toEqual([]);

    const survivors: Array<{ block: number; expr: string; mutant: string }> = [];
    for (const r of recorded) {
      // The recording is faithful: the page's own check passes on it.
      expect({ block: r.block, expr: r.expr, passes: runCheck(definition, r.expr, r.args, r.stdin) }).toEqual({ block: r.block, expr: r.expr, passes: true });
      for (const m of mutantsOf(r.expr, r.args)) {
        if (runCheck(definition, m.expr, m.args, r.stdin)) survivors.push({ block: r.block, expr: r.expr, mutant: m.label });
      }
      // A wrong output: none at all (a dead server or subscriber), an empty object, null, a JSON-RPC error.
      const noFiles = r.args.filter((a) => !a.startsWith(r.dir));
      for (const [label, output] of WRONG_OUTPUTS) if (runCheck(definition, r.expr, noFiles, output)) survivors.push({ block: r.block, expr: r.expr, mutant: label });
    }
    expect(survivors).toEqual([]);
  }, 120_000);

  it('fails at the block whose documented payload the server refuses', async () => {
    const blocks = fencedBlocks(fs.readFileSync(TUTORIAL, 'utf8')).slice(0, 2);
    const broken = [...blocks, { index: 2, info: 'sh', line: 0, text: 'rpc "$TOKEN" createWorkspace "{\\"workspace_id\\":\\"default\\",\\"idempotencyKey\\":\\"$(key)\\",\\"workspaceID\\":\\"typo\\"}" > /dev/null' }];
    await expect(runDocBlocks(broken, { cwd: ROOT, env: env() })).rejects.toThrow(DocBlockFailed);
    await expect(runDocBlocks(broken, { cwd: ROOT, env: env() })).rejects.toThrow(/block 2 .*invalid_payload|block 2 [\s\S]*workspaceId/);
  }, 60_000);
});

/** Outputs no check may accept. */
const WRONG_OUTPUTS: Array<[string, string]> = [
  ['an empty output', ''],
  ['an empty object', '{}\n'],
  ['null', 'null\n'],
  ['a JSON-RPC error', '{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"refused","data":{"code":"forbidden"}}}\n'],
];
