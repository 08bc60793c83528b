import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';
import type { DomainError } from '../domain-error';
import { bearerFrom } from '../security/tokens';
import type { RpcConnection, RpcDispatcher } from './dispatcher';
import { toRpcError } from './errors';
import { LIMITS } from './limits';
import type { ProgressSink } from '../progress-hub/hub';
import type { WatchSink, WatchUpdate } from './watch';

/** Above this many unsent bytes a subscriber counts as slow and its updates coalesce. */
export const WS_HIGH_WATER_BYTES = 256 * 1024;
/**
 * Past this many unsent bytes the connection is closed (terminated: a client that does not read cannot
 * read a close frame either). Responses wait below the high-water mark before the next request is
 * even read, so only a single oversized answer on top of the mark can get here.
 */
export const WS_MAX_UNSENT_BYTES = 8 * 1024 * 1024;
/** A connection that stays above the high-water mark this long is closed. */
export const WS_STALL_MS = 30_000;
/** Requests read but not yet answered, past which the connection stops reading. */
const MAX_QUEUED_FRAMES = 8;

// A group hands the same update to every member in one synchronous loop: encode its tail (position and
// value, the bulk of the frame) once and reuse it, so each of 1,000 members costs a short prefix only.
let tailFor: { position: number; valueJson: string; coalesced: boolean; bytes: Buffer } | null = null;

/** `{"jsonrpc":"2.0","method":"watch.update","params":{"subscription","position","value"[,"coalesced":true]}}` */
export function updateFrameBytes(u: WatchUpdate): Buffer {
  if (!tailFor || tailFor.valueJson !== u.valueJson || tailFor.position !== u.position || tailFor.coalesced !== u.coalesced) {
    tailFor = { position: u.position, valueJson: u.valueJson, coalesced: u.coalesced, bytes: Buffer.from(`,"position":${u.position},"value":${u.valueJson}${u.coalesced ? ',"coalesced":true' : ''}}}`) };
  }
  return Buffer.concat([Buffer.from(`{"jsonrpc":"2.0","method":"watch.update","params":{"subscription":${JSON.stringify(u.subscription)}`), tailFor.bytes]);
}

class WsConnection implements RpcConnection {
  readonly watchers = new Map<string, { close(): void }>();
  private chain: Promise<void> = Promise.resolve();
  private queued = 0;

  constructor(private readonly ws: WebSocket, private readonly dispatcher: RpcDispatcher, private readonly bearer: string | undefined) {
    ws.on('message', (data, isBinary) => {
      const text = isBinary ? Buffer.from(data as Buffer).toString('utf8') : data.toString();
      // Backpressure on the way in: a client that sends faster than it reads is not read from.
      if (++this.queued >= MAX_QUEUED_FRAMES) ws.pause();
      // Requests of one connection run in arrival order, so "file, then watch" means what it says.
      this.chain = this.chain
        .then(() => this.onFrame(text))
        .catch((err) => console.error('rpc websocket:', err))
        .finally(() => {
          this.queued--;
          if (ws.isPaused && this.queued < MAX_QUEUED_FRAMES / 2 && ws.bufferedAmount <= WS_HIGH_WATER_BYTES && ws.readyState === WebSocket.OPEN) ws.resume();
        });
    });
    ws.on('close', () => this.release());
    ws.on('error', () => this.release());
  }

  private async onFrame(text: string): Promise<void> {
    // Every connection's unsent bytes are bounded: the next request waits (unread) until the client
    // has taken what it was already sent.
    if (!(await this.drained())) return;
    const { response, parts, after } = await this.dispatcher.handle(text, { bearer: this.bearer, connection: this });
    if (this.ws.readyState === WebSocket.OPEN && (response !== null || parts)) {
      // One text message, sent as continuation frames so the shared parts are written, not copied.
      if (parts) parts.forEach((p, i) => this.ws.send(p, { binary: false, fin: i === parts.length - 1 }));
      else this.ws.send(response!);
      if (this.ws.bufferedAmount > WS_MAX_UNSENT_BYTES) return this.overflow();
    }
    for (const fn of after) fn();
  }

