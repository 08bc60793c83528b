import { Controller, Get, Inject, Injectable, Module, OnApplicationBootstrap, OnModuleDestroy, Param, Req, Res } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import { Ledger } from '../ledger';
import { PROGRESS_HUB_SERVICE, ProgressHub } from '../job-progress/hub';
import { hostAllowed, hostName, hostRefusal } from '../security/host-check';
import { denyFraming } from '../security/frame-headers';
import { bearerFrom } from '../security/tokens';
import { credentialOf } from '../security/session-cookie';
import { httpStatusOf, toRpcError } from './errors';
import { RpcDispatcher } from './dispatcher';
import { LIMITS } from './limits';
import { rawBodyMiddleware, readBoundedBody, type RawBodyRequest } from './raw-body';
import { isProgressPath, serveProgressSse, serveSse } from './sse';
import { WatchHub } from './watch';
import { attachRpcWebSocket } from './ws-transport';
import { LazyAbort } from '../lazy-abort';

/**
 * `POST /rpc` takes `application/json` only. text/plain, form encodings and a body with no type are what
 * a web page on another origin can send without a CORS preflight; refusing them keeps such pages out.
 */
export function isJsonContentType(header: string | undefined): boolean {
  return typeof header === 'string' && /^application\/json\s*(?:;.*)?$/i.test(header.trim());
}

function refuseMediaType(req: IncomingMessage, res: ServerResponse): void {
  const body = '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Content-Type: POST /rpc accepts application/json only","data":{"code":"unsupported_media_type"}}}';
  res.writeHead(415, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), connection: 'close' });
  res.end(body);
  // The body is not read: the connection closes once the answer is written.
  req.resume();
}

/** A browser request (it carries Origin) under a Host this server does not answer to: DNS rebinding. */
function refuseHost(req: IncomingMessage, res: ServerResponse): void {
  const body = hostRefusal(req.headers.host);
  res.writeHead(403, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), connection: 'close' });
  res.end(body);
  req.resume();
}

/** The names browsers may reach this server by: the operator's `allowedHosts` and the listen host. */
export function serverHostNames(ledger: Ledger): string[] {
  const listen = hostName(ledger.config.host);
  return [...ledger.operator.allowedHosts, ...(listen ? [listen] : [])];
}

