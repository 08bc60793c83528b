import { ChildProcess, spawn } from 'node:child_process';

/**
 * The proxy itself, run in a child process of its own: the PostgreSQL catalogue blocks its caller's
 * thread while it waits for the database (Atomics.wait), so a proxy on the test's own event loop could
 * not forward that very query. Commands arrive over IPC: cut, hold, restore, stats.
 */
const CHILD = `
const net = require('node:net');
const [host, port] = [process.argv[1], Number(process.argv[2])];
const pairs = new Set();
let down = false;
let held = false;
let accepted = 0;
const server = net.createServer((client) => {
  client.on('error', () => undefined);
  if (down) { client.resetAndDestroy(); return; }
  accepted++;
  const upstream = net.connect(port, host);
  upstream.on('error', () => undefined);
  // While held, bytes either way wait here (a partition: nothing arrives, nothing is reset).
  const pair = { client, upstream, toUpstream: [], toClient: [] };
  pairs.add(pair);
  const end = () => { if (!pairs.delete(pair)) return; client.destroy(); upstream.destroy(); };
  client.on('close', end);
  upstream.on('close', end);
  client.on('data', (d) => (held ? pair.toUpstream.push(d) : upstream.write(d)));
  upstream.on('data', (d) => (held ? pair.toClient.push(d) : client.write(d)));
});
function release() {
  held = false;
  for (const pair of pairs) {
    for (const d of pair.toUpstream.splice(0)) pair.upstream.write(d);
    for (const d of pair.toClient.splice(0)) pair.client.write(d);
  }
}
function cut() {
  down = true;
  for (const pair of [...pairs]) { pairs.delete(pair); pair.client.resetAndDestroy(); pair.upstream.destroy(); }
}
process.on('message', (m) => {
  if (m.op === 'cut') cut();
  if (m.op === 'hold') held = true;
  if (m.op === 'restore') { down = false; release(); }
  process.send({ id: m.id, accepted, open: pairs.size, down });
});
process.on('disconnect', () => process.exit(0));
server.listen(0, '127.0.0.1', () => process.send({ id: 0, port: server.address().port }));
`;

/**
 * A real TCP proxy on a loopback port in front of a server (PostgreSQL in the fault tests). `cut()`
 * resets every open connection and every new one until `restore()` — an outage as a client sees it
 * (ECONNRESET mid-query, resets on connect); nothing is simulated above TCP.
 */
export class TcpProxy {
  private nextId = 1;
  private readonly waiting = new Map<number, (r: ProxyStats) => void>();

  private constructor(private readonly child: ChildProcess, readonly port: number) {
    child.on('message', (m: ProxyStats & { id: number }) => {
      const w = this.waiting.get(m.id);
      this.waiting.delete(m.id);
      w?.(m);
    });
  }

  static async start(target: { host: string; port: number }): Promise<TcpProxy> {
    const child = spawn(process.execPath, ['-e', CHILD, target.host, String(target.port)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const port = await new Promise<number>((resolve, reject) => {
      child.once('message', (m: { port: number }) => resolve(m.port));
      child.once('exit', (code) => reject(new Error(`proxy exited with ${code}`)));
    });
    return new TcpProxy(child, port);
  }

  private send(op: 'cut' | 'hold' | 'restore' | 'stats'): Promise<ProxyStats> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      this.child.send({ op, id });
    });
  }

  /** The outage begins: every open connection is reset, new ones are reset as they arrive. */
  cut(): Promise<ProxyStats> {
    return this.send('cut');
  }

  /**
   * A partition begins: connections stay open and new ones are accepted, but no byte is forwarded either
   * way (no reset, no answer) until `restore()`, which delivers what waited.
   */
  hold(): Promise<ProxyStats> {
    return this.send('hold');
  }

  /** The outage ends: new connections are forwarded again (and held bytes delivered). */
  restore(): Promise<ProxyStats> {
    return this.send('restore');
  }

  /** Connections accepted so far (a reconnect shows up here), open now, and whether it is cut. */
  stats(): Promise<ProxyStats> {
    return this.send('stats');
  }

  async close(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((r) => this.child.once('exit', r));
    this.child.disconnect();
    await exited;
  }
}

export interface ProxyStats {
  accepted: number;
  open: number;
  down: boolean;
}
