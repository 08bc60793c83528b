import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import * as net from 'node:net';
import type { Duplex } from 'node:stream';
import { DomainError } from '../domain-error';
import { httpStatusOf, toRpcError } from '../rpc/errors';

/**
 * Shutting down without dropping a request (SIGTERM or SIGINT of `serve`: a rolling deploy, a restart).
 * Before, Nest's shutdown hook closed the application and raised the signal again while requests ran:
 * under load every request in flight (24 of 24) saw its connection reset, the process died of the
 * signal and left its data-dir lock behind. Now every request is either answered or refused, never cut:
 *
 * 1. `begin()`: the listening socket closes (new connections are refused by the kernel), requests that
 *    arrive on connections already open are answered `503 server_shutting_down` (retryable: send it again,
 *    to another server or here once restarted) with `Connection: close` and nothing runs for them, and
 *    every response still to be written carries `Connection: close`.
 * 2. `idle()`: resolves once every request read before `begin()` has been answered (or its client left).
 *    Streams (SSE, WebSocket) are ended by their transports meanwhile (RpcTransports.drainStreams).
 * 3. `force()`: after the operator's `connections.drainMs`, whatever is still open is closed. A command
 *    cut here may still commit without its answer reaching the client; resending it with the same
 *    idempotency key returns the original answer, so it is stored once either way.
 */
export interface ServerDrain {
  begin(): void;
  idle(): Promise<void>;
  /** Closes every connection still open; returns how many requests were still unanswered. */
  force(): number;
}

/**
 * After the requests in flight are answered, how long connections left open (idle keep-alive ones) get to
 * send one more request — answered 503 with `Connection: close` — before they are closed. Closing them at
 * once cut every client of a busy server: its answer just read, it was writing the next request on the
 * same connection (22 of 24 connections reset under load). A client idle this long is idle indeed.
 */
const KEEP_ALIVE_LINGER_MS = 1_000;

export function installDrain(server: Server): ServerDrain {
  /** Responses of requests read and not yet answered. */
  const active = new Set<ServerResponse>();
  /** Every client connection still open (upgraded WebSockets too). */
  const sockets = new Set<net.Socket>();
  let draining = false;
  /** Checks waiting for the sets above to shrink, run on every change while draining. */
  let checks: Array<() => void> = [];
  const changed = (): void => {
    if (!draining) return;
    const run = checks;
    checks = [];
    for (const c of run) c();
  };
  const until = (done: () => boolean): Promise<void> =>
    new Promise((resolve) => {
      const check = (): void => {
        if (done()) resolve();
        else checks.push(check);
      };
      check();
    });
  server.on('connection', (socket: net.Socket) => {
    sockets.add(socket);
    socket.once('close', () => {
      sockets.delete(socket);
      changed();
    });
  });
  // Installed after the framework and the RPC fast path (startServer calls this once listening): the
  // check runs before any of them, so a refused request reaches no handler.
  const handlers = server.listeners('request') as Array<(req: IncomingMessage, res: ServerResponse) => void>;
  server.removeAllListeners('request');
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (draining) return refuse(req, res);
    active.add(res);
    res.once('close', () => {
      active.delete(res);
      changed();
    });
    for (const h of handlers) h.call(server, req, res);
  });
  // A WebSocket upgrade once draining: the transport has stopped taking them (its listener is gone).
  server.prependListener('upgrade', (_req: IncomingMessage, socket: Duplex) => {
    if (!draining) return;
    socket.end('HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nRetry-After: 1\r\nContent-Type: text/plain\r\nContent-Length: 28\r\n\r\nthe server is shutting down\n');
  });
  return {
    begin() {
      if (draining) return;
      draining = true;
      // net.Server's close, not http.Server's: that one also closes idle keep-alive connections at once,
      // and a client writing its next request on one just then sees a reset instead of an answer. They
      // stay open while the drain runs (a request sent on one gets the 503 and `Connection: close`);
      // those still idle after the linger are closed by http.Server's close, through Nest's.
      net.Server.prototype.close.call(server);
      for (const res of active) if (!res.headersSent) res.shouldKeepAlive = false;
    },
    async idle() {
      await until(() => active.size === 0);
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([until(() => sockets.size === 0), new Promise<void>((resolve) => (timer = setTimeout(resolve, KEEP_ALIVE_LINGER_MS)))]);
      clearTimeout(timer);
    },
    force() {
      const left = active.size;
      server.closeAllConnections();
      return left;
    },
  };
}

function refuse(req: IncomingMessage, res: ServerResponse): void {
  const err = new DomainError('server_shutting_down', 'the server is shutting down and runs no new request: send it again (to another server, or to this one once restarted)');
  const url = req.url ?? '';
  const rpc = req.method === 'POST' && (url === '/rpc' || url.startsWith('/rpc?'));
  const body = JSON.stringify(rpc ? { jsonrpc: '2.0', id: null, error: toRpcError(err) } : { error: toRpcError(err) });
  res.shouldKeepAlive = false;
  res.writeHead(httpStatusOf(err), { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'retry-after': '1' });
  res.end(body);
}
