import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { execFile } from 'node:child_process';
import * as path from 'node:path';
import { newUuidV7 } from '../../src/events/ids';
import { startServer, type RunningServer } from '../../src/server/bootstrap';
import { computedEvent, HEAD1, REPO, reviewFixture, WS } from '../review/support';
import { call } from '../rpc/support';

const BIN = path.resolve(__dirname, '../../bin/review-ledger.js');

/**
 * The CLI never records an asserted principal as real (issue 19): acting as a principal needs its token;
 * without one the act is the local operator's, marked as coming from the CLI. And a principal provisioned
 * with `member add` + `token create` shows the role it acted with in `audit` — never `unknown`.
 */
describe('CLI identities', () => {
  let f: Awaited<ReturnType<typeof reviewFixture>>;
  let server: RunningServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
    await f.cleanup();
  });

  const cli = (...args: string[]): Promise<{ stdout: string; stderr: string; code: number }> =>
    new Promise((resolve) =>
      execFile(process.execPath, [BIN, '--data-dir', f.dataDir, ...args], { env: { ...process.env, REVIEW_LEDGER_FROM_SOURCE: '1', REVIEW_LEDGER_TOKEN: '' } }, (err, stdout, stderr) =>
        resolve({ stdout, stderr, code: err ? ((err as { code?: number }).code ?? 1) : 0 }),
      ),
    );
  const payload = (prNumber: number) => JSON.stringify({ repoId: REPO, prNumber, baseSha: 'b'.repeat(40), headSha: HEAD1 });

  it('`review run --as` a principal without its token is refused and records nothing', async () => {
    f = await reviewFixture();
    const before = await f.count();
    const forged = await cli('review', 'run', 'requestReview', '--workspace', WS, '--payload', payload(5), '--as', 'user:mallory');
    expect(forged.code).toBe(1);
    expect(forged.stderr).toMatch(/error \[identity_unproven\]: --as: acting as user:mallory needs that principal's token/);
    expect(await f.count()).toBe(before);
  }, 60_000);

  it('without a token the act is the local operator, marked as coming from the CLI', async () => {
    f = await reviewFixture();
    const out = await cli('review', 'run', 'requestReview', '--workspace', WS, '--payload', payload(6));
    expect(out.code).toBe(0);
    const requested = (await f.events()).find((e) => e.type === 'ReviewRequested' && e.streamId === `pr-${REPO}-6`)!;
    expect(requested.metadata).toMatchObject({ principal: 'user:local-operator', role: 'owner', via: 'cli' });
    expect(requested.metadata.tokenId).toBeUndefined();
  }, 60_000);

  it("with a member's token the act is that member's, with its membership role; a token of a removed member is refused", async () => {
    f = await reviewFixture();
    expect((await cli('member', 'add', '--workspace', WS, '--principal', 'agent:ci-bot', '--role', 'member')).code).toBe(0);
    const token = (await cli('token', 'create', '--workspace', WS, '--principal', 'agent:ci-bot', '--role', 'member')).stdout.trim();
    const out = await cli('review', 'run', 'requestReview', '--workspace', WS, '--payload', payload(8), '--token', token, '--as', 'agent:ci-bot');
    expect([out.code, out.stderr]).toEqual([0, '']);
    const requested = (await f.events()).find((e) => e.type === 'ReviewRequested' && e.streamId === `pr-${REPO}-8`)!;
    expect(requested.metadata).toMatchObject({ principal: 'agent:ci-bot', role: 'member', via: 'cli', tokenId: token.split('_')[2] });
    // --as must name the token's own principal.
    const mismatch = await cli('review', 'run', 'requestReview', '--workspace', WS, '--payload', payload(9), '--token', token, '--as', 'user:someone-else');
    expect(mismatch.stderr).toMatch(/error \[identity_mismatch\]/);
    expect((await cli('member', 'remove', '--workspace', WS, '--principal', 'agent:ci-bot')).code).toBe(0);
    const removed = await cli('review', 'run', 'requestReview', '--workspace', WS, '--payload', payload(10), '--token', token);
    expect(removed.stderr).toMatch(/error \[unauthorized\].*no longer a member/);
  }, 60_000);

  it('`token create` for a principal that is not a member is refused', async () => {
    f = await reviewFixture();
    const out = await cli('token', 'create', '--workspace', WS, '--principal', 'user:nobody', '--role', 'member');
    expect(out.code).toBe(1);
    expect(out.stderr).toMatch(/error \[not_a_member\]: principal: user:nobody is not a member/);
    expect(JSON.parse((await cli('token', 'list', '--workspace', WS, '--json')).stdout)).toEqual([]);
  }, 60_000);

  it('contract decisions and visual approvals by a `token create` principal show the role they acted with in `audit`', async () => {
    f = await reviewFixture();
    await f.request();
    const change = { changeId: 'ac_break', ruleId: 'response-property-removed', severity: 'breaking', direction: 'response', message: 'GET /pets: gone', specPath: 'openapi.yaml', operation: 'GET /pets', basePointer: '#/components/schemas/Pet' };
    const snapshot = { snapshotId: 'goldens/home.png', state: 'changed', harness: 'goldens', baseHash: 'b'.repeat(64), headHash: '1'.repeat(64) };
    await f.append(`pr-${REPO}-7`, 'ReviewComputed', computedEvent(HEAD1, { apiContract: { status: 'pass', specs: [{ path: 'openapi.yaml', change: 'modified' }], changes: [change] }, visual: { status: 'pass', snapshots: [snapshot] } }));
    // Dana is an admin; her token carries member: the audit shows the role the act was authorized with.
    expect((await cli('member', 'add', '--workspace', WS, '--principal', 'user:dana', '--role', 'admin')).code).toBe(0);
    const dana = (await cli('token', 'create', '--workspace', WS, '--principal', 'user:dana', '--role', 'member')).stdout.trim();
    server = await startServer({ port: 0 }, f.ledger);
    const rpc = (method: string, params: Record<string, unknown>) => call(server!.url, dana, method, { workspace_id: WS, idempotencyKey: newUuidV7(), repoId: REPO, prNumber: 7, ...params });
    expect((await rpc('setContractDecision', { changeId: 'ac_break', decision: 'approved' })).error).toBeUndefined();
    expect((await rpc('approveVisual', { snapshotId: 'goldens/home.png' })).error).toBeUndefined();
    const rows = JSON.parse((await cli('audit', '--workspace', WS, '--actor', 'user:dana', '--order', 'asc', '--json')).stdout).rows;
    expect(rows.map((r: { action: string; role: string; via: string }) => [r.action, r.role, r.via])).toEqual([
      ['contract_decision', 'member', 'rpc'],
      ['visual_approval', 'member', 'rpc'],
    ]);
    expect(rows[0].issuerChain).toEqual([{ principal: 'user:local-operator', tokenId: null, via: 'cli' }]);
    const table = (await cli('audit', '--workspace', WS, '--actor', 'user:dana')).stdout;
    expect(table).toMatch(/contract_decision\s+user:dana\s+member\s+ac_break/);
    expect(table).toContain('user:local-operator (cli)');
    expect(table).not.toContain('unknown');
  }, 60_000);

  it('`mcp` over stdio without a token acts only as an existing member, with its membership role (no asserted role)', async () => {
    f = await reviewFixture();
    await f.request(7);
    const tool = async (principal: string) => {
      const client = new Client({ name: 'cli-identity', version: '1.0.0' });
      await client.connect(new StdioClientTransport({ command: process.execPath, args: [BIN, '--data-dir', f.dataDir, 'mcp', '--workspace', WS, '--principal', principal], env: { ...process.env, REVIEW_LEDGER_FROM_SOURCE: '1', REVIEW_LEDGER_TOKEN: '' } as Record<string, string>, stderr: 'ignore' }));
      try {
        return (await client.callTool({
          name: 'add_review_node',
          arguments: { reasoning: 'why', repoId: REPO, prNumber: 7, node: { kind: 'question', priority: 'P3', triage: { category: 'testing', severity: 'info', effort: 'trivial' }, confidence: 0.4, title: `by ${principal}`, body: 'b', brief: 'engineer' } },
        })) as { isError?: boolean; content: Array<{ text: string }> };
      } finally {
        await client.close();
      }
    };
    const stranger = await tool('agent:stranger');
    expect([stranger.isError, stranger.content[0].text]).toEqual([true, expect.stringMatching(/^unauthorized: --principal: agent:stranger is not a member/)]);
    expect((await cli('member', 'add', '--workspace', WS, '--principal', 'agent:harness', '--role', 'viewer')).code).toBe(0);
    const viewer = await tool('agent:harness');
    expect([viewer.isError, viewer.content[0].text]).toEqual([true, expect.stringMatching(/^forbidden: .*caller has viewer/)]);
    expect((await cli('member', 'role', '--workspace', WS, '--principal', 'agent:harness', '--role', 'member')).code).toBe(0);
    expect((await tool('agent:harness')).isError).toBeFalsy();
    const filed = (await f.events()).find((e) => e.type === 'ReviewNodeFiled')!;
    expect(filed.metadata).toMatchObject({ principal: 'agent:harness', role: 'member', via: 'cli' });
  }, 90_000);
});
