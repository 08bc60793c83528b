import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { INestApplication } from '@nestjs/common';
import { AppModule } from './app.module';
import { Ledger } from '../ledger';
import { LedgerConfig, loadConfig } from '../config';
import { mkdirPrivate } from '../events/store/private-files';
// Workspace-wide queries (audit, …) answer from checkpointed read models: installs the answerer into runQuery.
import '../readmodels/registry';

export interface RunningServer {
  app: INestApplication;
  ledger: Ledger;
  url: string;
  close(): Promise<void>;
}

/** Starts the HTTP server on the configured host (127.0.0.1 unless configured otherwise). */
export async function startServer(overrides: Partial<LedgerConfig> = {}, ledger?: Ledger): Promise<RunningServer> {
  // With a ledger given, its store config stands, but where to listen still comes from the caller:
  // a test asking for port 0 must never bind the operator's 3000.
  const config = ledger
    ? { ...ledger.config, host: overrides.host ?? ledger.config.host, port: overrides.port ?? ledger.config.port }
    : loadConfig(overrides);
  const l = ledger ?? new Ledger(config);
  // Repos registered over RPC are cloned or kept here: the server user's alone, like the data dir.
  mkdirPrivate(l.operator.repoRoot);
  const app = await NestFactory.create(AppModule.forLedger(l), { logger: ['error', 'warn'], bodyParser: true });
  app.enableShutdownHooks();
  const hooks = l.services.get('server.hooks') as Array<(app: INestApplication, ledger: Ledger) => Promise<void> | void> | undefined;
  for (const hook of hooks ?? []) await hook(app, l);
  try {
    await app.listen(config.port, config.host);
  } catch (err) {
    // A server that cannot bind must not linger: close the app (and the ledger we opened), then throw.
    await app.close().catch(() => undefined);
    if (!ledger) await l.close().catch(() => undefined);
    throw err;
  }
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
