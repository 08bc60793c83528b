import * as fs from 'node:fs';
import * as path from 'node:path';
import { execFileSync } from 'node:child_process';
import * as net from 'node:net';
import { PNG } from 'pngjs';
import { chromium, type Browser } from 'playwright-core';
import { newUuidV7 } from '../../src/events/ids';

/**
 * JSON-RPC over HTTP to a test's server, as the page's own clients call it: `rpc` answers the result or throws
 * with the error, `command` adds a fresh idempotency key and the PR `target`. `urlOf` is read per call (the
 * server starts in beforeAll).
 */
export function rpcClient(urlOf: () => string, workspace: string, target: Record<string, unknown>) {
  const rpc = async (token: string, method: string, params: Record<string, unknown>) => {
    const res = await fetch(`${urlOf()}/rpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { workspace_id: workspace, ...params } }),
    });
    const reply = await res.json();
    if (reply.error) throw new Error(`${method}: ${JSON.stringify(reply.error)}`);
    return reply.result;
  };
  const command = (token: string, method: string, payload: Record<string, unknown>) => rpc(token, method, { idempotencyKey: newUuidV7(), ...target, ...payload });
  return { rpc, command };
}

export const CHROMIUM = '/usr/bin/chromium';
export const ARTIFACTS = path.resolve(__dirname, '..', '..', 'test-artifacts');

/** Debian's chromium, headless; never a downloaded browser. */
export async function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium`);
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', ...extraArgs],
  });
}

/** The page bundle exactly as `npm run build` makes it. */
export function buildWebBundle(): void {
  execFileSync(process.execPath, [path.resolve(__dirname, '..', '..', 'tools', 'build-web.js')], { stdio: 'inherit' });
}

/** A solid w×h PNG with an optional rectangle of another colour (a "UI snapshot"). */
export function png(w: number, h: number, fill: [number, number, number], patch?: { x: number; y: number; w: number; h: number; rgb: [number, number, number] }): Buffer {
  const img = new PNG({ width: w, height: h });
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const inPatch = patch && x >= patch.x && x < patch.x + patch.w && y >= patch.y && y < patch.y + patch.h;
      const [r, g, b] = inPatch ? patch!.rgb : fill;
      const i = (y * w + x) * 4;
      img.data[i] = r;
      img.data[i + 1] = g;
      img.data[i + 2] = b;
      img.data[i + 3] = 255;
    }
  }
  return PNG.sync.write(img);
}

export const OPENAPI_BASE = `openapi: 3.0.3
info: { title: shop, version: 1.0.0 }
paths:
  /items:
    get:
      parameters:
        - { name: limit, in: query, required: false, schema: { type: integer } }
      responses:
        '200':
          description: items
          content:
            application/json:
              schema: { type: array, items: { type: string } }
  /items/{id}:
    delete:
      parameters:
        - { name: id, in: path, required: true, schema: { type: string } }
      responses:
        '204': { description: deleted }
`;

/** The PR removes DELETE /items/{id} (breaking) and makes `limit` required (breaking). */
export const OPENAPI_HEAD = `openapi: 3.0.3
info: { title: shop, version: 1.1.0 }
paths:
  /items:
    get:
      parameters:
        - { name: limit, in: query, required: true, schema: { type: integer } }
      responses:
        '200':
          description: items
          content:
            application/json:
              schema: { type: array, items: { type: string } }
`;

/**
 * A TCP hop between the browser and the server that the test can cut: `kill()` destroys every open
 * connection (the browser sees its WebSocket die, as on a network failure) and refuses new ones until
 * `restore()`.
 */
export class CuttableProxy {
  private readonly sockets = new Set<net.Socket>();
  private refusing = false;
  private readonly server: net.Server;
  port = 0;

  private constructor(targetPort: number) {
    this.server = net.createServer((client) => {
      if (this.refusing) return client.destroy();
      const upstream = net.connect(targetPort, '127.0.0.1');
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
  }

  static async start(targetPort: number): Promise<CuttableProxy> {
    const p = new CuttableProxy(targetPort);
    await new Promise<void>((resolve) => p.server.listen(0, '127.0.0.1', () => resolve()));
    p.port = (p.server.address() as net.AddressInfo).port;
    return p;
  }

  kill(): void {
    this.refusing = true;
    for (const s of this.sockets) s.destroy();
  }

  restore(): void {
    this.refusing = false;
  }

  async close(): Promise<void> {
    this.kill();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * axe-core (the npm package) injected into the page and run over the whole document: the violations of
 * impact serious or critical, each with the selectors of the offending nodes.
 */
export async function axeSeriousViolations(page: import('playwright-core').Page): Promise<Array<{ id: string; impact: string; help: string; targets: string[] }>> {
  const source = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
  await page.evaluate(source);
  return page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(ctx: Document, opts: unknown): Promise<{ violations: Array<{ id: string; impact: string; help: string; nodes: Array<{ target: string[] }> }> }> } }).axe;
    const r = await axe.run(document, { resultTypes: ['violations'] });
    return r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.slice(0, 5).map((n) => n.target.join(' ')) }));
  });
}
