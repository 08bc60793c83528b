import { serverFixture, tokenFor } from '../rpc/support';

/**
 * docs/security.md: `__proto__`, `constructor` and `prototype` are refused anywhere in MCP arguments.
 * Over MCP HTTP the SDK's own schemas re-create `arguments`, silently dropping a top-level `__proto__`
 * (the call then ran as if it had not been sent); it is refused on the bytes as sent, like over JSON-RPC.
 */
describe('MCP HTTP refuses reserved payload keys', () => {
  let fx: Awaited<ReturnType<typeof serverFixture>>;
  let agent: string;
  beforeAll(async () => {
    fx = await serverFixture();
    agent = await tokenFor(fx.server.url, fx.ownerToken, fx.workspaceId, 'agent:proto-probe', 'member');
  });
  afterAll(() => fx.close());

  const post = async (body: string) => {
    const res = await fetch(`${fx.server.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${agent}` }, body });
    return { status: res.status, body: JSON.parse(await res.text()) };
  };
  const call = (args: string) => `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_review","arguments":${args}}}`;

  it('a top-level __proto__ in arguments is refused by name, alone or in a batch', async () => {
    for (const body of [call('{"repoId":"r","prNumber":1,"__proto__":{"workspace_id":"default"}}'), `[${call('{"repoId":"r","prNumber":1}')},${call('{"repoId":"r","prNumber":1,"__proto__":{}}')}]`]) {
      const r = await post(body);
      expect([r.status, r.body.error?.data?.code, r.body.error?.message]).toEqual([400, 'invalid_payload', expect.stringContaining('params.arguments.__proto__')]);
    }
    const constructorKey = await post(call('{"repoId":"r","prNumber":1,"constructor":1}'));
    expect(constructorKey.body.error?.data?.code).toBe('invalid_payload');
  });

  it('ordinary calls still work', async () => {
    const r = await post(call('{"repoId":"r","prNumber":1}'));
    expect(r.status).toBe(200);
    expect(r.body.result.isError).toBeUndefined();
  });
});
