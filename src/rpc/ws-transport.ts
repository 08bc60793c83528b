import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import type { DomainError } from '../domain-error';
import { DEFAULT_CONNECTION_BOUNDS, type ConnectionBounds } from '../operator-config';

/** What one WebSocket connection is bounded by (the connection counts are the connection guard's). */
type SocketBounds = Pick<ConnectionBounds, 'budgetBytes' | 'slowReaderMs' | 'unauthenticatedMs'>;
import { hostAllowed } from '../security/host-check';
import { bearerFrom } from '../security/tokens';
import { readCookie, SESSION_COOKIE } from '../security/session-cookie';
import type { RpcConnection, RpcDispatcher } from './dispatcher';
import { toRpcError } from './errors';
import { LIMITS } from './limits';
import type { ProgressSink } from '../job-progress/hub';
import type { WatchSink, WatchUpdate } from './watch';

/** Above this many unsent bytes a subscriber counts as slow: its updates coalesce and its next request waits. */
export const WS_HIGH_WATER_BYTES = 256 * 1024;
/**
 * Past this many unsent bytes the connection is closed at once: only a single oversized answer on top of
 * the high-water mark can get here, since no request is answered above the mark.
 */
export const WS_MAX_UNSENT_BYTES = 8 * 1024 * 1024;
/** Requests read but not yet answered, past which the connection stops reading. */
const MAX_QUEUED_FRAMES = 8;
/** Close code for a client that does not take what it was sent (application range, RFC 6455 §7.4.2). */
export const WS_SLOW_READER_CLOSE = 4008;
/** After the slow-reader close frame is queued, how long the client has to take it before the socket is dropped. */
const CLOSE_GRACE_MS = 5000;

