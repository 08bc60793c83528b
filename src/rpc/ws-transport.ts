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

  constructor(private readonly ws: WebSocket, private readonly dispatcher: RpcDispatcher, private readonly bearer: string | undefined) {
    ws.on('message', (data, isBinary) => {
      const text = isBinary ? Buffer.from(data as Buffer).toString('utf8') : data.toString();
      // Requests of one connection run in arrival order, so "file, then watch" means what it says.
      this.chain = this.chain.then(() => this.onFrame(text)).catch((err) => console.error('rpc websocket:', err));
    });
    ws.on('close', () => this.release());
    ws.on('error', () => this.release());
  }

  private async onFrame(text: string): Promise<void> {
    const { response, after } = await this.dispatcher.handle(text, { bearer: this.bearer, connection: this });
    if (response !== null && this.ws.readyState === WebSocket.OPEN) this.ws.send(response);
    for (const fn of after) fn();
  }

  sink(): WatchSink {
    const ws = this.ws;
    return {
      send: (u) => {
        // binary: false — the frame is JSON text, sent from a shared buffer.
        if (ws.readyState === WebSocket.OPEN) ws.send(updateFrameBytes(u), { binary: false });
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
        if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ jsonrpc: '2.0', method: 'watch.update', params: { subscription, value: update } }));
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

/** JSON-RPC over WebSocket on `/rpc` of the same HTTP server. */
export function attachRpcWebSocket(server: Server, dispatcher: RpcDispatcher): { close(): void; clients(): number } {
  const wss = new WebSocketServer({ noServer: true, maxPayload: LIMITS.maxBodyBytes });
  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== '/rpc') return;
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
