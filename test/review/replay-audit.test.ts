import * as fs from 'node:fs';
import * as path from 'node:path';
import { execFile } from 'node:child_process';
import { runQuery } from '../../src/readmodels/queries/run-query';
import { verdictQuery } from '../../src/readmodels/queries/verdict';
import { auditQuery } from '../../src/readmodels/queries/audit';
import { resolveAsOf } from '../../src/readmodels/queries/as-of';
import { RULES_V1 } from '../../src/rules/rules';
import { Ledger } from '../../src/ledger';
import { loadConfig } from '../../src/config';
import { newUuidV7 } from '../../src/events/ids';
import { ALICE, BOB, CAROL, computedEvent, HEAD1, REPO, reviewFixture, WS } from './support';

// These tests spawn the real CLI several times; on a loaded machine that takes a while.
jest.setTimeout(120_000);

type Fixture = Awaited<ReturnType<typeof reviewFixture>>;
let f: Fixture;
afterEach(async () => f.cleanup());

const BIN = path.join(__dirname, '..', '..', 'bin', 'review-ledger.js');

/** Runs the real CLI (bin/review-ledger.js, from the sources) against the fixture's data dir. */
function cli(...args: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, '--data-dir', f.dataDir, ...args], { env: { ...process.env, REVIEW_LEDGER_FROM_SOURCE: '1' } }, (err, stdout, stderr) => {
      resolve({ stdout, stderr, code: err ? ((err as { code?: number }).code ?? 1) : 0 });
    });
  });
}

/** Three reviews: PR 1 holds on a P0 at 0.65, PR 2 ships with a P2, PR 3 blocks on a P0 at 0.9. */
async function seed() {
  for (const pr of [1, 2, 3]) {
    await f.request(pr);
    await f.append(`pr-${REPO}-${pr}`, 'ReviewComputed', computedEvent(HEAD1));
  }
  await f.file(ALICE, { priority: 'P0', confidence: 0.65, title: 'maybe a crash' }, 1);
  await f.file(ALICE, { priority: 'P2', confidence: 0.9 }, 2);
  await f.file(ALICE, { priority: 'P0', confidence: 0.9 }, 3);
}

function writeRules(doc: unknown): string {
  const file = path.join(f.dataDir, 'rules-v2.json');
  fs.writeFileSync(file, JSON.stringify(doc));
  return file;
}
const V2 = { ...RULES_V1, rulesVersion: 'v2', verdict: { ...RULES_V1.verdict, blockThreshold: 0.6 } };

