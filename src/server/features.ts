// Feature modules of the HTTP server (RPC, webhooks, review page, …). One line each.
import type { Type } from '@nestjs/common';

export interface ServerFeature {
  module: Type<unknown>;
}

export const SERVER_FEATURES: ServerFeature[] = [];
