import 'reflect-metadata';
import * as net from 'node:net';
import { NestFactory } from '@nestjs/core';
import type { INestApplication } from '@nestjs/common';
import { AppModule } from './app.module';
import { Ledger } from '../ledger';
import { LedgerConfig, loadConfig } from '../config';
import { mkdirPrivate } from '../stores/private-files';
import { DomainError } from '../domain-error';
import { lockDataDir } from './data-dir-lock';
import { attachReadModels } from '../readmodels/stored/registry';
import { guardConnections } from './connection-guard';
import { installDrain } from './graceful-shutdown';
import { JOB_SLOTS } from '../compute/job-slots';
import { RpcTransports } from '../rpc/rpc.module';
// Workspace-wide queries (audit, …) answer from checkpointed read models: installs the answerer into runQuery.

export interface RunningServer {
  app: INestApplication;
  ledger: Ledger;
  url: string;
  /** Closes at once: connections still open are cut (tests, a failed start). */
  close(): Promise<void>;
  /**
   * Closes without cutting a request (`serve` on SIGTERM / SIGINT; graceful-shutdown.ts): new requests
   * are refused, those already read are answered and commands still running finish, their clients gone
   * or not (all within `connections.drainMs`), streams end with `watch_closed`; then the stores close
   * and the data-dir lock is released. Resolves with how many requests were still unanswered at the
   * deadline and cut (a command still running then meets its store closed: store_unavailable).
   */
  shutdown(): Promise<{ cut: number }>;
}

/** A bind failure as the operator should read it: which address, and why. */
function listenError(err: unknown, host: string, port: number): unknown {
  const code = (err as { code?: string }).code;
  if (code === 'EADDRINUSE') return new DomainError('port_in_use', `port: ${host}:${port} is in use by another process (choose another with --port or REVIEW_LEDGER_PORT)`, { host, port });
  if (code === 'EACCES') return new DomainError('invalid_port', `port: binding ${host}:${port} is not permitted for this user`, { host, port });
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') return new DomainError('invalid_config', `host: ${host} is not an address of this machine`, { host });
  return err;
}

/** Binds and releases host:port once: the error listen would give, before any side effect. */
function assertPortFree(host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', (err) => reject(listenError(err, host, port)));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()));
  });
}

/**
 * Opens the shared store, and while a PostgreSQL store is away (refused, reset, starting up: a
 * store_unavailable that says when to retry) keeps trying for `postgres.startWaitMs`, backing off from
 * 250 ms to 5 s, so that a server restarted during a database restart or failover comes up with the
 * database instead of exiting. What no retry can fix (a wrong password, a missing database, an outdated
 * schema a CLI read may not migrate) is thrown at once.
 */
async function storeReady(l: Ledger, store: LedgerConfig['store'], log: (line: string) => void = (line) => process.stderr.write(`${line}\n`)): Promise<void> {
  const waitMs = store === 'postgres' ? l.operator.postgres.startWaitMs : 0;
  const giveUpAt = Date.now() + waitMs;
  for (let delay = 250; ; delay = Math.min(delay * 2, 5_000)) {
    try {
      await l.workspaces.ready();
      return;
    } catch (err) {
      const retryable = err instanceof DomainError && err.code === 'store_unavailable' && typeof err.details?.retryAfterMs === 'number';
      const left = giveUpAt - Date.now();
      if (!retryable || left <= 0) throw err;
      const wait = Math.min(delay, left);
      log(`review-ledger: ${(err as Error).message}: retrying in ${wait} ms (gives up ${Math.ceil(left / 1000)} s from now; postgres.startWaitMs)`);
      await new Promise((r) => setTimeout(r, wait));
    }
  }
}

/** Starts the HTTP server on the configured host (127.0.0.1 unless configured otherwise). */
export async function startServer(overrides: Partial<LedgerConfig> = {}, ledger?: Ledger): Promise<RunningServer> {
  // With a ledger given, its store config stands, but where to listen still comes from the caller:
  // a test asking for port 0 must never bind the operator's 3000.
  const config = ledger
    ? { ...ledger.config, host: overrides.host ?? ledger.config.host, port: overrides.port ?? ledger.config.port }
    : loadConfig(overrides);
  // A port another process holds is refused before anything is created (issue 38: a data dir and an
  // owner token were written, then the bind failed). The bind below still answers the rare race.
  if (config.port !== 0) await assertPortFree(config.host, config.port);
  // Refused before anything is opened: one server per SQLite data dir (data-dir-lock.ts).
  const lock = config.store === 'sqlite' ? lockDataDir(config.dataDir) : null;
  let l: Ledger;
  try {
    l = ledger ?? new Ledger(config, { onOpenWorkspace: attachReadModels });
  } catch (err) {
    lock?.release();
    throw err;
  }
  // Repos registered over RPC are cloned or kept here: the server user's alone, like the data dir.
  mkdirPrivate(l.operator.repoRoot);
  // Index/compute jobs of this process: the operator's bounds (compute/job-slots.ts).
  JOB_SLOTS.configure(l.operator.jobs);
  try {
    // PostgreSQL: open the shared store now, migrating it once if it is behind (`serve` may; CLI reads may not).
    await storeReady(l, config.store);
  } catch (err) {
    if (!ledger) await l.close().catch(() => undefined);
    lock?.release();
    throw err;
  }
  let app: INestApplication;
  try {
    app = await NestFactory.create(AppModule.forLedger(l), { logger: ['error', 'warn'], bodyParser: true });
  } catch (err) {
    if (!ledger) await l.close().catch(() => undefined);
    lock?.release();
    throw err;
  }
  // No Nest shutdown hooks: they close the app and raise the signal again while requests still run.
  // `serve` handles SIGTERM / SIGINT itself with shutdown() below.
  guardConnections(app.getHttpServer(), l.operator.connections);
  try {
    // Nest logs a failed bind itself, in colour and before we can name it; the caller reports it instead.
    app.useLogger(false);
    await app.listen(config.port, config.host);
  } catch (err) {
    // A server that cannot bind must not linger: close the app (and the ledger we opened), then throw.
    await app.close().catch(() => undefined);
    if (!ledger) await l.close().catch(() => undefined);
    lock?.release();
    throw listenError(err, config.host, config.port);
  } finally {
    app.useLogger(['error', 'warn']);
  }
  const drain = installDrain(app.getHttpServer());
  const addr = app.getHttpServer().address();
  // An IPv6 host goes in brackets (`http://[::1]:3000`): bare, its colons would read as the port's.
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const url = `http://${host}:${typeof addr === 'object' && addr ? addr.port : config.port}`;
  const running: RunningServer = {
    app,
    ledger: l,
    url,
    async close() {
      try {
        await app.close();
        await l.close();
      } finally {
        lock?.release();
      }
    },
    async shutdown() {
      let cut = 0;
      try {
        const streams = app.get(RpcTransports).drainStreams();
        drain.begin();
        const deadline = new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), l.operator.connections.drainMs).unref());
        // Answered, then settled: a command whose client left is still running; the stores close after it.
        const done = Promise.all([streams, drain.idle()]).then(() => l.commandsSettled());
        if ((await Promise.race([done, deadline])) === 'late') cut = drain.force();
      } finally {
        await running.close();
      }
      return { cut };
    },
  };
  return running;
}
