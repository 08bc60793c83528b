import * as fs from 'node:fs';
import * as path from 'node:path';
import { COMMANDS } from '../../src/commands/registry';
import { newUuidV7 } from '../../src/events/ids';
import { QUERIES } from '../../src/readmodels/queries/queries';
import { watchName } from '../../src/rpc/methods';
import { RULES_V1 } from '../../src/rules/rules';
import { BASE, call, command, HEAD_A, nodePayload, postRpc, serverFixture, tokenFor, WsClient } from './support';

describe('JSON-RPC over HTTP and WebSocket', () => {
  let fx: Awaited<ReturnType<typeof serverFixture>>;
  beforeAll(async () => {
    fx = await serverFixture();
  });
  afterAll(async () => {
    await fx.close();
  });

  it('listens on 127.0.0.1 unless configured otherwise', () => {
    const addr = fx.server.app.getHttpServer().address();
    expect(addr.address).toBe('127.0.0.1');
    expect(new URL(fx.server.url).hostname).toBe('127.0.0.1');
  });

  it('answers a malformed HTTP body with a JSON-RPC parse error (-32700), not an HTML 400', async () => {
    const r = await postRpc(fx.server.url, fx.ownerToken, '{"jsonrpc": "2.0", "method": ');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ jsonrpc: '2.0', id: null, error: expect.objectContaining({ code: -32700, data: { code: 'parse_error' } }) });
  });

  it('answers a malformed WebSocket frame with a JSON-RPC error and keeps the connection usable', async () => {
    const ws = await WsClient.open(fx.server.url, fx.ownerToken);
    ws.send('not json at all {');
    ws.send('{"jsonrpc":"1.0","id":7,"method":42}');
    await ws.until(() => ws.raw.length >= 2);
    expect(ws.raw[0].error.code).toBe(-32700);
    expect(ws.raw[1]).toEqual({ jsonrpc: '2.0', id: 7, error: expect.objectContaining({ code: -32600 }) });
    const ok = await ws.call('rpc.discover', {});
    expect(ok.result.openrpc).toBe('1.3.2');
    await ws.close();
  });

  it('runs batches in order, answers every request that has an id, and uses the standard codes', async () => {
    const key = newUuidV7();
    const r = await postRpc(fx.server.url, fx.ownerToken, [
      { jsonrpc: '2.0', id: 'a', method: 'addMember', params: { workspace_id: fx.workspaceId, idempotencyKey: key, principal: 'user:batch', role: 'viewer' } },
      { jsonrpc: '2.0', method: 'addMember', params: { workspace_id: fx.workspaceId, idempotencyKey: newUuidV7(), principal: 'user:notified', role: 'viewer' } },
      { jsonrpc: '2.0', id: 'b', method: 'noSuchMethod', params: {} },
      { jsonrpc: '2.0', id: 'c', method: 'addMember', params: [1, 2] },
      42,
    ]);
    expect(r.body.map((x: any) => x.id)).toEqual(['a', 'b', 'c', null]);
    expect(r.body[0].result.eventIds).toEqual([key]);
    expect(r.body[1].error.code).toBe(-32601);
    expect(r.body[2].error.code).toBe(-32602);
    expect(r.body[3].error.code).toBe(-32600);
    expect((await postRpc(fx.server.url, fx.ownerToken, [])).body.error.code).toBe(-32600);
  });

  it('refuses a missing or unregistered workspace before any store opens: no data dir is created', async () => {
    const missing = await call(fx.server.url, fx.ownerToken, 'addMember', { idempotencyKey: newUuidV7(), principal: 'user:x', role: 'viewer' });
    expect(missing.error!.data!.code).toBe('missing_workspace');
    const unknown = await call(fx.server.url, fx.ownerToken, 'addMember', { workspace_id: 'ghost-ws', idempotencyKey: newUuidV7(), principal: 'user:x', role: 'viewer' });
    expect(unknown.error!.data!.code).toBe('unknown_workspace');
    const query = await call(fx.server.url, fx.ownerToken, 'review_studio.verdict', { workspace_id: 'ghost-ws', repoId: 'r', prNumber: 1 });
    expect(query.error!.data!.code).toBe('unknown_workspace');
    const traversal = await call(fx.server.url, fx.ownerToken, 'addMember', { workspace_id: '../etc', idempotencyKey: newUuidV7(), principal: 'user:x', role: 'viewer' });
    expect(traversal.error!.data!.code).toBe('invalid_workspace_id');
    expect(fs.existsSync(path.join(fx.dataDir, 'ghost-ws'))).toBe(false);
    expect(fs.readdirSync(fx.dataDir).sort()).toEqual(expect.not.arrayContaining(['ghost-ws']));
  });

  it('requires a bearer token and refuses a token of another workspace', async () => {
    const none = await call(fx.server.url, undefined, 'review_studio.verdict', { workspace_id: fx.workspaceId, repoId: 'r', prNumber: 1 });
    expect(none.error).toEqual(expect.objectContaining({ code: -32001, data: { code: 'unauthorized' } }));
    const created = await command(fx.server.url, fx.ownerToken, fx.workspaceId, 'createWorkspace', { workspaceId: 'second' });
    const secondToken: string = created.result.result.token;
    expect(secondToken).toMatch(/^rl_second_/);
    const cross = await command(fx.server.url, secondToken, fx.workspaceId, 'addMember', { principal: 'user:y', role: 'viewer' });
    expect(cross.error!.data!.code).toBe('forbidden');
    const own = await command(fx.server.url, secondToken, 'second', 'addMember', { principal: 'user:y', role: 'viewer' });
    expect(own.result.eventIds).toHaveLength(1);
  });

  it('replays an idempotent command byte-identically and refuses the key with another payload', async () => {
    const params = { workspace_id: fx.workspaceId, idempotencyKey: newUuidV7(), principal: 'user:replayed', role: 'viewer' };
    const body = { jsonrpc: '2.0', id: 1, method: 'addMember', params };
    const first = await fetch(`${fx.server.url}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${fx.ownerToken}` }, body: JSON.stringify(body) }).then((r) => r.text());
    const second = await fetch(`${fx.server.url}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${fx.ownerToken}` }, body: JSON.stringify(body) }).then((r) => r.text());
    expect(second).toBe(first);
    const reused = await call(fx.server.url, fx.ownerToken, 'addMember', { ...params, role: 'member' });
    expect(reused.error).toEqual(expect.objectContaining({ code: -32009, data: expect.objectContaining({ code: 'idempotency_key_reused' }) }));
  });

  it('maps typed domain errors to error.data.code (self-confirmation refused)', async () => {
    const agent = await tokenFor(fx.server.url, fx.ownerToken, fx.workspaceId, 'agent:author', 'member');
    const target = { repoId: 'repo-errors', prNumber: 3 };
    expect((await command(fx.server.url, agent, fx.workspaceId, 'requestReview', { ...target, baseSha: BASE, headSha: HEAD_A })).error).toBeUndefined();
    const filed = await command(fx.server.url, agent, fx.workspaceId, 'addReviewNode', { ...target, node: nodePayload('null deref') });
    expect(filed.error).toBeUndefined();
    const self = await command(fx.server.url, agent, fx.workspaceId, 'review_studio.confirmNode', { ...target, nodeId: filed.result.result.nodeId });
    expect(self.error).toEqual(expect.objectContaining({ code: -32003, data: expect.objectContaining({ code: 'self_confirmation_refused' }) }));
  });

  it('review_studio.replay scores reviews under another rules document without writing', async () => {
    const agent = await tokenFor(fx.server.url, fx.ownerToken, fx.workspaceId, 'agent:replay-author', 'member');
    const target = { repoId: 'repo-replay', prNumber: 4 };
    await command(fx.server.url, agent, fx.workspaceId, 'requestReview', { ...target, baseSha: BASE, headSha: HEAD_A });
    expect((await command(fx.server.url, agent, fx.workspaceId, 'addReviewNode', { ...target, node: nodePayload('crash', { priority: 'P0', confidence: 0.95 }) })).error).toBeUndefined();
    const softer = JSON.parse(JSON.stringify(RULES_V1));
    softer.rulesVersion = 'v1-soft-p0';
    softer.verdict.priorities.P0.atOrAboveThreshold = 'Hold';
    const before = await fx.server.ledger.workspace(fx.workspaceId).then((ws) => ws.store.headPosition());
    const r = await call(fx.server.url, fx.ownerToken, 'review_studio.replay', { workspace_id: fx.workspaceId, rules: softer, repoId: target.repoId });
    expect(r.error).toBeUndefined();
    expect(r.result.value.rows).toEqual([expect.objectContaining({ ...target, changed: true, old: expect.objectContaining({ verdict: 'Block' }), new: expect.objectContaining({ verdict: 'Hold', rulesVersion: 'v1-soft-p0' }) })]);
    expect(await fx.server.ledger.workspace(fx.workspaceId).then((ws) => ws.store.headPosition())).toBe(before);
    const bad = await call(fx.server.url, fx.ownerToken, 'review_studio.replay', { workspace_id: fx.workspaceId, rules: { rulesVersion: 'x' } });
    expect(bad.error!.data!.code).toBe('invalid_payload');
  });

  it('review_studio.replay answers in pages: every page folded at the first page\'s position, the cursor checked', async () => {
    const agent = await tokenFor(fx.server.url, fx.ownerToken, fx.workspaceId, 'agent:replay-pager', 'member');
    const repoId = 'repo-replay-pages';
    for (const prNumber of [1, 2, 3]) {
      await command(fx.server.url, agent, fx.workspaceId, 'requestReview', { repoId, prNumber, baseSha: BASE, headSha: HEAD_A });
      expect((await command(fx.server.url, agent, fx.workspaceId, 'addReviewNode', { repoId, prNumber, node: nodePayload(`crash-${prNumber}`, { priority: 'P0', confidence: 0.95 }) })).error).toBeUndefined();
    }
    const softer = JSON.parse(JSON.stringify(RULES_V1));
    softer.rulesVersion = 'v1-soft-pages';
    softer.verdict.priorities.P0.atOrAboveThreshold = 'Hold';
    const replay = (extra: Record<string, unknown>) => call(fx.server.url, fx.ownerToken, 'review_studio.replay', { workspace_id: fx.workspaceId, rules: softer, repoId, ...extra });
    const whole = await replay({});
    expect(whole.result.value).toEqual(expect.objectContaining({ reviews: 3, changed: 3, next: null }));
    expect(whole.result.value.rows.map((r: { prNumber: number }) => r.prNumber)).toEqual([1, 2, 3]);
    const first = await replay({ limit: 2 });
    expect(first.result.value.rows.map((r: { prNumber: number }) => r.prNumber)).toEqual([1, 2]);
    expect(first.result.value.next).toEqual(expect.any(String));
    // A fourth review appended between the pages is not in this replay: page two is folded where page one was.
    await command(fx.server.url, agent, fx.workspaceId, 'requestReview', { repoId, prNumber: 4, baseSha: BASE, headSha: HEAD_A });
    await command(fx.server.url, agent, fx.workspaceId, 'addReviewNode', { repoId, prNumber: 4, node: nodePayload('crash-4', { priority: 'P0', confidence: 0.95 }) });
    const second = await replay({ limit: 2, cursor: first.result.value.next });
    expect(second.error).toBeUndefined();
    expect(second.result.position).toBe(first.result.position);
    expect(second.result.value).toEqual(expect.objectContaining({ reviews: 3, changed: 3, next: null }));
    expect(second.result.value.rows).toEqual([whole.result.value.rows[2]]);
    // Without a cursor the head answers again: four reviews now.
    expect((await replay({ limit: 2 })).result.value.reviews).toBe(4);
    // An altered cursor, one passed with other rules, or with another asOf: refused, naming the field.
    const raw = Buffer.from(first.result.value.next, 'base64url').toString('utf8');
    const altered = Buffer.from(raw.replace(/\.2\./, '.1.')).toString('base64url');
    expect((await replay({ limit: 2, cursor: altered })).error!.data).toEqual({ code: 'invalid_cursor', details: { field: 'cursor' } });
    const other = await call(fx.server.url, fx.ownerToken, 'review_studio.replay', { workspace_id: fx.workspaceId, rules: { ...softer, rulesVersion: 'v1-other' }, repoId, cursor: first.result.value.next });
    expect(other.error!.data!.code).toBe('invalid_cursor');
    expect((await replay({ cursor: first.result.value.next, asOf: 1 })).error!.data!.code).toBe('invalid_cursor');
    expect((await replay({ limit: 1001 })).error!.data!.code).toBe('invalid_payload');
  });

  it('bounds strings and bodies', async () => {
    const long = await command(fx.server.url, fx.ownerToken, fx.workspaceId, 'addMember', { principal: 'user:z', role: 'viewer', note: 'x'.repeat(300_000) });
    expect(long.error!.data!.code).toBe('string_too_long');
    const huge = await fetch(`${fx.server.url}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${fx.ownerToken}` }, body: 'x'.repeat(2 * 1024 * 1024) });
    expect(huge.status).toBe(413);
  });

  it('publishes a catalogue generated from every registered command and query (rpc.discover, OpenRPC)', async () => {
    const doc = (await call(fx.server.url, undefined, 'rpc.discover', {})).result;
    const names = new Set(doc.methods.map((m: any) => m.name));
    for (const c of COMMANDS) {
      expect(names.has(c.name)).toBe(true);
      expect(names.has(`review_studio.${c.name}`)).toBe(true);
    }
    for (const q of QUERIES) expect(names.has(watchName(q.name))).toBe(true);
    const addNode = doc.methods.find((m: any) => m.name === 'addReviewNode');
    expect(addNode.params.map((p: any) => p.name)).toEqual(expect.arrayContaining(['workspace_id', 'idempotencyKey', 'repoId', 'prNumber', 'node']));
    expect(addNode.params.find((p: any) => p.name === 'node').schema.properties.reasoning).toBeDefined();
    // issueToken's public params never include the server-derived hash.
    expect(doc.methods.find((m: any) => m.name === 'issueToken').params.map((p: any) => p.name)).not.toContain('tokenHash');
  });
});
