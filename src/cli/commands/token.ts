import type { Command } from 'commander';
import { newUuidV7 } from '../../events/ids';
import { LOCAL_OPERATOR } from '../../ledger';
import { workspaceFold } from '../../projections/workspace-state';
import { issueApiToken } from '../../security/tokens';
import { writeWebhookSecret } from '../../webhooks/secrets';
import { withLedger } from '../context';

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
    .action(async (opts: { workspace: string; principal: string; role: string; label?: string; idempotencyKey?: string; json?: boolean }, cmd: Command) => {
      await withLedger(cmd, async (ledger) => {
        await ledger.workspace(opts.workspace);
        const out = await issueApiToken(ledger, opts.workspace, { ...LOCAL_OPERATOR, idempotencyKey: opts.idempotencyKey ?? newUuidV7() }, { principal: opts.principal, role: opts.role, label: opts.label });
        process.stdout.write(opts.json ? `${out.json}\n` : `${out.token}\n`);
      });
    });
  token
    .command('revoke <tokenId>')
    .description('Revoke a token by id (the 16 hex digits after the workspace in the token)')
    .requiredOption('--workspace <id>', 'workspace id')
    .action(async (tokenId: string, opts: { workspace: string }, cmd: Command) => {
      await withLedger(cmd, async (ledger) => {
        const out = await ledger.run('revokeToken', opts.workspace, { ...LOCAL_OPERATOR, idempotencyKey: newUuidV7() }, { tokenId });
        process.stdout.write(`${out.json}\n`);
      });
    });
  token
    .command('list')
    .description("List a workspace's tokens (ids, principals, roles; never secrets)")
    .requiredOption('--workspace <id>', 'workspace id')
    .option('--json', 'print JSON')
    .action(async (opts: { workspace: string; json?: boolean }, cmd: Command) => {
      await withLedger(cmd, async (ledger) => {
        const ws = await ledger.workspace(opts.workspace);
        const { state } = await ledger.executor.load(workspaceFold, ws, 'workspace');
        const rows = Object.entries(state.tokens).map(([tokenId, t]) => ({ tokenId, principal: t.principal, role: t.role, label: t.label ?? null, revoked: t.revoked, issuedAt: t.issuedAt }));
        if (opts.json) process.stdout.write(`${JSON.stringify(rows)}\n`);
        else for (const r of rows) process.stdout.write(`${r.tokenId}\t${r.principal}\t${r.role}\t${r.revoked ? 'revoked' : 'active'}\t${r.issuedAt}\t${r.label ?? ''}\n`);
      });
    });

  const member = program.command('member').description('Manage the members of a workspace: a token is issued only for a member, and acts with at most its role');
  member
    .command('add')
    .description('Add a principal with a role (agents hold at most member)')
    .requiredOption('--workspace <id>', 'workspace id')
    .requiredOption('--principal <principal>', 'user:<id> (human) or agent:<id>')
    .option('--role <role>', 'owner | admin | member | viewer | guest', 'member')
    .action(async (opts: { workspace: string; principal: string; role: string }, cmd: Command) => {
      await withLedger(cmd, async (ledger) => {
        const out = await ledger.run('addMember', opts.workspace, { ...LOCAL_OPERATOR, idempotencyKey: newUuidV7() }, { principal: opts.principal, role: opts.role });
        process.stdout.write(`${out.json}\n`);
      });
    });
  member
    .command('role')
    .description("Change a member's role: every token of that principal follows at once")
    .requiredOption('--workspace <id>', 'workspace id')
    .requiredOption('--principal <principal>', 'the member')
    .requiredOption('--role <role>', 'owner | admin | member | viewer | guest')
    .action(async (opts: { workspace: string; principal: string; role: string }, cmd: Command) => {
      await withLedger(cmd, async (ledger) => {
        const out = await ledger.run('changeMemberRole', opts.workspace, { ...LOCAL_OPERATOR, idempotencyKey: newUuidV7() }, { principal: opts.principal, role: opts.role });
        process.stdout.write(`${out.json}\n`);
      });
    });
  member
    .command('remove')
    .description('Remove a member: every token of that principal stops working at once')
    .requiredOption('--workspace <id>', 'workspace id')
    .requiredOption('--principal <principal>', 'the member')
    .action(async (opts: { workspace: string; principal: string }, cmd: Command) => {
      await withLedger(cmd, async (ledger) => {
        const out = await ledger.run('removeMember', opts.workspace, { ...LOCAL_OPERATOR, idempotencyKey: newUuidV7() }, { principal: opts.principal });
        process.stdout.write(`${out.json}\n`);
      });
    });
  member
    .command('list')
    .description("List a workspace's members and roles")
    .requiredOption('--workspace <id>', 'workspace id')
    .option('--json', 'print JSON')
    .action(async (opts: { workspace: string; json?: boolean }, cmd: Command) => {
      await withLedger(cmd, async (ledger) => {
        const ws = await ledger.workspace(opts.workspace);
        const { state } = await ledger.executor.load(workspaceFold, ws, 'workspace');
        const rows = Object.entries(state.members).map(([principal, role]) => ({ principal, role }));
        if (opts.json) process.stdout.write(`${JSON.stringify(rows)}\n`);
        else for (const r of rows) process.stdout.write(`${r.principal}\t${r.role}\n`);
      });
    });

  program
    .command('webhook-secret')
    .description("Set a repo's GitHub webhook secret (kept in a 0600 file under the workspace, never in the log)")
    .requiredOption('--workspace <id>', 'workspace id')
    .requiredOption('--repo <repoId>', 'registered repo id')
    .option('--secret <secret>', 'the secret configured on GitHub (generated and printed when omitted)')
    .action(async (opts: { workspace: string; repo: string; secret?: string }, cmd: Command) => {
      await withLedger(cmd, async (ledger) => {
        const ws = await ledger.workspace(opts.workspace);
        const secret = writeWebhookSecret(ws.dir, opts.repo, opts.secret);
        process.stdout.write(opts.secret ? 'secret stored\n' : `${secret}\n`);
      });
    });
}
