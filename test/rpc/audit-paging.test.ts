import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { newUuidV7 } from '../../src/events/ids';
import { AUDIT_MAX_LIMIT, auditQuery, type AuditPage, type AuditRow } from '../../src/readmodels/queries/audit';
import { runQuery } from '../../src/readmodels/queries/run-query';
import { auditRowsRead } from '../../src/readmodels/stored/audit-read-model';
import { startServer, type RunningServer } from '../../src/server/bootstrap';
import { BASE, call, HEAD_A, nodePayload, postRpc, tokenFor, WsClient } from './support';

jest.setTimeout(120_000);

const WS = 'default';
const TARGET = { repoId: 'repo-audit', prNumber: 4 };
/** A small response cap, so a page of a few hundred rows passes it (the default is 4 MiB). */
const CAP = 64 * 1024;
const ACTS = 260;

describe('audit pages and the response cap on a running server (HTTP, batch, WebSocket, SSE, MCP)', () => {
  let server: RunningServer;
  let dataDir: string;
  let owner: string;
  let agent: string;
  let viewer: string;
  /** Nodes filed but not confirmed yet: each confirmation is one audit row. */
  const spare: string[] = [];

  /** Commands in batches (each at most 50: a batch's answer is one response under the cap too). */
  async function run(token: string, calls: Array<[string, Record<string, unknown>]>): Promise<any[]> {
    const out: any[] = [];
    for (let i = 0; i < calls.length; i += 50) {
      const body = calls.slice(i, i + 50).map(([method, payload], k) => ({ jsonrpc: '2.0', id: i + k + 1, method, params: { workspace_id: WS, idempotencyKey: newUuidV7(), ...payload } }));
      const replies = (await postRpc(server.url, token, body)).body as any[];
      for (const r of replies) if (r.error) throw new Error(JSON.stringify(r.error));
      out.push(...replies);
    }
    return out;
  }
  const fileNodes = async (n: number): Promise<string[]> => (await run(agent, Array.from({ length: n }, (_, i): [string, Record<string, unknown>] => ['addReviewNode', { ...TARGET, node: nodePayload(`finding ${i}`) }]))).map((r) => r.result.result.nodeId);
  const confirm = (ids: string[]) => run(owner, ids.map((nodeId): [string, Record<string, unknown>] => ['confirmNode', { ...TARGET, nodeId }]));
  const audit = (params: Record<string, unknown>, token = viewer) => call(server.url, token, 'review_studio.audit', { workspace_id: WS, ...params });
  const page = async (params: Record<string, unknown>): Promise<{ position: number; value: AuditPage }> => {
    const r = await audit(params);
    if (r.error) throw new Error(JSON.stringify(r.error));
    return r.result;
  };
  /** Every act, newest first, read in process (one request for all of them would pass the cap). */
  const everything = async (asOf?: number): Promise<AuditRow[]> => (await runQuery(auditQuery, await server.ledger.workspace(WS), { limit: AUDIT_MAX_LIMIT }, asOf)).value.rows;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-audit-paging-'));
    server = await startServer({ dataDir, port: 0, maxResponseBytes: CAP });
    owner = fs.readFileSync(path.join(dataDir, 'owner-token'), 'utf8').trim();
    agent = await tokenFor(server.url, owner, WS, 'agent:finder', 'member');
    viewer = await tokenFor(server.url, owner, WS, 'user:auditor', 'viewer');
    await run(agent, [['requestReview', { ...TARGET, baseSha: BASE, headSha: HEAD_A }]]);
    const ids = await fileNodes(ACTS + 40);
    await confirm(ids.slice(0, ACTS));
    spare.push(...ids.slice(ACTS));
  });
  afterAll(async () => {
    await server.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  test('without a limit: the newest 100 acts and a cursor; pages continue exactly, appends between pages neither repeat nor skip a row', async () => {
    const before = await everything();
    expect(before).toHaveLength(ACTS);
    const first = await page({});
    expect(first.value.rows.map((r) => r.position)).toEqual(before.slice(0, 100).map((r) => r.position));
    expect(first.value.next).toEqual(expect.any(String));
    // Acts land between pages: newest first, they lie above the cursor, so the next pages are the same.
    await confirm(spare.splice(0, 3));
    const second = await page({ cursor: first.value.next });
    const third = await page({ cursor: second.value.next });
    expect(second.value.rows).toHaveLength(100);
    expect(third.value.rows).toHaveLength(ACTS - 200);
    expect(third.value.next).toBeNull();
    expect([...first.value.rows, ...second.value.rows, ...third.value.rows]).toEqual(before);
    // In log order the new acts are at the end: paging on reaches them, each once.
    const asc: AuditRow[] = [];
    let cursor: string | undefined;
    for (let n = 0; ; n++) {
      const p = await page({ order: 'asc', limit: 120, ...(cursor ? { cursor } : {}) });
      asc.push(...p.value.rows);
      if (n === 0) await confirm(spare.splice(0, 2));
      if (!p.value.next) break;
      cursor = p.value.next;
    }
    expect(asc).toEqual([...(await everything())].reverse());
    expect(asc).toHaveLength(ACTS + 5);
  });

  test('as of a position, with a cursor: the pages of the log as it was then', async () => {
    const all = await everything();
    const asOf = all[150].position;
    const then = all.filter((r) => r.position <= asOf);
    expect(await everything(asOf)).toEqual(then);
    const first = await page({ limit: 50, asOf });
    expect(first.position).toBe(asOf);
    const rows = [...first.value.rows];
    for (let cursor = first.value.next; cursor; ) {
      const p = await page({ limit: 50, cursor, asOf });
      rows.push(...p.value.rows);
      cursor = p.value.next;
    }
    expect(rows).toEqual(then);
  });

  test('a limit past the maximum, a malformed, altered or misapplied cursor: refused naming the field and the rule, and nothing changes', async () => {
    const first = await page({ limit: 10 });
    const head = first.position;
    const tooMany = await audit({ limit: AUDIT_MAX_LIMIT + 1 });
    expect(tooMany.error).toMatchObject({ code: -32602, data: { code: 'invalid_payload', details: { issues: [{ path: 'limit', rule: 'too_big' }] } } });
    expect(tooMany.error!.message).toBe('limit: at most 1000 rows per page; read further pages with the answer\'s `next`');
    const refusals: Array<[Record<string, unknown>, RegExp]> = [
      [{ cursor: 'not a cursor!' }, /^cursor: not a cursor audit returned;/],
      [{ cursor: Buffer.from('v1.desc.12.AAAAAAAAAAAAAAAA').toString('base64url') }, /^cursor: it was not made for these filters \(or it was altered\)/],
      // The same cursor, its position changed by hand.
      [{ cursor: Buffer.from(Buffer.from(first.value.next!, 'base64url').toString().replace(/\.(\d+)\./, (_m, p) => `.${Number(p) + 1}.`)).toString('base64url') }, /^cursor: it was not made for these filters \(or it was altered\)/],
      [{ cursor: first.value.next, actor: 'user:someone-else' }, /^cursor: it was not made for these filters/],
      [{ cursor: first.value.next, order: 'asc' }, /^cursor: it continues an order: 'desc' page, this request asks for 'asc'/],
    ];
    for (const [params, message] of refusals) {
      const r = await audit({ limit: 10, ...params });
      expect({ params, error: r.error?.data?.code }).toEqual({ params, error: 'invalid_cursor' });
      expect(r.error!.code).toBe(-32602);
      expect(r.error!.message).toMatch(message);
    }
    // Nothing was written, and the same request answers the same rows. The chain status beside them is
    // not compared whole: the server's checkpointer signs on its own schedule (the first checkpoint, or
    // 60 s after the last one), which changes `verifiedCheckpoint`, `keyId` and `verifiedAt` but no row.
    const again = (await audit({ limit: 10 })).result as typeof first & { chain: { ok: boolean; headPosition: number } };
    expect(again.position).toBe(head);
    expect({ position: again.position, value: again.value }).toEqual({ position: first.position, value: first.value });
    expect(again.chain).toMatchObject({ ok: true, headPosition: head, firstBroken: null });
  });

  test('a response past maxResponseBytes fails with response_too_large on every transport, instead of being built and sent', async () => {
    const refused = (e: any) => expect(e).toMatchObject({ code: -32013, data: { code: 'response_too_large' } });
    // 300 rows of about 360 bytes pass 64 KiB; the default page of 100 does not.
    expect((await audit({})).error).toBeUndefined();
    const big = await audit({ limit: 300 });
    refused(big.error);
    expect(big.error!.message).toMatch(/^review_studio\.audit: the response would exceed the limit of 65536 bytes/);
    // A batch is one response: the entry that would pass the cap is refused in its place, the others answer.
    const batch = (await postRpc(server.url, viewer, [1, 2, 3].map((id) => ({ jsonrpc: '2.0', id, method: 'review_studio.audit', params: { workspace_id: WS, limit: 80 } })))).body as any[];
    expect(batch.map((r) => r.id)).toEqual([1, 2, 3]);
    expect(batch[0].result.value.rows).toHaveLength(80);
    refused(batch[batch.length - 1].error);
    expect(JSON.stringify(batch).length).toBeLessThanOrEqual(CAP);
    // WebSocket: the call and the watch's snapshot.
    const ws = await WsClient.open(server.url, viewer);
    try {
      refused((await ws.call('review_studio.audit', { workspace_id: WS, limit: 300 })).error);
      refused((await ws.call('watchAudit', { workspace_id: WS, limit: 300 })).error);
      expect((await ws.call('watchAudit', { workspace_id: WS, limit: 50 })).result.snapshot.rows).toHaveLength(50);
    } finally {
      await ws.close();
    }
    // SSE: refused before the stream starts.
    const sse = await fetch(`${server.url}/workspaces/${WS}/watch/audit?limit=300`, { headers: { authorization: `Bearer ${viewer}` } });
    expect(sse.status).toBe(413);
    refused((await sse.json()).error);
    // MCP: the tool result.
    const client = new Client({ name: 'audit-paging-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${viewer}` } } }));
    try {
      const tool = (await client.callTool({ name: 'get_audit_log', arguments: { limit: 300 } })) as any;
      expect(tool.isError).toBe(true);
      refused(tool.structuredContent.error);
      const ok = (await client.callTool({ name: 'get_audit_log', arguments: { limit: 20 } })) as any;
      expect(ok.structuredContent.value.rows).toHaveLength(20);
      expect(ok.structuredContent.value.next).toEqual(expect.any(String));
    } finally {
      await client.close();
    }
  });

  test('watchAudit: the first page newest first, and a new act arrives on top from the rows it added, not a re-read of the page', async () => {
    const ws = await WsClient.open(server.url, viewer);
    try {
      const started = (await ws.call('watchAudit', { workspace_id: WS, limit: 20 })).result;
      const snapshot = started.snapshot as AuditPage;
      expect(snapshot.rows.map((r) => r.position)).toEqual((await everything()).slice(0, 20).map((r) => r.position));
      const read = { ...auditRowsRead };
      const [nodeId] = spare.splice(0, 1);
      await confirm([nodeId]);
      await ws.until(() => ws.updates(started.subscription).length > 0);
      const update = ws.updates(started.subscription)[0];
      const value = update.value as AuditPage;
      // One statement read one row: the new act (a re-read of the page would be 21 rows).
      expect({ statements: auditRowsRead.statements - read.statements, rows: auditRowsRead.rows - read.rows }).toEqual({ statements: 1, rows: 1 });
      expect(value.rows[0]).toMatchObject({ action: 'confirm', target: nodeId });
      expect(value.rows.slice(1)).toEqual(snapshot.rows.slice(0, 19));
      // Exactly the page a fresh read gives at that position, cursor included.
      expect(value).toEqual((await page({ limit: 20, asOf: update.position })).value);
    } finally {
      await ws.close();
    }
  });
});
