import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { BASE, command, HEAD_A, serverFixture, tokenFor, WsClient } from '../rpc/support';

async function mcpClient(url: string, token: string): Promise<Client> {
  const client = new Client({ name: 'review-ledger-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return client;
}

describe('MCP server (streamable HTTP, the SDK client)', () => {
  let fx: Awaited<ReturnType<typeof serverFixture>>;
  beforeAll(async () => {
    fx = await serverFixture();
  });
  afterAll(async () => {
    await fx.close();
  });

  it('lists the agent tools with schemas generated from the commands; add_review_node asks for reasoning first', async () => {
    const agent = await tokenFor(fx.server.url, fx.ownerToken, fx.workspaceId, 'agent:mcp-lister', 'member');
    const client = await mcpClient(fx.server.url, agent);
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['add_review_node', 'confirm_review_node', 'finalize_review', 'get_review']));
    const add = tools.find((t) => t.name === 'add_review_node')!;
    const props = Object.keys(add.inputSchema.properties ?? {});
    expect(props[0]).toBe('reasoning');
    expect(props.indexOf('reasoning')).toBeLessThan(props.indexOf('node'));
    expect(add.inputSchema.required).toEqual(expect.arrayContaining(['reasoning', 'repoId', 'prNumber', 'node']));
    expect(Object.keys((add.inputSchema.properties as any).node.properties)).not.toContain('reasoning');
    // Same zod source as the RPC: the node's fields match the addReviewNode catalogue entry.
    const doc = (await (await fetch(`${fx.server.url}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'rpc.discover' }) })).json()) as any;
    const rpcNode = doc.result.methods.find((m: any) => m.name === 'addReviewNode').params.find((p: any) => p.name === 'node').schema;
    expect(Object.keys((add.inputSchema.properties as any).node.properties).sort()).toEqual(Object.keys(rpcNode.properties).filter((k) => k !== 'reasoning').sort());
    await client.close();
  });

  it('files a node through add_review_node that then appears in watchNodeStatus', async () => {
    const agentToken = await tokenFor(fx.server.url, fx.ownerToken, fx.workspaceId, 'agent:mcp-reviewer', 'member');
    const target = { repoId: 'mcp-repo', prNumber: 7 };
    expect((await command(fx.server.url, agentToken, fx.workspaceId, 'requestReview', { ...target, baseSha: BASE, headSha: HEAD_A })).error).toBeUndefined();
    const ui = await WsClient.open(fx.server.url, await tokenFor(fx.server.url, fx.ownerToken, fx.workspaceId, 'user:mcp-ui', 'viewer'));
    const sub = await ui.call('watchNodeStatus', { workspace_id: fx.workspaceId, ...target });
    expect(sub.result.snapshot.nodes).toEqual([]);

    const client = await mcpClient(fx.server.url, agentToken);
    const res = (await client.callTool({
      name: 'add_review_node',
      arguments: {
        reasoning: 'The loop reads past the end when the list is empty.',
        ...target,
        node: { kind: 'bug', priority: 'P1', triage: { category: 'correctness', severity: 'high', effort: 'small' }, confidence: 0.9, title: 'Off-by-one on empty list', body: 'Index -1 is read.', brief: 'engineer' },
      },
    })) as any;
    expect(res.isError).toBeFalsy();
    const nodeId = res.structuredContent.result.nodeId;
    await ui.until(() => ui.updates(sub.result.subscription).some((u) => u.value.nodes.some((n: any) => n.nodeId === nodeId)));
    const shown = ui.updates(sub.result.subscription).at(-1).value.nodes.find((n: any) => n.nodeId === nodeId);
    expect(shown).toEqual(expect.objectContaining({ title: 'Off-by-one on empty list', author: 'agent:mcp-reviewer', status: 'open' }));

    const review = (await client.callTool({ name: 'get_review', arguments: target })) as any;
    expect(review.structuredContent.nodeStatus.value.nodes.map((n: any) => n.nodeId)).toContain(nodeId);
    expect(review.structuredContent.verdict.value.verdict).toBeDefined();

    const self = (await client.callTool({ name: 'confirm_review_node', arguments: { ...target, nodeId } })) as any;
    expect(self.isError).toBe(true);
    expect(self.structuredContent.error.data.code).toBe('self_confirmation_refused');
    await client.close();
    await ui.close();
  });

  it('agents list the contract changes and the visual snapshots they are asked to judge, as the RPC queries answer them (issue 38)', async () => {
    const agent = await tokenFor(fx.server.url, fx.ownerToken, fx.workspaceId, 'agent:mcp-judge', 'member');
    const target = { repoId: 'mcp-repo', prNumber: 8 };
    expect((await command(fx.server.url, agent, fx.workspaceId, 'requestReview', { ...target, baseSha: BASE, headSha: HEAD_A })).error).toBeUndefined();
    const client = await mcpClient(fx.server.url, agent);
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['list_contract_changes', 'list_visual_snapshots']));
    for (const [tool, query] of [['list_contract_changes', 'apiContract'], ['list_visual_snapshots', 'visual']] as const) {
      const viaMcp = (await client.callTool({ name: tool, arguments: target })) as any;
      expect(viaMcp.isError).toBeFalsy();
      const viaRpc = await command(fx.server.url, agent, fx.workspaceId, `review_studio.${query}`, target);
      expect(viaRpc.error).toBeUndefined();
      expect(viaMcp.structuredContent.value).toEqual(viaRpc.result.value);
    }
    await client.close();
  });

  it('refuses MCP calls without a valid token', async () => {
    const res = await fetch(`${fx.server.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) });
    expect(res.status).toBe(401);
    const forged = await fetch(`${fx.server.url}/mcp`, { method: 'POST', headers: { authorization: `Bearer rl_default_0123456789abcdef_${'A'.repeat(43)}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) });
    expect(forged.status).toBe(401);
  });

  it('viewers may read the review but not file', async () => {
    const viewer = await tokenFor(fx.server.url, fx.ownerToken, fx.workspaceId, 'user:mcp-viewer', 'viewer');
    const client = await mcpClient(fx.server.url, viewer);
    const res = (await client.callTool({ name: 'add_review_node', arguments: { reasoning: 'r', repoId: 'mcp-repo', prNumber: 7, node: { kind: 'bug', priority: 'P3', triage: { category: 'style', severity: 'low', effort: 'trivial' }, confidence: 0.1, title: 't', body: 'b', brief: 'engineer' } } })) as any;
    expect(res.isError).toBe(true);
    expect(res.structuredContent.error.data.code).toBe('forbidden');
    const read = (await client.callTool({ name: 'get_review', arguments: { repoId: 'mcp-repo', prNumber: 7 } })) as any;
    expect(read.isError).toBeFalsy();
    await client.close();
  });
});
