import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as v8 from 'node:v8';
import * as vm from 'node:vm';
import { WebSocket } from 'ws';
import { defaultMaxConnections, defaultOperatorConfig, loadOperatorConfig } from '../../src/operator-config';
import { WS_SLOW_READER_CLOSE } from '../../src/rpc/ws-transport';
import { startServer, type RunningServer } from '../../src/server/bootstrap';

/**
 * SPEC §16 "every connection's memory is bounded": what one WebSocket connection makes the server hold
 * (requests read but not answered, answers not taken) stays under a per-connection budget, answers the
 * server sends many times are not copied per connection, and a client that keeps not reading is closed
 * with a code that says so.
 */
describe('per-connection memory budget on the WebSocket /rpc', () => {
  let server: RunningServer;
  let dataDir: string;
  const SLOW_READER_MS = 250;
  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-budget-'));
    const operator = defaultOperatorConfig(dataDir);
    server = await startServer({ dataDir, port: 0, operator: { ...operator, connections: { ...operator.connections, slowReaderMs: SLOW_READER_MS } } });
  });
  afterAll(async () => {
    await server.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  const discover = (id: number) => ({ jsonrpc: '2.0', id, method: 'rpc.discover' });
  const openUnread = async (): Promise<WebSocket> => {
    const ws = new WebSocket(`${server.url.replace('http', 'ws')}/rpc`);
    await new Promise((r, j) => ws.once('open', r).once('error', j));
    ws.on('error', () => undefined);
    // Stop reading: the kernel buffers fill, then whatever the server sends waits in its memory.
    (ws as any)._socket.pause();
    return ws;
  };

  it('unread answers to batches of one rpc.discover are not per-connection copies: 20 stalled connections hold < 2 MiB', async () => {
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as () => void;
    const held = () => {
      gc();
      const m = process.memoryUsage();
      return m.heapUsed + m.arrayBuffers;
    };
    // Open the connections (and build the cached catalogue) first: what is measured is what the answers hold.
    await fetch(`${server.url}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify([discover(0)]) }).then((r) => r.arrayBuffer());
    const sockets: WebSocket[] = [];
    for (let i = 0; i < 20; i++) sockets.push(await openUnread());
    await new Promise((r) => setTimeout(r, 200));
    const before = held();
    for (const ws of sockets) for (let f = 0; f < 40; f++) ws.send(JSON.stringify([discover(f)]));
    await new Promise((r) => setTimeout(r, 1500));
    // Each connection stops answering at the high-water mark (256 KiB), so fresh answers would hold
    // 20 × (256 KiB + one ~140 KB answer) ≈ 8 MiB; shared catalogue bytes hold next to nothing.
    const grown = held() - before;
    for (const ws of sockets) ws.terminate();
    expect(grown).toBeLessThan(2 * 1024 * 1024);
  });

  it(`a client that keeps more than the high-water mark unsent is closed with ${WS_SLOW_READER_CLOSE} slow_reader, which a slow client reads after its data`, async () => {
    let closed: { code: number; reason: string; messages: number } | null = null;
    // A client that is slow, not gone: it pauses long enough for the server to give up, then reads again.
    // Should the server not have given up before the client read (a loaded machine), it tries again.
    for (let round = 0; round < 4 && !closed; round++) {
      const ws = await openUnread();
      let messages = 0;
      ws.on('message', () => messages++);
      const done = new Promise<{ code: number; reason: string; messages: number }>((resolve) => ws.once('close', (code, reason) => resolve({ code, reason: reason.toString(), messages })));
      for (let f = 0; f < 100; f++) ws.send(JSON.stringify(discover(f)));
      await new Promise((r) => setTimeout(r, 1500));
      (ws as any)._socket.resume();
      closed = await Promise.race([done, new Promise<null>((r) => setTimeout(() => r(null), 2500))]);
      if (!closed) ws.terminate();
    }
    expect(closed).not.toBeNull();
    // The answers sent before the close arrive first: nothing already sent is cut off.
    expect(closed!.messages).toBeGreaterThan(0);
    expect(closed).not.toBeNull();
    expect(closed!.code).toBe(WS_SLOW_READER_CLOSE);
    expect(closed!.reason).toMatch(/^slow_reader: more than 262144 bytes unsent for 250 ms/);
    const health = await fetch(`${server.url}/health`);
    expect(health.status).toBe(200);
  }, 30_000);

  it('a client that reads keeps its connection: 60 catalogue answers arrive whole and in order', async () => {
    const ws = new WebSocket(`${server.url.replace('http', 'ws')}/rpc`);
    await new Promise((r, j) => ws.once('open', r).once('error', j));
    const ids: number[] = [];
    const all = new Promise<void>((resolve) => {
      ws.on('message', (data) => {
        const msg = JSON.parse(data.toString());
        ids.push(Array.isArray(msg) ? msg[0].id : msg.id);
        if (ids.length === 60) resolve();
      });
    });
    for (let f = 0; f < 60; f++) ws.send(JSON.stringify(f % 2 ? [discover(f)] : discover(f)));
    await all;
    expect(ids).toEqual(Array.from({ length: 60 }, (_, i) => i));
    expect(ws.readyState).toBe(WebSocket.OPEN);
    ws.close();
  });

  it('the budget and the slow-reader time are operator settings, validated at start', () => {
    const file = path.join(dataDir, 'config.json');
    fs.writeFileSync(file, JSON.stringify({ connections: { budgetBytes: 2 * 1024 * 1024, slowReaderMs: 5000 } }));
    expect(loadOperatorConfig(dataDir, { configFile: file }, {}).connections).toEqual({ budgetBytes: 2 * 1024 * 1024, slowReaderMs: 5000, unauthenticatedMs: 30_000, maxPerAddress: 256, maxConnections: defaultMaxConnections(), drainMs: 10_000 });
    fs.writeFileSync(file, JSON.stringify({ connections: { budgetBytes: 10 } }));
    expect(() => loadOperatorConfig(dataDir, { configFile: file }, {})).toThrow(/connections\.budgetBytes/);
    fs.writeFileSync(file, JSON.stringify({ connections: { drainMs: -1 } }));
    expect(() => loadOperatorConfig(dataDir, { configFile: file }, {})).toThrow(/connections\.drainMs/);
    expect(defaultOperatorConfig(dataDir).connections).toEqual({ budgetBytes: 1024 * 1024, slowReaderMs: 30_000, unauthenticatedMs: 30_000, maxPerAddress: 256, maxConnections: defaultMaxConnections(), drainMs: 10_000 });
  });
});
