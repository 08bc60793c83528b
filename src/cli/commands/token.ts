import type { Command } from 'commander';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const actions = (): typeof import('./token.actions') => require('./token.actions');

/** token create|revoke|list, webhook-secret set: the local operator manages access (it owns the data dir). */
export function register(program: Command): void {
  const token = program.command('token').description('Manage bearer API tokens of a workspace (stored as sha256 hashes)');
  token
    .command('create')
    .description('Issue a token; the secret is printed once')
    .requiredOption('--workspace <id>', 'workspace id')
    .requiredOption('--principal <principal>', 'user:<id> (human) or agent:<id>')
    .option('--role <role>', 'owner | admin | member | viewer | guest', 'member')
    .option('--label <label>', 'a note to recognise the token by')
    .option('--idempotency-key <uuid>', 'UUIDv7 (generated when omitted; reusing it prints the same token)')
    .option('--json', 'print the full JSON response')
    .action((opts: { workspace: string; principal: string; role: string; label?: string; idempotencyKey?: string; json?: boolean }, cmd: Command) => actions().createToken(opts, cmd));
  token
    .command('revoke <tokenId>')
    .description('Revoke a token by id (the 16 hex digits after the workspace in the token)')
    .requiredOption('--workspace <id>', 'workspace id')
    .action((tokenId: string, opts: { workspace: string }, cmd: Command) => actions().revokeToken(tokenId, opts, cmd));
  token
    .command('list')
    .description("List a workspace's tokens (ids, principals, roles; never secrets)")
    .requiredOption('--workspace <id>', 'workspace id')
    .option('--json', 'print JSON')
    .action((opts: { workspace: string; json?: boolean }, cmd: Command) => actions().listTokens(opts, cmd));

  program
    .command('webhook-secret')
    .description("Set a repo's GitHub webhook secret (kept in a 0600 file under the workspace, never in the log)")
    .requiredOption('--workspace <id>', 'workspace id')
    .requiredOption('--repo <repoId>', 'registered repo id')
    .option('--secret <secret>', 'the secret configured on GitHub (generated and printed when omitted)')
    .action((opts: { workspace: string; repo: string; secret?: string }, cmd: Command) => actions().setWebhookSecret(opts, cmd));
}
