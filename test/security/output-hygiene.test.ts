import { execFile } from 'node:child_process';
import * as path from 'node:path';
import { newUuidV7 } from '../../src/events/ids';
import { ALICE, CAROL, publishFixture } from '../publish/support';
import { BASE, call, command, HEAD_A, nodePayload, postRpc, serverFixture, tokenFor } from '../rpc/support';

/**
 * Output hygiene and payload keys (issue 19, low): control characters, ANSI escapes and bidi overrides are
 * stored exactly and neutralized where rendered (CLI output, GitHub bodies); `__proto__` / `constructor`
 * keys and unknown fields are refused at the edge with an error naming the field.
 */
// eslint-disable-next-line no-control-regex
const RAW_UNSAFE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
const HOSTILE = 'Ship it\u001b[2J\u001b[32m APPROVED\u001b[0m\u0000 \u202Eexe.gnp\u202C \u009b31m';

const BIN = path.resolve(__dirname, '../../bin/review-ledger.js');
const cli = (dataDir: string, ...args: string[]): Promise<{ stdout: string; stderr: string; code: number }> =>
  new Promise((resolve) =>
    execFile(process.execPath, [BIN, '--data-dir', dataDir, ...args], { env: { ...process.env, REVIEW_LEDGER_FROM_SOURCE: '1' } }, (err, stdout, stderr) =>
      resolve({ stdout, stderr, code: err ? ((err as { code?: number }).code ?? 1) : 0 }),
    ),
  );

describe('output hygiene: stored exactly, neutralized where rendered', () => {
  it('the CLI never writes a raw control, ANSI or bidi character; its JSON output still parses to the exact stored text', async () => {
    const fx = await serverFixture();
    try {
      const target = { repoId: 'hyg-repo', prNumber: 2 };
      const agent = await tokenFor(fx.server.url, fx.ownerToken, fx.workspaceId, 'agent:hostile', 'member');
      expect((await command(fx.server.url, fx.ownerToken, fx.workspaceId, 'requestReview', { ...target, baseSha: BASE, headSha: HEAD_A })).error).toBeUndefined();
      const filed = await command(fx.server.url, agent, fx.workspaceId, 'addReviewNode', { ...target, node: nodePayload(HOSTILE, { body: HOSTILE }) });
      expect(filed.error).toBeUndefined();
      expect((await command(fx.server.url, fx.ownerToken, fx.workspaceId, 'dismissNode', { ...target, nodeId: filed.result.result.nodeId, reason: HOSTILE })).error).toBeUndefined();
      // Stored exactly.
      const nodes = await call(fx.server.url, fx.ownerToken, 'review_studio.nodeStatus', { workspace_id: fx.workspaceId, ...target });
      expect(nodes.result.value.nodes[0].title).toBe(HOSTILE);

      const shown = await cli(fx.dataDir, 'review', 'show', 'nodeStatus', '--workspace', fx.workspaceId, '--repo', target.repoId, '--pr', String(target.prNumber));
      const table = await cli(fx.dataDir, 'audit', '--workspace', fx.workspaceId);
      const json = await cli(fx.dataDir, 'audit', '--workspace', fx.workspaceId, '--json');
      for (const out of [shown, table, json]) {
        expect(out.code).toBe(0);
        expect(RAW_UNSAFE.test(out.stdout + out.stderr)).toBe(false);
      }
      expect(table.stdout).toContain('\\u001b[2J');
      expect(table.stdout).toContain('\\u202e');
      expect(JSON.parse(shown.stdout).value.nodes[0].title).toBe(HOSTILE);
      expect(JSON.parse(json.stdout).rows.find((r: { action: string }) => r.action === 'dismiss').detail).toBe(HOSTILE);
      // Error messages that echo input are neutralized too.
      const err = await cli(fx.dataDir, 'review', 'run', `conf\u001b[2JirmNode`, '--workspace', fx.workspaceId, '--payload', '{}');
      expect(err.stderr).toContain('conf\\u001b[2JirmNode');
      expect(RAW_UNSAFE.test(err.stderr)).toBe(false);
    } finally {
      await fx.close();
    }
  }, 90_000);

  it('what is published to GitHub carries no raw control or bidi character, and never offers such lines as a one-click suggestion', async () => {
    const f = await publishFixture();
    try {
      await f.file(ALICE, { title: HOSTILE, body: `see ${HOSTILE}`, anchor: { path: 'src/app.ts', startLine: 4, endLine: 4 }, fix: { replacementLines: ['const v4 = 4; // \u202E };\u2066'] } });
      await f.file(ALICE, { title: `folded ${HOSTILE}` });
      await f.finalize(ALICE, `Walkthrough ${HOSTILE}`);
      await f.publish(CAROL);
      const [post] = f.github.reviewPosts();
      const texts = [post.body.body as string, ...(post.body.comments as Array<{ body: string }>).map((c) => c.body)];
      for (const t of texts) expect(RAW_UNSAFE.test(t)).toBe(false);
      expect(texts.join('\n')).toContain('\\u202e');
      const inline = (post.body.comments as Array<{ body: string }>)[0].body;
      expect(inline).not.toContain('```suggestion');
      expect(inline).toContain('const v4 = 4; // \\u202e };\\u2066');
      // The log still holds the exact text.
      const filed = (await f.eventsOf('ReviewNodeFiled')).map((e) => (e.data as { node: { title: string } }).node.title);
      expect(filed).toContain(HOSTILE);
    } finally {
      await f.close();
    }
  }, 90_000);
});