  /** Resolves true once unsent bytes are below the high-water mark; false when the connection ended. */
  private drained(): Promise<boolean> {
    const ws = this.ws;
    if (ws.readyState !== WebSocket.OPEN) return Promise.resolve(false);
    if (ws.bufferedAmount <= WS_HIGH_WATER_BYTES) return Promise.resolve(true);
    ws.pause();
    const since = Date.now();
    return new Promise((resolve) => {
      const check = () => {
        if (ws.readyState !== WebSocket.OPEN) return resolve(false);
        if (ws.bufferedAmount <= WS_HIGH_WATER_BYTES) return resolve(true);
        if (Date.now() - since > WS_STALL_MS) {
          this.overflow();
          return resolve(false);
        }
        setTimeout(check, 20);
      };
      setTimeout(check, 20);
    });
  }

  private overflow(): void {
    this.release();
    this.ws.terminate();
  }

  sink(): WatchSink {
    const ws = this.ws;
    return {
      send: (u) => {
        // binary: false — the frame is JSON text, sent from a shared buffer.
        if (ws.readyState !== WebSocket.OPEN) return;
        ws.send(updateFrameBytes(u), { binary: false });
        if (ws.bufferedAmount > WS_MAX_UNSENT_BYTES) this.overflow();
      },
      congested: () => ws.bufferedAmount > WS_HIGH_WATER_BYTES,
      onDrain: (cb) => {
        const check = () => {
          if (ws.readyState !== WebSocket.OPEN) return;
          if (ws.bufferedAmount <= WS_HIGH_WATER_BYTES) cb();
          else setTimeout(check, 10);
        };
        setTimeout(check, 0);
      },
      fail: (err: DomainError) => {
        if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ jsonrpc: '2.0', method: 'watch.error', params: { error: toRpcError(err) } }));
      },
    };
  }

  progressSink(): ProgressSink {
    const ws = this.ws;
    return {
      send: (subscription, update) => {
        if (ws.readyState !== WebSocket.OPEN) return;
        ws.send(JSON.stringify({ jsonrpc: '2.0', method: 'watch.update', params: { subscription, value: update } }));
        if (ws.bufferedAmount > WS_MAX_UNSENT_BYTES) this.overflow();
      },
      congested: () => ws.bufferedAmount > WS_HIGH_WATER_BYTES,
      onDrain: (cb) => {
        const check = () => {
          if (ws.readyState !== WebSocket.OPEN) return;
          if (ws.bufferedAmount <= WS_HIGH_WATER_BYTES) cb();
          else setTimeout(check, 10);
        };
        setTimeout(check, 0);
      },
    };
  }

  end(reason: DomainError): void {
    // 4001: application-defined (RFC 6455 §7.4.2); the reason is limited to 123 bytes.
    if (this.ws.readyState === WebSocket.OPEN) this.ws.close(4001, Buffer.from(`${reason.code}: ${reason.message}`).subarray(0, 123).toString('utf8').replace(/\uFFFD$/, ''));
    this.release();
  }

  private release(): void {
    for (const w of this.watchers.values()) w.close();
    this.watchers.clear();
  }
}

/**
 * A browser always sends Origin on a WebSocket upgrade, and the same-origin policy does not apply to
 * WebSockets: without this check any page the user visits could open /rpc with a token in the URL.
 * Allowed: no Origin (a non-browser client), the server's own origin (the review page), and the
 * operator's `allowedOrigins`.
 */
export function originAllowed(req: IncomingMessage, allowedOrigins: readonly string[] = []): boolean {
  const origin = req.headers.origin;
  if (origin === undefined) return true;
  const o = origin.toLowerCase().replace(/\/+$/, '');
  const host = (req.headers.host ?? '').toLowerCase();
  return (host !== '' && (o === `http://${host}` || o === `https://${host}`)) || allowedOrigins.includes(o);
}

/** JSON-RPC over WebSocket on `/rpc` of the same HTTP server. */
export function attachRpcWebSocket(server: Server, dispatcher: RpcDispatcher, allowedOrigins: readonly string[] = []): { close(): void; clients(): number } {
  const wss = new WebSocketServer({ noServer: true, maxPayload: LIMITS.maxBodyBytes });
  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== '/rpc') return;
    if (!originAllowed(req, allowedOrigins)) {
      socket.end('HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: 46\r\n\r\nOrigin: not this server nor an allowed origin\n');
      return;
    }
    const bearer = bearerFrom(req.headers.authorization) ?? url.searchParams.get('access_token') ?? undefined;
    wss.handleUpgrade(req, socket, head, (ws) => new WsConnection(ws, dispatcher, bearer));
  };
  server.on('upgrade', onUpgrade);
  return {
    clients: () => wss.clients.size,
    close() {
      server.off('upgrade', onUpgrade);
      for (const c of wss.clients) c.terminate();
      wss.close();
    },
  };
}