async function answerRpc(dispatcher: RpcDispatcher, req: RawBodyRequest, res: ServerResponse): Promise<void> {
  try {
    // A client that goes away before its answer is written stops the rest of its work (CallContext.signal).
    // Made on first use (LazyAbort): commands never read the signal.
    const gone = new LazyAbort();
    res.once('close', () => {
      if (!res.writableFinished) gone.abort();
    });
    let bearer: string | undefined;
    try {
      // The Review page's session cookie counts only with the CSRF header (src/security/session-cookie.ts).
      bearer = credentialOf(req, bearerFrom(req.headers.authorization));
    } catch (err) {
      const body = JSON.stringify({ jsonrpc: '2.0', id: null, error: toRpcError(err) });
      res.writeHead(httpStatusOf(err), { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
      return;
    }
    const { response, parts } = await dispatcher.handle(req.rawBody!.toString('utf8'), {
      bearer,
      get signal() {
        return gone.signal;
      },
    });
    if (parts) {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': parts.reduce((n, p) => n + p.length, 0) });
      for (const p of parts) res.write(p);
      res.end();
      return;
    }
    if (response === null) {
      res.writeHead(204);
      res.end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(response) });
    res.end(response);
  } catch (err) {
    console.error('rpc:', err);
    if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
    res.end('{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"internal error","data":{"code":"internal"}}}');
  }
}

/**
 * `POST /rpc` answered on the HTTP server's own 'request' event, before Express: under load the router,
 * its per-request `next` chain and Express's request/response decoration cost as much CPU as the
 * command itself (profiled with `npm run bench:rpc -- --only http --server-cpu-prof <dir>`). Every other
 * request goes to the framework's listeners unchanged; the Express middleware above stays as the path
 * for servers built without this hook.
 */
function installRpcFastPath(server: Server, dispatcher: RpcDispatcher, allowedHosts: readonly string[]): void {
  const framework = server.listeners('request') as RequestListener[];
  server.removeAllListeners('request');
  server.on('request', (req: RawBodyRequest, res: ServerResponse) => {
    denyFraming(res);
    // Every route, not only /rpc: a rebound page must not read the review page's API either.
    if (req.headers.origin !== undefined && !hostAllowed(req.headers.host, allowedHosts)) return refuseHost(req, res);
    const url = req.url ?? '';
    if (req.method === 'POST' && (url === '/rpc' || url.startsWith('/rpc?'))) {
      if (!isJsonContentType(req.headers['content-type'])) return refuseMediaType(req, res);
      readBoundedBody(req, res, LIMITS.maxBodyBytes, (err) => {
        if (err) {
          if (!res.headersSent) res.writeHead(400, { 'content-type': 'application/json', connection: 'close' });
          res.end();
          return;
        }
        void answerRpc(dispatcher, req, res);
      });
      return;
    }
    for (const listener of framework) listener.call(server, req, res);
  });
}

/** Routes whose bodies are read raw and bounded before any framework parser (see raw-body.ts). */
export const RAW_BODY_PATHS = ['/rpc', '/webhooks/github', '/mcp'];

/** Installs the raw-body reader first in the chain, then the WebSocket transport once the server exists. */
@Injectable()
export class RpcTransports implements OnApplicationBootstrap, OnModuleDestroy {
  private ws: ReturnType<typeof attachRpcWebSocket> | null = null;

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    @Inject(RpcDispatcher) private readonly dispatcher: RpcDispatcher,
    @Inject(WatchHub) private readonly hub: WatchHub,
    @Inject(ProgressHub) private readonly progress: ProgressHub,
    @Inject(Ledger) private readonly ledger: Ledger,
  ) {
    // Providers are created before Nest registers its body parsers, so this middleware runs first.
    adapterHost.httpAdapter.use(rawBodyMiddleware(RAW_BODY_PATHS));
    // POST /rpc is answered right here: JSON-RPC has its own envelope, errors and status mapping, so
    // Nest's route pipeline (guards, pipes, filters) would only add cost to the hottest path.
    const hosts = serverHostNames(ledger);
    adapterHost.httpAdapter.use((req: RawBodyRequest, res: ServerResponse, next: () => void) => {
      denyFraming(res);
      if (req.headers.origin !== undefined && !hostAllowed(req.headers.host, hosts)) return refuseHost(req, res);
      if (req.method !== 'POST' || (req.url ?? '').split('?')[0] !== '/rpc' || !req.rawBody) return next();
      if (!isJsonContentType(req.headers['content-type'])) return refuseMediaType(req, res);
      void answerRpc(dispatcher, req, res);
    });
  }

  onApplicationBootstrap(): void {
    const server = this.adapterHost.httpAdapter.getHttpServer() as Server;
    const hosts = serverHostNames(this.ledger);
    installRpcFastPath(server, this.dispatcher, hosts);
    this.ws = attachRpcWebSocket(server, this.dispatcher, this.ledger.operator.allowedOrigins, this.ledger.operator.connections, hosts);
  }

  /**
   * Server shutdown, before the HTTP server drains (server/graceful-shutdown.ts): WebSocket connections
   * answer what they read and close 1001; SSE streams (queries and progress) end with `watch_closed`,
   * as do WebSocket watches, so subscribers resume elsewhere with since.
   */
  async drainStreams(): Promise<void> {
    const ws = this.ws?.shutdown();
    this.hub.close();
    this.progress.close();
    await ws;
  }

  onModuleDestroy(): void {
    this.ws?.close();
    this.hub.close();
    this.progress.close();
    if (this.ledger.services.get(PROGRESS_HUB_SERVICE) === this.progress) this.ledger.services.delete(PROGRESS_HUB_SERVICE);
  }
}

@Controller()
export class RpcController {
  constructor(@Inject(Ledger) private readonly ledger: Ledger, @Inject(WatchHub) private readonly hub: WatchHub, @Inject(ProgressHub) private readonly progress: ProgressHub) {}

  @Get('/workspaces/:id/watch/:query')
  async sse(@Param('id') id: string, @Param('query') query: string, @Req() req: IncomingMessage, @Res() res: ServerResponse): Promise<void> {
    if (isProgressPath(query)) return serveProgressSse(this.ledger, this.progress, id, req, res);
    await serveSse(this.ledger, this.hub, id, query, req, res);
  }
}

@Module({
  controllers: [RpcController],
  providers: [
    { provide: WatchHub, useFactory: (ledger: Ledger) => new WatchHub({ maxResponseBytes: ledger.config.maxResponseBytes }), inject: [Ledger] },
    {
      provide: ProgressHub,
      // Registered as a ledger service so the index/compute commands (wherever they are called from:
      // RPC, MCP, webhooks) report to this server's subscribers.
      useFactory: (ledger: Ledger) => {
        const progress = new ProgressHub();
        ledger.services.set(PROGRESS_HUB_SERVICE, progress);
        return progress;
      },
      inject: [Ledger],
    },
    { provide: RpcDispatcher, useFactory: (ledger: Ledger, hub: WatchHub, progress: ProgressHub) => new RpcDispatcher(ledger, hub, progress), inject: [Ledger, WatchHub, ProgressHub] },
    RpcTransports,
  ],
  exports: [RpcDispatcher, WatchHub, ProgressHub],
})
export class RpcModule {}
