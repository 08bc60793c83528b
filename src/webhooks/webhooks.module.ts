import { Controller, Inject, Module, Post, Req, Res } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import { Ledger } from '../ledger';
import { httpStatusOf, toRpcError } from '../rpc/errors';
import type { RawBodyRequest } from '../rpc/raw-body';
import { AutoRecomputeSaga } from './auto-recompute.saga';
import { handleGithubWebhook } from './github';

const header = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v);

@Controller()
export class GithubWebhookController {
  constructor(@Inject(Ledger) private readonly ledger: Ledger) {}

  /** The body is read raw by the RPC module's middleware (the HMAC covers the exact bytes). */
  @Post('/webhooks/github')
  async github(@Req() req: RawBodyRequest, @Res() res: ServerResponse): Promise<void> {
    try {
      const url = new URL(req.url ?? '/', 'http://localhost');
      const out = await handleGithubWebhook(this.ledger, {
        workspaceId: url.searchParams.get('workspace_id') ?? undefined,
        event: header(req.headers['x-github-event']),
        deliveryId: header(req.headers['x-github-delivery']),
        signature: header(req.headers['x-hub-signature-256']),
        body: req.rawBody ?? Buffer.alloc(0),
      });
      res.writeHead(out.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(out.body));
    } catch (err) {
      const e = toRpcError(err);
      if (e.data?.code === 'internal') console.error('webhook:', err);
      res.writeHead(httpStatusOf(err), { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: e }));
    }
  }
}

@Module({ controllers: [GithubWebhookController], providers: [AutoRecomputeSaga] })
export class WebhooksModule {}
