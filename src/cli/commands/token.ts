import type { Command } from 'commander';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const actions = (): typeof import('./token.actions') => require('./token.actions');

/** token create|revoke|list, member add|role|remove|list, webhook-secret: the local operator manages access (it owns the data dir). */
export function register(program: Command): void {
  const token = program.command('token').description('Manage bearer API tokens of a workspace (stored as sha256 hashes)');
  token
    .command('create')
    .description('Issue a token for an existing member (see `member add`); the secret is printed once')
    .requiredOption('--workspace <id>', 'workspace id')
    .requiredOption('--principal <principal>', 'a member: user:<id> (human) or agent:<id>')
    .option('--role <role>', 'owner | admin | member | viewer | guest', 'member')
    .option('--label <label>', 'a note to recognise the token by')
    .option('--idempotency-key <uuid>', 'UUIDv7 (generated when omitted; reusing it prints the same token)')
    .option('--json', 'print the full JSON response')
    .action((opts: { workspace: string; principal: string; role: string; label?: string; idempotencyKey?: string; json?: boolean }, cmd: Command) => actions().createToken(opts, cmd));
  token
    .command('revoke <tokenId>')
    .description('Revoke a token by id (the 16 hex digits after the workspace in the token)')
    .requiredOption('--workspace <id>', 'workspace id')
    .option('--json', 'print the exact JSON response')
    .action((tokenId: string, opts: { workspace: string; json?: boolean }, cmd: Command) => actions().revokeToken(tokenId, opts, cmd));
  token
    .command('list')
    .description("List a workspace's tokens (ids, principals, roles; never secrets)")
    .requiredOption('--workspace <id>', 'workspace id')
    .option('--json', 'print JSON')
    .action((opts: { workspace: string; json?: boolean }, cmd: Command) => actions().listTokens(opts, cmd));

  program
    .command('login')
    .description("Sign in as yourself at the server's identity provider (device authorization grant): shows a code to enter at the provider, then prints a sign-in token for --token / REVIEW_LEDGER_TOKEN")
    .requiredOption('--workspace <id>', 'workspace id')
    .option('--url <url>', 'the review-ledger server (default REVIEW_LEDGER_URL, else http://127.0.0.1:3000)')
    .option('--json', 'print {token, tokenId, principal, workspaceId, expiresAt} as JSON')
    .action((opts: { workspace: string; url?: string; json?: boolean }) => actions().login(opts));

  const member = program.command('member').description('Manage the members of a workspace: a token is issued only for a member, and acts with at most its role');
  member
    .command('add')
    .description('Add a principal with a role (agents hold at most member)')
    .requiredOption('--workspace <id>', 'workspace id')
    .requiredOption('--principal <principal>', 'user:<id> (human) or agent:<id>')
    .option('--role <role>', 'owner | admin | member | viewer | guest', 'member')
    .option('--json', 'print the exact JSON response')
    .action((opts: { workspace: string; principal: string; role: string; json?: boolean }, cmd: Command) => actions().addMember(opts, cmd));
  member
    .command('role')
    .description("Change a member's role: every token of that principal follows at once")
    .requiredOption('--workspace <id>', 'workspace id')
    .requiredOption('--principal <principal>', 'the member')
    .requiredOption('--role <role>', 'owner | admin | member | viewer | guest')
    .option('--json', 'print the exact JSON response')
    .action((opts: { workspace: string; principal: string; role: string; json?: boolean }, cmd: Command) => actions().changeMemberRole(opts, cmd));
  member
    .command('remove')
    .description('Remove a member: every token of that principal stops working at once')
    .requiredOption('--workspace <id>', 'workspace id')
    .requiredOption('--principal <principal>', 'the member')
    .option('--json', 'print the exact JSON response')
    .action((opts: { workspace: string; principal: string; json?: boolean }, cmd: Command) => actions().removeMember(opts, cmd));
  member
    .command('list')
    .description("List a workspace's members and roles")
    .requiredOption('--workspace <id>', 'workspace id')
    .option('--json', 'print JSON')
    .action((opts: { workspace: string; json?: boolean }, cmd: Command) => actions().listMembers(opts, cmd));

  program
    .command('webhook-secret')
    .description("Set a repo's GitHub webhook secret (kept in a 0600 file under the workspace, never in the log)")
    .requiredOption('--workspace <id>', 'workspace id')
    .requiredOption('--repo <repoId>', 'registered repo id')
    .option('--secret <secret>', 'the secret configured on GitHub (generated and printed when omitted)')
    .action((opts: { workspace: string; repo: string; secret?: string }, cmd: Command) => actions().setWebhookSecret(opts, cmd));
}