const frameBytes = (data: RawData): number => (Array.isArray(data) ? data.reduce((n, b) => n + b.length, 0) : (data as Buffer | ArrayBuffer).byteLength);

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
  /** Requests read and not yet answered: how many, and their bytes. */
  private queued = 0;
  private queuedBytes = 0;
  /** Requests waiting for the unsent bytes to fall below the high-water mark (true) or the end (false). */
  private waiting: Array<(open: boolean) => void> = [];
  private watchTimer: NodeJS.Timeout | null = null;
  /** Since when the unsent bytes have stayed above the high-water mark. */
  private overSince: number | null = null;
  private closing = false;
  private shuttingDown = false;
  /** Aborted when the socket closes: work of requests still running or queued stops (CallContext.signal). */
  private readonly gone = new AbortController();
  /** Runs until a request authenticates; then the connection is no longer closed as unauthenticated. */
  private authTimer: NodeJS.Timeout | null;

  constructor(private readonly ws: WebSocket, private readonly dispatcher: RpcDispatcher, private readonly bearer: string | undefined, private readonly bounds: SocketBounds) {
    this.authTimer = setTimeout(() => this.closeUnauthenticated(), bounds.unauthenticatedMs);
    this.authTimer.unref();
    ws.on('message', (data, isBinary) => {
      // Shutting down: a frame read now is not run (nor answered); the close (1001) tells the client to send it again elsewhere.
      if (this.shuttingDown) return;
      const text = isBinary ? Buffer.from(data as Buffer).toString('utf8') : data.toString();
      const bytes = frameBytes(data);
      this.queued++;
      this.queuedBytes += bytes;
      this.throttle();
      // Requests of one connection run in arrival order, so "file, then watch" means what it says.
      this.chain = this.chain
        .then(() => this.onFrame(text))
        .catch((err) => console.error('rpc websocket:', err))
        .finally(() => {
          this.queued--;
          this.queuedBytes -= bytes;
          this.throttle();
        });
    });
    ws.on('close', () => this.release());
    ws.on('error', () => this.release());
  }

  authenticated(): void {
    if (this.authTimer) clearTimeout(this.authTimer);
    this.authTimer = null;
  }

  /** No request authenticated in time (no token, or none that verifies): close, as HTTP cuts a slow request. */
  private closeUnauthenticated(): void {
    this.authTimer = null;
    if (this.ws.readyState !== WebSocket.OPEN || this.closing) return;
    this.closing = true;
    this.ws.close(4001, closeReason(`unauthorized: no authenticated request within ${this.bounds.unauthenticatedMs} ms`));
    setTimeout(() => this.ws.terminate(), CLOSE_GRACE_MS).unref();
  }

  /** What the connection holds in server memory now: requests not yet answered plus unsent answers. */
  held(): number {
    return this.queuedBytes + this.ws.bufferedAmount;
  }

  /**
   * Backpressure on the way in: past the byte budget or the frame count the connection is not read from
   * (the client's writes back up in its own kernel buffers); it is read again once both are under half.
   */
  private throttle(): void {
    const ws = this.ws;
    if (ws.readyState !== WebSocket.OPEN || this.closing) return;
    if (this.queued >= MAX_QUEUED_FRAMES || this.held() > this.bounds.budgetBytes) {
      ws.pause();
      // Unsent bytes fall without any event: watch them, or nothing would ever resume an idle connection.
      if (ws.bufferedAmount > 0) this.watchUnsent();
    } else if (ws.isPaused && this.queued < MAX_QUEUED_FRAMES / 2 && this.held() <= this.bounds.budgetBytes / 2) ws.resume();
  }

  private async onFrame(text: string): Promise<void> {
    // The next request waits (its answer not even computed) until the client has taken what it was sent.
    if (!(await this.roomToAnswer())) return;
    const { response, parts, after } = await this.dispatcher.handle(text, { bearer: this.bearer, connection: this, signal: this.gone.signal });
    if (this.ws.readyState === WebSocket.OPEN && (response !== null || parts)) {
      // One text message, sent as continuation frames so the shared parts are written, not copied.
      if (parts) parts.forEach((p, i) => this.ws.send(p, { binary: false, fin: i === parts.length - 1 }));
      else this.ws.send(response!);
      if (!this.checkUnsent()) return;
    }
    for (const fn of after) fn();
  }

  /** Resolves true once unsent bytes are below the high-water mark; false when the connection ended. */
  private roomToAnswer(): Promise<boolean> {
    if (this.ws.readyState !== WebSocket.OPEN || this.closing) return Promise.resolve(false);
    if (this.ws.bufferedAmount <= WS_HIGH_WATER_BYTES) return Promise.resolve(true);
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      this.watchUnsent();
    });
  }

  /** After a send: false (and the connection closing) past the hard cap; above the mark, the slow-reader clock runs. */
  private checkUnsent(): boolean {
    const unsent = this.ws.bufferedAmount;
    if (unsent > WS_MAX_UNSENT_BYTES) {
      this.closeSlowReader(`${unsent} bytes unsent, more than ${WS_MAX_UNSENT_BYTES}`);
      return false;
    }
    if (unsent > WS_HIGH_WATER_BYTES) this.watchUnsent();
    return true;
  }

  /** Polls the unsent bytes while they are above zero and someone waits, or above the mark (the stall clock). */
  private watchUnsent(): void {
    if (this.watchTimer || this.closing) return;
    const tick = () => {
      this.watchTimer = null;
      const ws = this.ws;
      if (ws.readyState !== WebSocket.OPEN) return this.wake(false);
      const unsent = ws.bufferedAmount;
      if (unsent <= WS_HIGH_WATER_BYTES) {
        this.overSince = null;
        this.wake(true);
        this.throttle();
        if (!ws.isPaused || unsent === 0) return;
      } else {
        const now = Date.now();
        this.overSince ??= now;
        if (now - this.overSince > this.bounds.slowReaderMs) return this.closeSlowReader(`more than ${WS_HIGH_WATER_BYTES} bytes unsent for ${this.bounds.slowReaderMs} ms`);
      }
      this.watchTimer = setTimeout(tick, 20);
    };
    this.watchTimer = setTimeout(tick, 20);
  }

  private wake(open: boolean): void {
    const waiting = this.waiting;
    this.waiting = [];
    for (const w of waiting) w(open);
  }

  /**
   * A client that does not take what it was sent is closed with 4008 and a reason: the close frame waits
   * behind the unsent bytes, so a client that is merely slow reads it; one that never reads is dropped
   * after a grace period, which frees what it held.
   */
  private closeSlowReader(why: string): void {
    if (this.closing) return;
    this.closing = true;
    if (this.watchTimer) clearTimeout(this.watchTimer);
    this.watchTimer = null;
    this.wake(false);
    this.release();
    const ws = this.ws;
    if (ws.readyState === WebSocket.OPEN) ws.close(WS_SLOW_READER_CLOSE, closeReason(`slow_reader: ${why}`));
    // Read again, or the client's answering close frame would never be seen; what else it sent is dropped.
    ws.resume();
    setTimeout(() => ws.terminate(), CLOSE_GRACE_MS).unref();
  }

  sink(): WatchSink {
    const ws = this.ws;
    return {
      send: (u) => {
        // binary: false — the frame is JSON text, sent from a shared buffer.
        if (ws.readyState !== WebSocket.OPEN) return;
        ws.send(updateFrameBytes(u), { binary: false });
        this.checkUnsent();
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
        this.checkUnsent();
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

  /**
   * Server shutdown: requests already read are answered, then the socket closes with 1001 (going away);
   * frames arriving meanwhile are not run. Watchers were told `watch_closed` by the hub: the client
   * reconnects (another server, or this one restarted) and resumes with since.
   */
  async shutdown(): Promise<void> {
    if (this.shuttingDown) return;
    this.shuttingDown = true;
    this.ws.pause();
    for (let c = this.chain; ; c = this.chain) {
      await c;
      if (c === this.chain) break;
    }
    if (this.ws.readyState === WebSocket.CLOSED) return;
    const closed = new Promise<void>((resolve) => this.ws.once('close', () => resolve()));
    // Read again, or the client's closing frame would never be read (frames before it are not run).
    this.ws.resume();
    if (this.ws.readyState === WebSocket.OPEN) this.ws.close(1001, 'server shutting down: connect again and resume with since');
    setTimeout(() => this.ws.terminate(), CLOSE_GRACE_MS).unref();
    await closed;
  }

  end(reason: DomainError): void {
    // 4001: application-defined (RFC 6455 §7.4.2); the reason is limited to 123 bytes.
    if (this.ws.readyState === WebSocket.OPEN) this.ws.close(4001, closeReason(`${reason.code}: ${reason.message}`));
    this.release();
  }

  private release(): void {
    this.authenticated();
    this.gone.abort();
    for (const w of this.watchers.values()) w.close();
    this.watchers.clear();
  }
}

/** A close reason is limited to 123 bytes; cut on a character boundary. */
const closeReason = (text: string): string => Buffer.from(text).subarray(0, 123).toString('utf8').replace(/\uFFFD$/, '');

/**
 * A browser always sends Origin on a WebSocket upgrade, and the same-origin policy does not apply to
 * WebSockets: without this check any page the user visits could open /rpc with a token in the URL.
 * Allowed: no Origin (a non-browser client), the server's own origin (the review page) and the
 * operator's `allowedOrigins` — and, for a browser, only under a Host this server answers to: a
 * rebound name makes a hostile page "same-origin" (see security/host-check.ts).
 */
export function originAllowed(req: IncomingMessage, allowedOrigins: readonly string[] = [], allowedHosts: readonly string[] = []): boolean {
  const origin = req.headers.origin;
  if (origin === undefined) return true;
  if (!hostAllowed(req.headers.host, allowedHosts)) return false;
  // Trailing slashes dropped by hand: /\/+$/ retried a run of them from each slash (quadratic), and
  // this runs before any token is checked — a 16 KiB Origin of slashes took ~200 ms per upgrade.
  let end = origin.length;
  while (end > 0 && origin.charCodeAt(end - 1) === 0x2f) end--;
  const o = origin.slice(0, end).toLowerCase();
  const host = (req.headers.host ?? '').toLowerCase();
  return (host !== '' && (o === `http://${host}` || o === `https://${host}`)) || allowedOrigins.includes(o);
}

/** JSON-RPC over WebSocket on `/rpc` of the same HTTP server. */
export function attachRpcWebSocket(
  server: Server,
  dispatcher: RpcDispatcher,
  allowedOrigins: readonly string[] = [],
  bounds: SocketBounds = DEFAULT_CONNECTION_BOUNDS,
  allowedHosts: readonly string[] = [],
): { close(): void; shutdown(): Promise<void>; clients(): number } {
  const wss = new WebSocketServer({ noServer: true, maxPayload: LIMITS.maxBodyBytes });
  const connections = new Map<WebSocket, WsConnection>();
  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== '/rpc') return;
    if (!originAllowed(req, allowedOrigins, allowedHosts)) {
      socket.end('HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: 46\r\n\r\nOrigin: not this server nor an allowed origin\n');
      return;
    }
    // The Review page signed in through the identity provider: its SameSite=Strict session cookie (never sent
    // by another site's page) on an upgrade whose Origin passed the check above.
    const bearer = bearerFrom(req.headers.authorization) ?? url.searchParams.get('access_token') ?? readCookie(req, SESSION_COOKIE) ?? undefined;
    wss.handleUpgrade(req, socket, head, (ws) => {
      connections.set(ws, new WsConnection(ws, dispatcher, bearer, bounds));
      ws.once('close', () => connections.delete(ws));
    });
  };
  server.on('upgrade', onUpgrade);
  return {
    clients: () => wss.clients.size,
    /** Graceful (server shutdown): no new upgrade; each connection answers what it read, then closes 1001. */
    async shutdown() {
      server.off('upgrade', onUpgrade);
      await Promise.all([...connections.values()].map((c) => c.shutdown()));
    },
    close() {
      server.off('upgrade', onUpgrade);
      for (const c of wss.clients) c.terminate();
      wss.close();
    },
  };
}
