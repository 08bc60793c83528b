import type { Command } from 'commander';
import { newUuidV7 } from '../../events/ids';
import { LOCAL_OPERATOR } from '../../ledger';
import { configFrom, withLedger } from '../context';
import { startServer } from '../../server/bootstrap';

/** serve, workspace create|list, events tail. */
export function register(program: Command): void {
  program
    .command('serve')
    .description('Run the HTTP server (JSON-RPC, subscriptions, MCP) on the configured store')
    .option('--host <host>', 'interface to bind (default 127.0.0.1; env REVIEW_LEDGER_HOST)')
    .option('--port <port>', 'port (default 3000; env REVIEW_LEDGER_PORT)')
    .action(async (opts: { host?: string; port?: string }, cmd: Command) => {
      const config = configFrom(cmd);
      const server = await startServer({ ...config, host: opts.host ?? config.host, port: opts.port !== undefined ? Number(opts.port) : config.port });
      process.stdout.write(`review-ledger listening on ${server.url} (store: ${config.store}${config.store === 'sqlite' ? ` under ${config.dataDir}` : ''})\n`);
      const stop = async () => {
        await server.close();
        process.exit(0);
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });

  const ws = program.command('workspace').description('Manage workspaces (tenants, each with its own store)');
  ws.command('create <workspaceId>')
    .description('Create a workspace; the local operator becomes its owner')
    .option('--name <name>', 'display name')
    .option('--level <level>', 'default review level: light | balanced | thorough', 'balanced')
    .option('--idempotency-key <uuid>', 'UUIDv7 (generated when omitted)')
    .action(async (workspaceId: string, opts: { name?: string; level: string; idempotencyKey?: string }, cmd: Command) => {
      await withLedger(cmd, async (ledger) => {
        const out = await ledger.createWorkspace({ ...LOCAL_OPERATOR, idempotencyKey: opts.idempotencyKey ?? newUuidV7() }, { workspaceId, name: opts.name, defaultLevel: opts.level });
        process.stdout.write(`${out.json}\n`);
      });
    });
  ws.command('list')
    .description('List workspaces')
    .option('--json', 'print JSON')
    .action(async (opts: { json?: boolean }, cmd: Command) => {
      await withLedger(cmd, async (ledger) => {
        const list = ledger.workspaces.list();
        if (opts.json) process.stdout.write(`${JSON.stringify(list)}\n`);
        else for (const w of list) process.stdout.write(`${w.workspaceId}\t${w.name}\t${w.createdAt}\n`);
      });
    });

  program
    .command('events')
    .description('Read the event log')
    .command('tail')
    .description("Print a workspace's events in global order (one JSON object per line)")
    .requiredOption('--workspace <id>', 'workspace id')
    .option('--from <position>', 'start after this global position', '0')
    .option('--follow', 'keep printing new events as they are appended')
    .action(async (opts: { workspace: string; from: string; follow?: boolean }, cmd: Command) => {
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
    });
}