describe('payload keys are refused at the edge', () => {
  let fx: Awaited<ReturnType<typeof serverFixture>>;
  const target = { repoId: 'keys-repo', prNumber: 3 };
  beforeAll(async () => {
    fx = await serverFixture();
    expect((await command(fx.server.url, fx.ownerToken, fx.workspaceId, 'requestReview', { ...target, baseSha: BASE, headSha: HEAD_A })).error).toBeUndefined();
  });
  afterAll(async () => fx.close());

  /** Raw JSON text: a JS object literal would turn "__proto__" into a prototype instead of a key. */
  const raw = (method: string, paramsJson: string) => postRpc(fx.server.url, fx.ownerToken, `{"jsonrpc":"2.0","id":1,"method":"${method}","params":${paramsJson}}`);
  const nodeJson = JSON.stringify(nodePayload('supplied through the prototype'));
  const head = async () => (await fx.server.ledger.workspace(fx.workspaceId)).store.headPosition();

  it('"__proto__" cannot supply a command field: refused, naming the field, nothing recorded', async () => {
    const before = await head();
    const r = await raw('addReviewNode', `{"workspace_id":"${fx.workspaceId}","idempotencyKey":"${newUuidV7()}","repoId":"${target.repoId}","prNumber":${target.prNumber},"__proto__":{"node":${nodeJson}}}`);
    expect(r.body.error).toEqual(expect.objectContaining({ message: expect.stringContaining('params.__proto__'), data: expect.objectContaining({ code: 'invalid_payload' }) }));
    expect(await head()).toBe(before);
  });

  it('nested "__proto__" and "constructor" keys are refused by path', async () => {
    const nested = await raw('addReviewNode', `{"workspace_id":"${fx.workspaceId}","idempotencyKey":"${newUuidV7()}","repoId":"${target.repoId}","prNumber":${target.prNumber},"node":${nodeJson.slice(0, -1)},"triage":{"__proto__":{"severity":"low"}}}}`);
    expect(nested.body.error.message).toContain('params.node.triage.__proto__');
    const ctor = await raw('review_studio.verdict', `{"workspace_id":"${fx.workspaceId}","repoId":"${target.repoId}","prNumber":${target.prNumber},"constructor":{"x":1}}`);
    expect([ctor.body.error.data.code, ctor.body.error.message]).toEqual(['invalid_payload', expect.stringContaining('params.constructor')]);
  });

  it('an unknown field is refused with its name, not silently dropped', async () => {
    const before = await head();
    const r = await command(fx.server.url, fx.ownerToken, fx.workspaceId, 'addReviewNode', { ...target, node: nodePayload('typo'), priorty: 'P0' });
    expect([r.error?.data?.code, r.error?.message]).toEqual(['unknown_field', expect.stringContaining('params.priorty')]);
    expect(await head()).toBe(before);
    // issueToken's server-derived fields are not for clients to send.
    const t = await command(fx.server.url, fx.ownerToken, fx.workspaceId, 'issueToken', { principal: 'user:local-operator', role: 'viewer', tokenHash: 'f'.repeat(64) });
    expect([t.error?.data?.code, t.error?.message]).toEqual(['unknown_field', expect.stringContaining('params.tokenHash')]);
  });

  it('SSE input JSON with "__proto__" is refused', async () => {
    const input = encodeURIComponent(`{"repoId":"${target.repoId}","__proto__":{"prNumber":${target.prNumber}}}`);
    const res = await fetch(`${fx.server.url}/workspaces/${fx.workspaceId}/watch/verdict?input=${input}`, { headers: { authorization: `Bearer ${fx.ownerToken}` } });
    expect(res.status).toBe(400);
    expect((await res.json()).error.message).toContain('input.__proto__');
  });
});
