import { Controller, Get, Inject, Injectable, Module, OnApplicationBootstrap, OnModuleDestroy, Param, Post, Req, Res } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { Ledger } from '../ledger';
import { bearerFrom } from '../security/tokens';
import { RpcDispatcher } from './dispatcher';
import { rawBodyMiddleware, type RawBodyRequest } from './raw-body';
import { serveSse } from './sse';
import { WatchHub } from './watch';
import { attachRpcWebSocket } from './ws-transport';

/** Routes whose bodies are read raw and bounded before any framework parser (see raw-body.ts). */
export const RAW_BODY_PATHS = ['/rpc', '/webhooks/github', '/mcp'];

/** Installs the raw-body reader first in the chain, then the WebSocket transport once the server exists. */
@Injectable()
export class RpcTransports implements OnApplicationBootstrap, OnModuleDestroy {
  private ws: ReturnType<typeof attachRpcWebSocket> | null = null;

  constructor(private readonly adapterHost: HttpAdapterHost, @Inject(RpcDispatcher) private readonly dispatcher: RpcDispatcher, @Inject(WatchHub) private readonly hub: WatchHub) {
    // Providers are created before Nest registers its body parsers, so this middleware runs first.
    adapterHost.httpAdapter.use(rawBodyMiddleware(RAW_BODY_PATHS));
  }

  onApplicationBootstrap(): void {
    this.ws = attachRpcWebSocket(this.adapterHost.httpAdapter.getHttpServer() as Server, this.dispatcher);
  }

  onModuleDestroy(): void {
    this.ws?.close();
    this.hub.close();
  }
}

@Controller()
export class RpcController {
  constructor(@Inject(Ledger) private readonly ledger: Ledger, @Inject(RpcDispatcher) private readonly dispatcher: RpcDispatcher, @Inject(WatchHub) private readonly hub: WatchHub) {}

  @Post('/rpc')
  async rpc(@Req() req: RawBodyRequest, @Res() res: ServerResponse): Promise<void> {
    const { response } = await this.dispatcher.handle((req.rawBody ?? Buffer.alloc(0)).toString('utf8'), { bearer: bearerFrom(req.headers.authorization) });
    if (response === null) {
      res.writeHead(204);
      res.end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(response);
  }

  @Get('/workspaces/:id/watch/:query')
  async sse(@Param('id') id: string, @Param('query') query: string, @Req() req: IncomingMessage, @Res() res: ServerResponse): Promise<void> {
    await serveSse(this.ledger, this.hub, id, query, req, res);
  }
}

@Module({
  controllers: [RpcController],
  providers: [
    { provide: WatchHub, useFactory: () => new WatchHub() },
    { provide: RpcDispatcher, useFactory: (ledger: Ledger, hub: WatchHub) => new RpcDispatcher(ledger, hub), inject: [Ledger, WatchHub] },
    RpcTransports,
  ],
  exports: [RpcDispatcher, WatchHub],
})
export class RpcModule {}
