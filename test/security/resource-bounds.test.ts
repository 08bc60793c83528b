import * as v8 from 'node:v8';
import * as vm from 'node:vm';
import { WebSocket } from 'ws';
import { serverFixture } from '../rpc/support';

/**
 * SPEC §16 "every connection's unsent bytes are bounded, /rpc accepts only application/json": a client
 * that never reads cannot grow the server, a batch is charged by what it costs, a web page on another
 * origin can neither POST to /rpc (a "simple" cross-site request) nor open the WebSocket.
 */
describe('resource bounds and cross-site requests', () => {
  let fx: Awaited<ReturnType<typeof serverFixture>>;
  beforeAll(async () => {
    fx = await serverFixture();
  });
  afterAll(async () => {
    await fx.close();
  });
  const discover = (id: number) => ({ jsonrpc: '2.0', id, method: 'rpc.discover' });

  it('POST /rpc refuses text/plain and a body with no content type (what a cross-site form or fetch can send)', async () => {
    const body = JSON.stringify(discover(1));
    const plain = await fetch(`${fx.server.url}/rpc`, { method: 'POST', headers: { 'content-type': 'text/plain;charset=UTF-8' }, body });
    expect(plain.status).toBe(415);
    expect(((await plain.json()) as any).error.data.code).toBe('unsupported_media_type');
    const untyped = await fetch(`${fx.server.url}/rpc`, { method: 'POST', body: new Blob([body]) });
    expect(untyped.status).toBe(415);
    const form = await fetch(`${fx.server.url}/rpc`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body });
    expect(form.status).toBe(415);
    const json = await fetch(`${fx.server.url}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json; charset=utf-8' }, body });
    expect(json.status).toBe(200);
  });

  const open = (headers: Record<string, string>) =>
    new Promise<{ opened: boolean; status?: number }>((resolve) => {
      const ws = new WebSocket(`${fx.server.url.replace('http', 'ws')}/rpc`, { headers });
      ws.on('open', () => {
        ws.close();
        resolve({ opened: true });
      });
      ws.on('unexpected-response', (_req, res) => resolve({ opened: false, status: res.statusCode }));
      ws.on('error', () => resolve({ opened: false }));
    });

  it('a WebSocket upgrade from a foreign Origin is refused; same-origin and non-browser clients (no Origin) connect', async () => {
    expect(await open({ origin: 'https://evil.example' })).toEqual({ opened: false, status: 403 });
    expect(await open({ origin: 'null' })).toEqual({ opened: false, status: 403 });
    expect(await open({ origin: fx.server.url })).toEqual({ opened: true });
    expect(await open({})).toEqual({ opened: true });
  });

  it('a batch is charged by cost: a flood of rpc.discover is refused whole, cheaply', async () => {
    const res = await fetch(`${fx.server.url}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(Array.from({ length: 100 }, (_, i) => discover(i))) });
    const text = await res.text();
    expect(text.length).toBeLessThan(10_000);
    expect(JSON.parse(text).error.data.code).toBe('batch_too_costly');
    // rpc.discover alone still works (a batch of one too), and the catalogue is the same bytes every time.
    const ask = async (body: unknown) => (await fetch(`${fx.server.url}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).text();
    const single = await ask(discover(1));
    const batchOfOne = JSON.parse(await ask([discover(1)]));
    expect(JSON.parse(single).result.methods.length).toBeGreaterThan(10);
    expect(JSON.stringify(batchOfOne[0])).toBe(JSON.stringify(JSON.parse(single)));
  });

  it('a WebSocket client that never reads does not grow the server: unsent bytes stay bounded (the server stops reading from it)', async () => {
    const ws = new WebSocket(`${fx.server.url.replace('http', 'ws')}/rpc`);
    await new Promise((r) => ws.on('open', r));
    // Stop reading: the kernel buffers fill, then everything the server sends waits in its memory.
    (ws as any)._socket.pause();
    // What the server holds for it, live (after a full GC): queued answers are strings and buffers.
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as () => void;
    const held = () => {
      gc();
      const m = process.memoryUsage();
      return m.heapUsed + m.arrayBuffers;
    };
    const before = held();
    const frame = JSON.stringify(discover(1));
    for (let i = 0; i < 400; i++) ws.send(frame);
    await new Promise((r) => setTimeout(r, 2000));
    // 400 answers of one catalogue (~140 KB) each would hold ~56 MB (less what the kernel buffers);
    // the bound holds the high-water mark plus one answer.
    expect(held() - before).toBeLessThan(16 * 1024 * 1024);
    const health = await fetch(`${fx.server.url}/health`);
    expect(health.status).toBe(200);
    ws.terminate();
  });
});
