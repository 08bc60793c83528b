import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { INestApplication } from '@nestjs/common';
import { AppModule } from './app.module';
import { Ledger } from '../ledger';
import { LedgerConfig, loadConfig } from '../config';

export interface RunningServer {
  app: INestApplication;
  ledger: Ledger;
  url: string;
  close(): Promise<void>;
}

/** Starts the HTTP server on the configured host (127.0.0.1 unless configured otherwise). */
export async function startServer(overrides: Partial<LedgerConfig> = {}, ledger?: Ledger): Promise<RunningServer> {
  const config = ledger?.config ?? loadConfig(overrides);
  const l = ledger ?? new Ledger(config);
  const app = await NestFactory.create(AppModule.forLedger(l), { logger: ['error', 'warn'], bodyParser: true });
  app.enableShutdownHooks();
  const hooks = l.services.get('server.hooks') as Array<(app: INestApplication, ledger: Ledger) => Promise<void> | void> | undefined;
  for (const hook of hooks ?? []) await hook(app, l);
  await app.listen(config.port, config.host);
  const addr = app.getHttpServer().address();
  const url = `http://${config.host}:${typeof addr === 'object' && addr ? addr.port : config.port}`;
  return {
    app,
    ledger: l,
    url,
    async close() {
      await app.close();
      await l.close();
    },
  };
}
