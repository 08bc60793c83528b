import { serverFixture } from '../rpc/support';

/**
 * Issue 36: the Review page could be framed by any site (no `frame-ancestors`, no `X-Frame-Options`), so
 * a page could overlay it with a decoy and make a signed-in reviewer click "approve". Every response of
 * the server — the page, its API, JSON-RPC, errors — now forbids framing.
 */
describe('no response of the server may be framed', () => {
  let fx: Awaited<ReturnType<typeof serverFixture>>;
  beforeAll(async () => {
    fx = await serverFixture();
  });
  afterAll(() => fx.close());

  const framing = (res: Response) => ({ xfo: res.headers.get('x-frame-options'), frameAncestors: /(^|;)\s*frame-ancestors 'none'\s*(;|$)/.test(res.headers.get('content-security-policy') ?? '') });

  it("the Review page: X-Frame-Options DENY and frame-ancestors 'none' in its own policy", async () => {
    const res = await fetch(`${fx.server.url}/workspaces/default/repos/web/prs/42`);
    expect(res.status).toBe(200);
    expect(framing(res)).toEqual({ xfo: 'DENY', frameAncestors: true });
    expect(res.headers.get('content-security-policy')).toBe("default-src 'self'; img-src 'self' blob: data:; connect-src 'self' ws: wss:; style-src 'self'; script-src 'self'; frame-ancestors 'none'");
  });

  it('every other response: the page API, health, JSON-RPC, and errors', async () => {
    const answers = [
      await fetch(`${fx.server.url}/workspaces/default/review-page/me`, { headers: { authorization: `Bearer ${fx.ownerToken}` } }),
      await fetch(`${fx.server.url}/health`),
      await fetch(`${fx.server.url}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'rpc.discover' }) }),
      await fetch(`${fx.server.url}/assets/review/no-such-file.js`),
      await fetch(`${fx.server.url}/no/such/route`),
    ];
    expect(answers.map((r) => [r.url.replace(fx.server.url, ''), r.status, framing(r)])).toEqual([
      ['/workspaces/default/review-page/me', 200, { xfo: 'DENY', frameAncestors: true }],
      ['/health', 200, { xfo: 'DENY', frameAncestors: true }],
      ['/rpc', 200, { xfo: 'DENY', frameAncestors: true }],
      ['/assets/review/no-such-file.js', 404, { xfo: 'DENY', frameAncestors: true }],
      ['/no/such/route', 404, { xfo: 'DENY', frameAncestors: true }],
    ]);
  });
});
