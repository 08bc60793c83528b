import type { Command } from 'commander';
import { newUuidV7 } from '../../events/ids';
import { LOCAL_OPERATOR } from '../../ledger';
import { configFrom, withLedger } from '../context';
import { DomainError } from '../../domain-error';
import { startServer } from '../../server/bootstrap';
import { printAct } from '../act-line';
import { table } from '../table';

/** The actions of core.ts, loaded when one of its commands runs. */

export async function serve(opts: { host?: string; port?: string }, cmd: Command): Promise<void> {
  const config = configFrom(cmd);
  const server = await startServer({ ...config, host: opts.host ?? config.host, port: opts.port !== undefined ? Number(opts.port) : config.port });
  process.stdout.write(`review-ledger listening on ${server.url} (store: ${config.store}${config.store === 'sqlite' ? ` under ${config.dataDir}` : ''})\n`);
  // A signal drains (graceful-shutdown.ts): requests already read are answered, new ones refused, then
  // exit 0 with the data-dir lock released. A second signal exits at once (the lock is released on exit).
  let stopping = false;
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) {
      process.stderr.write(`review-ledger: ${signal} again: exiting without waiting\n`);
      process.exit(1);
    }
    stopping = true;
    process.stderr.write(`review-ledger: ${signal}: shutting down (requests already read are answered for up to ${server.ledger.operator.connections.drainMs} ms; new ones get server_shutting_down)\n`);
    server.shutdown().then(
      ({ cut }) => {
        if (cut > 0) process.stderr.write(`review-ledger: ${cut} request${cut === 1 ? '' : 's'} still unanswered after connections.drainMs: cut\n`);
        process.exit(0);
      },
      (err: unknown) => {
        process.stderr.write(`review-ledger: shutdown failed: ${(err as Error).message}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

/** `review-ledger migrate`: the one explicit migration; prints what it did. */
export async function migrate(cmd: Command): Promise<void> {
  const config = configFrom(cmd);
  if (config.store !== 'postgres') {
    process.stdout.write(`store ${config.store}: nothing to migrate (the embedded store upgrades its own files when it opens them)\n`);
    return;
  }
  // Loaded here: the other commands of this module never need pg.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { PostgresBackend } = require('../../stores/postgres/backend') as typeof import('../../stores/postgres/backend');
  const url = config.databaseUrl;
  if (!url) throw new DomainError('invalid_config', '--database-url: required with --store postgres (or set DATABASE_URL)');
  const backend = await PostgresBackend.open({ connectionString: url, poolSize: 1, migrate: true });
  try {
    const m = backend.migration!;
    process.stdout.write(m.ran ? `schema ${backend.schema}: migrated from ${m.from === null ? 'no version' : `version ${m.from}`} to version ${m.to}\n` : `schema ${backend.schema}: already at version ${m.to}, nothing to do\n`);
  } finally {
    await backend.close();
  }
}

export async function createWorkspace(workspaceId: string, opts: { name?: string; level: string; idempotencyKey?: string; json?: boolean }, cmd: Command): Promise<void> {
  await withLedger(cmd, async (ledger) => {
    const out = await ledger.createWorkspace({ ...LOCAL_OPERATOR, idempotencyKey: opts.idempotencyKey ?? newUuidV7() }, { workspaceId, name: opts.name, defaultLevel: opts.level });
    printAct('createWorkspace', out, opts.json);
  });
}

export async function listWorkspaces(opts: { json?: boolean }, cmd: Command): Promise<void> {
  await withLedger(cmd, async (ledger) => {
    const list = ledger.workspaces.list();
    if (opts.json) process.stdout.write(`${JSON.stringify(list)}\n`);
    else process.stdout.write(table(['workspace', 'name', 'created at'], list.map((w) => [w.workspaceId, w.name, w.createdAt])));
  });
}

export async function tailEvents(opts: { workspace: string; from: string; follow?: boolean }, cmd: Command): Promise<void> {
  await withLedger(cmd, async (ledger) => {
    const handle = await ledger.workspace(opts.workspace);
    const after = Number(opts.from);
    if (opts.follow) {
      const sub = handle.store.subscribeAll({ after });
      process.once('SIGINT', () => sub.close());
      for await (const e of sub) process.stdout.write(`${JSON.stringify(e)}\n`);
    } else {
      for await (const e of handle.store.readAll({ after })) process.stdout.write(`${JSON.stringify(e)}\n`);
    }
  });
}
