// Feature modules of the HTTP server (RPC, webhooks, review page, …). One line each.
import type { Type } from '@nestjs/common';
import { SecurityModule } from '../security/security.module';
import { RpcModule } from '../rpc/rpc.module';
import { WebhooksModule } from '../webhooks/webhooks.module';
import { McpModule } from '../mcp/mcp.module';
import { ReviewPageModule } from '../web/review-page.module';
import { SignInModule } from '../web/sign-in.module';
import { AuditModule } from '../audit/audit.module';
import { StatusCheckModule } from '../status-check/status-check.module';

export interface ServerFeature {
  module: Type<unknown>;
}

export const SERVER_FEATURES: ServerFeature[] = [
  { module: SecurityModule },
  { module: RpcModule },
  { module: WebhooksModule },
  { module: McpModule },
  { module: ReviewPageModule },
  { module: SignInModule },
  { module: AuditModule },
  { module: StatusCheckModule },
];
