import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { WebSocket } from 'ws';
import { defaultOperatorConfig, loadOperatorConfig } from '../../src/operator-config';
import { hostAllowed } from '../../src/security/host-check';
import { startServer, type RunningServer } from '../../src/server/bootstrap';

/**
 * SPEC §16 "a page on another site cannot reach /rpc", DNS rebinding: a page served as
 * `http://rebind.evil.example:PORT` whose name the attacker re-points at 127.0.0.1 is same-origin with
 * this server to the browser (its Origin matches its Host). A browser request (it carries Origin) is
 * served only under a Host this server answers to.
 */
describe('DNS rebinding: browser requests need a Host this server answers to', () => {
  let server: RunningServer;
  let named: RunningServer;
  let dataDir: string;
  let port: number;
  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-rebind-'));
    server = await startServer({ dataDir: path.join(dataDir, 'a'), port: 0 });
    port = Number(new URL(server.url).port);
    const operator = defaultOperatorConfig(path.join(dataDir, 'b'));
    named = await startServer({ dataDir: path.join(dataDir, 'b'), port: 0, operator: { ...operator, allowedHosts: ['review.example.com'] } });
  });
  afterAll(async () => {
    await server.close();
    await named.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const discover = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'rpc.discover' });
  /** A raw request to 127.0.0.1 naming any Host (what the browser sends after the rebind). */
  const request = (url: string, method: string, reqPath: string, headers: Record<string, string>, body?: string) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const u = new URL(url);
      const req = http.request({ host: '127.0.0.1', port: Number(u.port), method, path: reqPath, headers: { ...headers, ...(body ? { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) } : {}) } }, (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode!, body: text }));
      });
      req.on('error', reject);
      req.end(body);
    });
  const upgrade = (url: string, headers: Record<string, string>) =>
    new Promise<{ opened: boolean; status?: number }>((resolve) => {
      const ws = new WebSocket(`ws://127.0.0.1:${new URL(url).port}/rpc`, { headers });
      ws.on('open', () => {
        ws.close();
        resolve({ opened: true });
      });
      ws.on('unexpected-response', (_req, res) => resolve({ opened: false, status: res.statusCode }));
      ws.on('error', () => resolve({ opened: false }));
    });

  it('POST /rpc from a rebound page (Origin = http:// + Host, a name this server was never given) is refused 403 host_not_allowed', async () => {
    const evil = `rebind.evil.example:${port}`;
    const r = await request(server.url, 'POST', '/rpc', { host: evil, origin: `http://${evil}` }, discover);
    expect(r.status).toBe(403);
    expect(JSON.parse(r.body).error.data.code).toBe('host_not_allowed');
    expect(JSON.parse(r.body).error.message).toContain('rebind.evil.example');
  });

  it('other routes too (the health page, the review page), for a browser', async () => {
    const evil = `rebind.evil.example:${port}`;
    expect((await request(server.url, 'GET', '/health', { host: evil, origin: `http://${evil}` })).status).toBe(403);
    expect((await request(server.url, 'GET', '/', { host: evil, origin: `http://${evil}` })).status).toBe(403);
  });

  it('the WebSocket upgrade from a rebound page is refused', async () => {
    const evil = `rebind.evil.example:${port}`;
    expect(await upgrade(server.url, { host: evil, origin: `http://${evil}` })).toEqual({ opened: false, status: 403 });
  });

  it('loopback names and IP literals are served to a browser; a client without Origin under any Host is served', async () => {
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `app.localhost:${port}`, `[::1]:${port}`]) {
      const r = await request(server.url, 'POST', '/rpc', { host, origin: `http://${host}` }, discover);
      expect([host, r.status]).toEqual([host, 200]);
    }
    expect(await upgrade(server.url, { host: `localhost:${port}`, origin: `http://localhost:${port}` })).toEqual({ opened: true });
    // curl, a reverse proxy, the CLI: no Origin, so no page of any site is behind the request.
    expect((await request(server.url, 'POST', '/rpc', { host: `proxy.internal:${port}` }, discover)).status).toBe(200);
    expect(await upgrade(server.url, { host: `proxy.internal:${port}` })).toEqual({ opened: true });
  });

  it("a name the operator lists in allowedHosts is served to a browser; on that server other names still are not", async () => {
    const ok = await request(named.url, 'POST', '/rpc', { host: 'review.example.com', origin: 'https://review.example.com' }, discover);
    expect(ok.status).toBe(200);
    expect(await upgrade(named.url, { host: 'review.example.com', origin: 'https://review.example.com' })).toEqual({ opened: true });
    expect((await request(named.url, 'POST', '/rpc', { host: 'review.example.com.evil.example', origin: 'https://review.example.com.evil.example' }, discover)).status).toBe(403);
  });

  it('Host parsing: exact names, ports and brackets; a malformed Host is refused', () => {
    expect(hostAllowed('Review.Example.COM.:443', ['review.example.com'])).toBe(true);
    expect(hostAllowed('review.example.com@evil.example', ['review.example.com'])).toBe(false);
    expect(hostAllowed('evil-localhost', [])).toBe(false);
    expect(hostAllowed('localhost.evil.example', [])).toBe(false);
    expect(hostAllowed('10.0.0.7:3000', [])).toBe(true);
    expect(hostAllowed('[fe80::1]:3000', [])).toBe(true);
    expect(hostAllowed(undefined, [])).toBe(false);
    expect(hostAllowed('', [])).toBe(false);
  });

  it('allowedHosts comes from the operator file and holds host names only', () => {
    const file = path.join(dataDir, 'config.json');
    fs.writeFileSync(file, JSON.stringify({ allowedHosts: ['Review.Example.com'] }));
    expect(loadOperatorConfig(dataDir, { configFile: file }, {}).allowedHosts).toEqual(['review.example.com']);
    fs.writeFileSync(file, JSON.stringify({ allowedHosts: ['https://review.example.com'] }));
    expect(() => loadOperatorConfig(dataDir, { configFile: file }, {})).toThrow(/allowedHosts\.0/);
  });
});
