import type { Command } from 'commander';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const actions = (): typeof import('./core.actions') => require('./core.actions');

/** serve, migrate, workspace create|list, events tail. */
export function register(program: Command): void {
  program
    .command('serve')
    .description('Run the HTTP server (JSON-RPC, subscriptions, MCP) on the configured store')
    .option('--host <host>', 'interface to bind (default 127.0.0.1; env REVIEW_LEDGER_HOST)')
    .option('--port <port>', 'port (default 3000; env REVIEW_LEDGER_PORT)')
    .action((opts: { host?: string; port?: string }, cmd: Command) => actions().serve(opts, cmd));

  program
    .command('migrate')
    .description('Bring the PostgreSQL schema to the version this code needs (under an advisory lock; idempotent). serve does it once at start; other commands only check the version')
    .action((_opts: unknown, cmd: Command) => actions().migrate(cmd));

  const ws = program.command('workspace').description('Manage workspaces (tenants, each with its own store)');
  ws.command('create <workspaceId>')
    .description('Create a workspace; the local operator becomes its owner')
    .option('--name <name>', 'display name')
    .option('--level <level>', 'default review level: light | balanced | thorough', 'balanced')
    .option('--idempotency-key <uuid>', 'UUIDv7 (generated when omitted)')
    .option('--json', 'print the exact JSON response')
    .action((workspaceId: string, opts: { name?: string; level: string; idempotencyKey?: string; json?: boolean }, cmd: Command) => actions().createWorkspace(workspaceId, opts, cmd));
  ws.command('list')
    .description('List workspaces')
    .option('--json', 'print JSON')
    .action((opts: { json?: boolean }, cmd: Command) => actions().listWorkspaces(opts, cmd));

  program
    .command('events')
    .description('Read the event log')
    .command('tail')
    .description("Print a workspace's events in global order (one JSON object per line)")
    .requiredOption('--workspace <id>', 'workspace id')
    .option('--from <position>', 'start after this global position', '0')
    .option('--follow', 'keep printing new events as they are appended')
    .action((opts: { workspace: string; from: string; follow?: boolean }, cmd: Command) => actions().tailEvents(opts, cmd));
}