describe('replay under another rules document (SPEC §7.4)', () => {
  beforeEach(async () => {
    f = await reviewFixture();
    await seed();
  });

  test('prints old → new with the deciding reason, and writes nothing without --activate', async () => {
    const before = await f.count();
    const headBytes = fs.statSync(path.join(f.dataDir, WS, 'workspace.db')).size;
    const { stdout } = await cli('replay', '--workspace', WS, '--rules', writeRules(V2));
    expect(stdout).toMatch(/web-app#1\s+Hold \(0\.65\)\s+Block \(0\.65\)\s+Block from findings: n1 \(rules v2: P0 at confidence ≥ 0\.6 → Block\)/);
    expect(stdout).not.toMatch(/web-app#2|web-app#3/);
    expect(stdout).toMatch(/1 of 3 review\(s\) would change/);
    expect(await f.count()).toBe(before);
    expect(fs.statSync(path.join(f.dataDir, WS, 'workspace.db')).size).toBe(headBytes);
    expect((await f.events()).filter((e) => e.type === 'RulesVersionActivated')).toHaveLength(0);
    // The live projection still answers under v1.
    expect((await runQuery(verdictQuery, f.ws, f.pr(1))).value).toMatchObject({ verdict: 'Hold', rulesVersion: 'v1' });
  });

  test('--pr filters and --json prints rows', async () => {
    const { stdout } = await cli('replay', '--workspace', WS, '--rules', writeRules(V2), '--pr', '2', '--all', '--json');
    const out = JSON.parse(stdout);
    expect(out).toMatchObject({ rulesVersion: 'v2', reviews: 1, changed: 0 });
    expect(out.rows).toEqual([expect.objectContaining({ prNumber: 2, changed: false, old: { verdict: 'Ship', confidence: 0.9, rulesVersion: 'v1' } })]);
  });

  test('--activate records RulesVersionActivated once and projections answer under the new rules', async () => {
    const before = await f.count();
    await cli('replay', '--workspace', WS, '--rules', writeRules(V2), '--activate');
    await cli('replay', '--workspace', WS, '--rules', writeRules(V2), '--activate');
    const activated = (await f.events()).filter((e) => e.type === 'RulesVersionActivated');
    expect(activated).toHaveLength(1);
    expect(await f.count()).toBe(before + 1);
    expect((await runQuery(verdictQuery, f.ws, f.pr(1))).value).toMatchObject({ verdict: 'Block', rulesVersion: 'v2' });
    // As of a position before the activation, the old rules still answer.
    expect((await runQuery(verdictQuery, f.ws, f.pr(1), before)).value).toMatchObject({ verdict: 'Hold', rulesVersion: 'v1' });
    // Replaying v2 again now reports nothing to change.
    expect((await cli('replay', '--workspace', WS, '--rules', writeRules(V2))).stdout).toMatch(/0 of 3 review\(s\) would change/);
  });

  test('a malformed rules document is refused with the field named, and nothing is written', async () => {
    const before = await f.count();
    const { stderr, code } = await cli('replay', '--workspace', WS, '--rules', writeRules({ ...V2, verdict: { ...V2.verdict, blockThreshold: 3 } }), '--activate');
    expect(code).toBe(1);
    expect(stderr).toMatch(/verdict\.blockThreshold/);
    expect(await f.count()).toBe(before);
  });
});

describe('as-of reads (SPEC §7.4)', () => {
  test('any projection can be read as of a global position or an ISO time', async () => {
    let t = Date.now() + 3600_000;
    f = await reviewFixture();
    // A second ledger on the same data dir with a stepping clock, so events carry distinct times.
    const timed = new Ledger(loadConfig({ dataDir: f.dataDir }, {}), { clock: () => new Date((t += 60_000)) });
    const run = (c: string, a: typeof ALICE, p: object) => timed.run(c, WS, { principal: a.principal as any, role: a.role, idempotencyKey: newUuidV7() }, p);
    await run('requestReview', ALICE, { ...f.pr(), baseSha: 'b'.repeat(40), headSha: HEAD1 });
    const n = await run('addReviewNode', ALICE, { ...f.pr(), node: { kind: 'bug', priority: 'P1', triage: { category: 'correctness', severity: 'high', effort: 'small' }, confidence: 0.8, title: 't', body: 'b', brief: 'engineer' } });
    const afterNode = n.response.lastPosition!;
    const nodeTime = (await f.events()).find((e) => e.globalPosition === afterNode)!.metadata.occurredAt;
    await run('dismissNode', CAROL, { ...f.pr(), nodeId: 'n1', reason: 'false positive' });
    await timed.close();
    const ws = await f.ledger.workspace(WS);
    expect((await runQuery(verdictQuery, ws, f.pr())).value).toMatchObject({ findingsVerdict: 'Ship' });
    expect((await runQuery(verdictQuery, ws, f.pr(), afterNode)).value).toMatchObject({ findingsVerdict: 'Hold' });
    expect(await resolveAsOf(ws, nodeTime)).toBe(afterNode);
    expect(await resolveAsOf(ws, String(afterNode))).toBe(afterNode);
    const { stdout } = await cli('review', 'show', 'verdict', '--workspace', WS, '--repo', REPO, '--pr', '7', '--as-of', nodeTime);
    expect(JSON.parse(stdout)).toMatchObject({ position: afterNode, value: { findingsVerdict: 'Hold' } });
    await expect(resolveAsOf(ws, 'yesterday')).rejects.toMatchObject({ code: 'invalid_as_of' });
  });
});

describe('audit log (SPEC §0: who approved what, when)', () => {
  beforeEach(async () => {
    f = await reviewFixture();
    await f.request(7);
    await f.append(`pr-${REPO}-7`, 'ReviewComputed', computedEvent(HEAD1));
    const a = await f.file(ALICE, { priority: 'P1' });
    const b = await f.file(ALICE, { priority: 'P2' });
    const c = await f.file(BOB, { priority: 'P3', brief: 'qa' });
    await f.run('confirmNode', BOB, { ...f.pr(), nodeId: a });
    await f.run('dismissNode', CAROL, { ...f.pr(), nodeId: b, reason: 'intended' });
    await f.run('resolveNode', CAROL, { ...f.pr(), nodeId: c, reason: 'fixed' });
    await f.append(`pr-${REPO}-7`, 'ContractChangeDecided', { changeId: 'c-9', decision: 'approved', by: CAROL.principal, headSha: HEAD1 }, CAROL.principal);
    await f.append(`pr-${REPO}-7`, 'VisualChangeApproved', { snapshotId: 'home.png', approvalKey: 'd'.repeat(64), by: CAROL.principal, headSha: HEAD1 }, CAROL.principal);
    await f.run('finalizeReview', ALICE, { ...f.pr(), tokenAxes: { correctness: { status: 'pass' }, security: { status: 'pass' }, testGap: { status: 'pass' } }, walkthrough: 'w' });
    await f.append(`pr-${REPO}-7`, 'PublishRequested', { requestId: 'p-1', selection: 'consensus', needsApproval: true, by: ALICE.principal, role: 'member' }, ALICE.principal);
    await f.append(`pr-${REPO}-7`, 'PublishApproved', { requestId: 'p-1', by: CAROL.principal, role: 'member' }, CAROL.principal);
    await f.append(`pr-${REPO}-7`, 'ReviewPublished', { requestId: 'p-1', forgeReviewId: '991', event: 'COMMENT', inline: [], folded: [], fallbackUsed: false, publishedBy: CAROL.principal, role: 'member' }, 'system:publisher');
  });

  test('one row per decision act with actor, role, target, PR, time and global position', async () => {
    // In log order (newest first is the default), on one page.
    const page = (await runQuery(auditQuery, f.ws, { order: 'asc' })).value;
    expect(page.next).toBeNull();
    const rows = page.rows;
    expect(rows.map((r) => [r.action, r.actor, r.target])).toEqual([
      ['confirm', 'agent:bob', 'n1'],
      ['dismiss', 'user:carol', 'n2'],
      ['resolve', 'user:carol', 'n3'],
      ['contract_decision', 'user:carol', 'c-9'],
      ['visual_approval', 'user:carol', 'home.png'],
      ['finalize', 'agent:alice', 'round 1'],
      ['publish_request', 'agent:alice', 'p-1'],
      ['publish_approval', 'user:carol', 'p-1'],
      ['publish', 'user:carol', '991'],
    ]);
    for (const r of rows) {
      expect(r).toMatchObject({ repoId: REPO, prNumber: 7 });
      expect(r.time).toMatch(/^\d{4}-\d{2}-\d{2}T/);
      expect(r.position).toBeGreaterThan(0);
    }
    expect(rows[0].role).toBe('member');
    const positions = rows.map((r) => r.position);
    expect([...positions].sort((x, y) => x - y)).toEqual(positions);
  });

  test('the audit CLI filters by actor, action, PR and time, as a table or JSON', async () => {
    const rowsOf = async (...args: string[]): Promise<any[]> => JSON.parse((await cli('audit', '--workspace', WS, ...args, '--json')).stdout).rows;
    const carol = await rowsOf('--actor', 'user:carol', '--order', 'asc');
    expect(carol.map((r: any) => r.action)).toEqual(['dismiss', 'resolve', 'contract_decision', 'visual_approval', 'publish_approval', 'publish']);
    expect((await rowsOf('--actor', 'user:carol')).map((r: any) => r.action)).toEqual(['publish', 'publish_approval', 'visual_approval', 'contract_decision', 'resolve', 'dismiss']);
    const dismissals = await rowsOf('--action', 'dismiss', '--pr', '7');
    expect(dismissals).toHaveLength(1);
    expect(await rowsOf('--pr', '8')).toEqual([]);
    expect(await rowsOf('--until', '2000-01-01T00:00:00Z')).toEqual([]);
    expect(await rowsOf('--since', '2000-01-01T00:00:00Z')).toHaveLength(9);
    // Pages of 4 newest first: `next` continues exactly, every act once, then null.
    const first = JSON.parse((await cli('audit', '--workspace', WS, '--limit', '4', '--json')).stdout);
    expect(first.rows).toHaveLength(4);
    const second = JSON.parse((await cli('audit', '--workspace', WS, '--limit', '4', '--cursor', first.next, '--json')).stdout);
    const third = JSON.parse((await cli('audit', '--workspace', WS, '--limit', '4', '--cursor', second.next, '--json')).stdout);
    expect([...first.rows, ...second.rows, ...third.rows].map((r: any) => r.position)).toEqual((await rowsOf()).map((r: any) => r.position));
    expect(third).toMatchObject({ next: null });
    expect(third.rows).toHaveLength(1);
    // A cursor from other filters, a made-up one, a page past the maximum: refused, naming the field and rule.
    const refused = await cli('audit', '--workspace', WS, '--actor', 'user:carol', '--limit', '4', '--cursor', first.next);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/cursor: it was not made for these filters/);
    expect((await cli('audit', '--workspace', WS, '--cursor', 'bm90LWEtY3Vyc29y')).stderr).toMatch(/cursor: not a cursor audit returned/);
    expect((await cli('audit', '--workspace', WS, '--limit', '1001')).stderr).toMatch(/--limit: at most 1000 rows per page/);
    expect((await cli('audit', '--workspace', WS, '--limit', '4')).stdout).toMatch(/next page: --cursor \S+/);
    const table = (await cli('audit', '--workspace', WS, '--action', 'confirm')).stdout;
    expect(table).toMatch(/^position\s+time\s+action\s+actor\s+role\s+target\s+PR\s+detail/);
    expect(table).toMatch(/confirm\s+agent:bob\s+member\s+n1\s+web-app#7/);
  });
});

describe('review CLI', () => {
  test("`review run` executes a review command as the token's principal and `review show` reads it back", async () => {
    f = await reviewFixture();
    const payload = JSON.stringify({ repoId: REPO, prNumber: 5, baseSha: 'b'.repeat(40), headSha: HEAD1 });
    expect((await cli('member', 'add', '--workspace', WS, '--principal', 'agent:cli', '--role', 'member')).code).toBe(0);
    const token = (await cli('token', 'create', '--workspace', WS, '--principal', 'agent:cli', '--role', 'member')).stdout.trim();
    const out = await cli('review', 'run', 'requestReview', '--workspace', WS, '--payload', payload, '--token', token, '--json');
    expect(out.code).toBe(0);
    expect(JSON.parse(out.stdout)).toMatchObject({ streamId: `pr-${REPO}-5`, result: { started: true, roster: ['engineer', 'qa', 'architect'] } });
    const requested = (await f.events()).find((e) => e.type === 'ReviewRequested')!;
    expect(requested.metadata.principal).toBe('agent:cli');
    const shown = JSON.parse((await cli('review', 'show', 'reviewStatus', '--workspace', WS, '--repo', REPO, '--pr', '5')).stdout);
    expect(shown.value).toMatchObject({ status: 'requested', reviewedHead: HEAD1, stale: false });
    const refused = await cli('review', 'run', 'confirmNode', '--workspace', WS, '--payload', JSON.stringify({ repoId: REPO, prNumber: 5, nodeId: 'n1' }));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/error \[node_not_found\]/);
  });
});
