import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { WebSocket } from 'ws';
import { defaultMaxConnections, defaultOperatorConfig, loadOperatorConfig, softOpenFileLimit } from '../../src/operator-config';
import type { IncomingMessage } from 'node:http';
import { clientKey, requestClientKey } from '../../src/security/client-key';
import { startServer, type RunningServer } from '../../src/server/bootstrap';

describe('clientKey: what a connection counts against', () => {
  it.each([
    ['127.0.0.2', '127.0.0.2'],
    ['::ffff:10.1.2.3', '10.1.2.3'],
    ['::FFFF:10.1.2.3', '10.1.2.3'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:0db8:0001:0002::9', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['64:ff9b::192.0.2.1', '64:ff9b:0:0::/64'],
    [undefined, '(unknown)'],
  ])('%s → %s', (address, key) => {
    expect(clientKey(address)).toBe(key);
  });

  it('one host with a /64 is one client; the next /64 is another', () => {
    expect(clientKey('2001:db8:1:2:ffff::1')).toBe(clientKey('2001:db8:1:2::abcd'));
    expect(clientKey('2001:db8:1:3::1')).not.toBe(clientKey('2001:db8:1:2::1'));
  });
});

describe('requestClientKey: the client behind the operator\'s reverse proxies', () => {
  const req = (peer: string, xff?: string | string[]) => ({ socket: { remoteAddress: peer }, headers: xff === undefined ? {} : { 'x-forwarded-for': xff } }) as unknown as IncomingMessage;

  it('without trusted proxies: the peer, whatever X-Forwarded-For says', () => {
    expect(requestClientKey(req('203.0.113.9', '198.51.100.1'), [])).toBe('203.0.113.9');
  });

  it('from a trusted proxy: the address it appended (the rightmost), skipping proxies it came through', () => {
    expect(requestClientKey(req('::ffff:10.0.0.2', '198.51.100.1'), ['10.0.0.2'])).toBe('198.51.100.1');
    // A client writes what it likes on the left; only what the trusted hops added counts.
    expect(requestClientKey(req('10.0.0.2', '1.1.1.1, 198.51.100.1'), ['10.0.0.2'])).toBe('198.51.100.1');
    expect(requestClientKey(req('10.0.0.2', ['1.1.1.1, 198.51.100.1', '10.0.0.3']), ['10.0.0.2', '10.0.0.3'])).toBe('198.51.100.1');
    expect(requestClientKey(req('2001:db8::10', '2001:db8:5:6::77'), ['2001:0db8:0:0::10'])).toBe('2001:db8:5:6::/64');
  });

  it('a malformed hop, or none, leaves the proxy as the client; an untrusted peer is never looked behind', () => {
    expect(requestClientKey(req('10.0.0.2', 'unknown'), ['10.0.0.2'])).toBe('10.0.0.2');
    expect(requestClientKey(req('10.0.0.2'), ['10.0.0.2'])).toBe('10.0.0.2');
    expect(requestClientKey(req('10.0.0.9', '198.51.100.1'), ['10.0.0.2'])).toBe('10.0.0.9');
  });
});

describe('operator config: connections.maxPerAddress and maxConnections', () => {
  it('defaults to 256 per client and 3/8 of the file limit in all', () => {
    const c = defaultOperatorConfig(os.tmpdir()).connections;
    expect(c.maxPerAddress).toBe(256);
    expect(c.maxConnections).toBe(defaultMaxConnections());
    expect(defaultMaxConnections()).toBe(Math.max(64, Math.floor((softOpenFileLimit() * 3) / 8)));
  });

  it('takes both from the file, and refuses what is not a positive integer, naming the field', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-conn-config-'));
    try {
      const file = path.join(dir, 'config.json');
      fs.writeFileSync(file, JSON.stringify({ connections: { maxPerAddress: 7, maxConnections: 90 } }));
      expect(loadOperatorConfig(dir, { configFile: file }, {}).connections).toMatchObject({ maxPerAddress: 7, maxConnections: 90, unauthenticatedMs: 30_000 });
      fs.writeFileSync(file, JSON.stringify({ connections: { maxPerAddress: 0 } }));
      expect(() => loadOperatorConfig(dir, { configFile: file }, {})).toThrow(/connections\.maxPerAddress/);
      fs.writeFileSync(file, JSON.stringify({ trustedProxies: ['10.0.0.2', 'FE80::1'] }));
      expect(loadOperatorConfig(dir, { configFile: file }, {}).trustedProxies).toEqual(['10.0.0.2', 'fe80::1']);
      fs.writeFileSync(file, JSON.stringify({ trustedProxies: ['proxy.internal'] }));
      expect(() => loadOperatorConfig(dir, { configFile: file }, {})).toThrow(/trustedProxies\.0: an IP address/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

/**
 * One client holding every connection it can must not take the server from everyone else. Before: one
 * address opened 20,000 token-less WebSockets (each is closed after `unauthenticatedMs`, 30 s, and opened
 * again at once), the server held every descriptor of `nofile=20000`, and /health and an owner's RPC got no
 * answer. Clients here are loopback addresses of their own (127.0.0.0/8 all reach the server on Linux).
 * Nothing waits for time: a refused connection is seen by its close, a freed slot by retrying.
 */
describe('connection limits per client and in all', () => {
  let server: RunningServer;
  let dataDir: string;
  let ownerToken: string;
  let port: number;
  const PER_ADDRESS = 4;
  const TOTAL = 7;
  const held: WebSocket[] = [];
  let warnings: jest.SpyInstance;

  beforeAll(async () => {
    warnings = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-conn-limits-'));
    const operator = defaultOperatorConfig(dataDir);
    // Token-less sockets are kept for the whole test: only the connection limits close anything here.
    server = await startServer({ dataDir, port: 0, operator: { ...operator, connections: { ...operator.connections, unauthenticatedMs: 600_000, maxPerAddress: PER_ADDRESS, maxConnections: TOTAL } } });
    ownerToken = fs.readFileSync(path.join(dataDir, 'owner-token'), 'utf8').trim();
    port = Number(new URL(server.url).port);
  });
  afterAll(async () => {
    warnings.mockRestore();
    for (const ws of held) ws.terminate();
    await server.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  /** A token-less WebSocket from `from`: 'open' once the server upgraded it, 'refused' if it was closed unanswered. */
  const socketFrom = (from: string): Promise<{ outcome: 'open' | 'refused'; ws: WebSocket }> =>
    new Promise((resolve) => {
      const ws = new WebSocket(`ws://127.0.0.1:${port}/rpc`, { localAddress: from });
      ws.once('open', () => resolve({ outcome: 'open', ws }));
      ws.once('error', () => resolve({ outcome: 'refused', ws }));
    });
  const hold = async (from: string): Promise<void> => {
    const r = await socketFrom(from);
    expect(r.outcome).toBe('open');
    held.push(r.ws);
  };
  /** hold(), retried while refused: for when a connection closed just before may not be counted closed yet. */
  const holdOnceFree = async (from: string): Promise<void> => {
    let r = await socketFrom(from);
    while (r.outcome === 'refused') r = await socketFrom(from);
    held.push(r.ws);
  };
  /** An owner's RPC call over a fresh connection (no keep-alive) from `from`: its status, or 'refused'. */
  const ownerCall = (from: string): Promise<number | 'refused'> =>
    new Promise((resolve) => {
      const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'review_studio.audit', params: { workspace_id: 'default', limit: 1 } });
      const req = http.request({ host: '127.0.0.1', port, path: '/rpc', method: 'POST', localAddress: from, agent: false, headers: { authorization: `Bearer ${ownerToken}`, 'content-type': 'application/json', connection: 'close' } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', () => resolve('refused'));
      req.end(body);
    });
  const closed = (ws: WebSocket) => (ws.readyState === WebSocket.CLOSED ? Promise.resolve() : new Promise<void>((r) => ws.once('close', () => r())));

  it('a client at its limit gets no more connections; another client is still answered', async () => {
    for (let i = 0; i < PER_ADDRESS; i++) await hold('127.0.0.2');
    expect((await socketFrom('127.0.0.2')).outcome).toBe('refused');
    expect(await ownerCall('127.0.0.2')).toBe('refused');
    expect(await ownerCall('127.0.0.3')).toBe(200);
    // The sockets it holds are untouched, and the operator is told why (once a minute at most).
    expect(held.every((ws) => ws.readyState === WebSocket.OPEN)).toBe(true);
    expect(warnings).toHaveBeenCalledWith(`review-ledger: refused 1 connection (latest: 127.0.0.2 holds ${PER_ADDRESS} connections, connections.maxPerAddress)`);
  });

  it('past the total, every client is refused until connections close; then served again', async () => {
    // (The owner's call of the test before may still count until the server has seen it close.)
    for (let i = held.length; i < TOTAL; i++) await holdOnceFree('127.0.0.4');
    expect((await socketFrom('127.0.0.5')).outcome).toBe('refused');
    expect(await ownerCall('127.0.0.5')).toBe('refused');
    const first = held.shift()!;
    first.terminate();
    await closed(first);
    // The server counts the slot free once it has seen the close: retried until then.
    let status: number | 'refused' = 'refused';
    while (status === 'refused') status = await ownerCall('127.0.0.5');
    expect(status).toBe(200);
  });

  it('a client whose connections closed may connect again (counts go back down)', async () => {
    const mine = held.splice(0, held.length);
    for (const ws of mine) ws.terminate();
    await Promise.all(mine.map(closed));
    for (let i = 0; i < PER_ADDRESS; i++) await holdOnceFree('127.0.0.2');
    expect((await socketFrom('127.0.0.2')).outcome).toBe('refused');
  });
});
