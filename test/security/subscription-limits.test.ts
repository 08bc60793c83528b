import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { WebSocket } from 'ws';
import { startServer, type RunningServer } from '../../src/server/bootstrap';
import { LIMITS } from '../../src/rpc/limits';
import { command } from '../rpc/support';

/**
 * One token held 256 subscriptions on each of any number of connections (~14 KB of server memory each:
 * 2,048 verdict watches on eight connections took 29 MiB, and a client may open 256 connections). Now a
 * principal holds at most LIMITS.maxSubscriptionsPerPrincipal in a workspace over all its connections and
 * transports; others are not held back, and a closed subscription frees its place.
 */
describe('subscriptions per principal over all its connections', () => {
  let server: RunningServer;
  let dataDir: string;
  let owner: string;
  const sockets: WebSocket[] = [];
  const PER_CONN = LIMITS.maxSubscriptionsPerConnection;
  const PER_PRINCIPAL = LIMITS.maxSubscriptionsPerPrincipal;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-sub-limits-'));
    server = await startServer({ dataDir, port: 0 });
    owner = fs.readFileSync(path.join(dataDir, 'owner-token'), 'utf8').trim();
  });
  afterAll(async () => {
    for (const ws of sockets) ws.terminate();
    await server.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const connect = async (token: string): Promise<WebSocket> => {
    const ws = new WebSocket(`${server.url.replace('http', 'ws')}/rpc`, { headers: { authorization: `Bearer ${token}` } });
    await new Promise((r, j) => ws.once('open', r).once('error', j));
    sockets.push(ws);
    return ws;
  };
  let nextId = 0;
  /** Subscribes watchVerdict on PR `pr`; the error code, or undefined when subscribed. */
  const watch = (ws: WebSocket, pr: number): Promise<string | undefined> =>
    new Promise((resolve) => {
      const id = ++nextId;
      const onMessage = (data: Buffer) => {
        const msg = JSON.parse(data.toString());
        if (msg.id !== id) return;
        ws.off('message', onMessage);
        resolve(msg.error?.data?.code);
      };
      ws.on('message', onMessage);
      ws.send(JSON.stringify({ jsonrpc: '2.0', id, method: 'watchVerdict', params: { workspace_id: 'default', repoId: 'limits', prNumber: pr } }));
    });
  const fill = async (ws: WebSocket, from: number, n: number): Promise<Array<string | undefined>> => {
    const out: Array<string | undefined> = [];
    for (let i = 0; i < n; i++) out.push(await watch(ws, from + i));
    return out;
  };
  const closed = (ws: WebSocket) => new Promise<void>((r) => (ws.readyState === WebSocket.CLOSED ? r() : ws.once('close', () => r())));

  it(`a principal holds ${PER_PRINCIPAL} over all its connections; the next is refused on any of them, by WebSocket or SSE`, async () => {
    const conns: WebSocket[] = [];
    for (let c = 0; c < PER_PRINCIPAL / PER_CONN; c++) {
      const ws = await connect(owner);
      conns.push(ws);
      expect(await fill(ws, 1 + c * PER_CONN, PER_CONN)).toEqual(Array(PER_CONN).fill(undefined));
    }
    const fresh = await connect(owner);
    expect(await watch(fresh, 100_000)).toBe('too_many_subscriptions');
    const sse = await fetch(`${server.url}/workspaces/default/watch/verdict?repoId=limits&prNumber=100001`, { headers: { authorization: `Bearer ${owner}` } });
    expect([sse.status, (await sse.json()).error.data.code]).toEqual([413, 'too_many_subscriptions']);
    // Another principal is not held back.
    expect((await command(server.url, owner, 'default', 'addMember', { principal: 'agent:watcher', role: 'member' })).error).toBeUndefined();
    const agent = await command(server.url, owner, 'default', 'issueToken', { principal: 'agent:watcher', role: 'member' });
    expect(await watch(await connect(agent.result.result.token), 1)).toBeUndefined();
    // Subscriptions that close free their places (the server sees the close, then counts again).
    conns[0].terminate();
    await closed(conns[0]);
    let code = await watch(fresh, 100_002);
    for (let pr = 100_003; code === 'too_many_subscriptions'; pr++) code = await watch(fresh, pr);
    expect(code).toBeUndefined();
  });
});
