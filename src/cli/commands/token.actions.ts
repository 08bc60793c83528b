import type { Command } from 'commander';
import { newUuidV7 } from '../../events/ids';
import { LOCAL_OPERATOR } from '../../ledger';
import { workspaceFold } from '../../workspaces/workspace-state';
import { writeWebhookSecret } from '../../webhooks/secrets';
import { withLedger } from '../context';
import { printAct } from '../act-line';
import { table } from '../table';
import { DomainError } from '../../domain-error';
import type { ErrorCode } from '../../errors/codes';

/** The actions of token.ts, loaded when one of its commands runs. */

export async function createToken(opts: { workspace: string; principal: string; role: string; label?: string; idempotencyKey?: string; json?: boolean }, cmd: Command): Promise<void> {
  await withLedger(cmd, async (ledger) => {
    await ledger.workspace(opts.workspace);
    const out = await ledger.issueToken(opts.workspace, { ...LOCAL_OPERATOR, idempotencyKey: opts.idempotencyKey ?? newUuidV7() }, { principal: opts.principal, role: opts.role, label: opts.label });
    process.stdout.write(opts.json ? `${out.json}\n` : `${out.token}\n`);
  });
}

export async function revokeToken(tokenId: string, opts: { workspace: string; json?: boolean }, cmd: Command): Promise<void> {
  await withLedger(cmd, async (ledger) => {
    const out = await ledger.run('revokeToken', opts.workspace, { ...LOCAL_OPERATOR, idempotencyKey: newUuidV7() }, { tokenId });
    printAct('revokeToken', out, opts.json);
  });
}

export async function listTokens(opts: { workspace: string; json?: boolean }, cmd: Command): Promise<void> {
  await withLedger(cmd, async (ledger) => {
    const ws = await ledger.workspace(opts.workspace);
    const { state } = await ledger.executor.load(workspaceFold, ws, 'workspace');
    const rows = Object.entries(state.tokens).map(([tokenId, t]) => ({ tokenId, principal: t.principal, role: t.role, label: t.label ?? null, revoked: t.revoked, issuedAt: t.issuedAt }));
    if (opts.json) process.stdout.write(`${JSON.stringify(rows)}\n`);
    else process.stdout.write(table(['token id', 'principal', 'role', 'state', 'issued at', 'label'], rows.map((r) => [r.tokenId, r.principal, r.role, r.revoked ? 'revoked' : 'active', r.issuedAt, r.label ?? ''])));
  });
}

async function runMemberCommand(cmd: Command, name: string, workspace: string, payload: Record<string, unknown>, json: boolean | undefined): Promise<void> {
  await withLedger(cmd, async (ledger) => {
    const out = await ledger.run(name, workspace, { ...LOCAL_OPERATOR, idempotencyKey: newUuidV7() }, payload);
    printAct(name, out, json);
  });
}

export const addMember = (opts: { workspace: string; principal: string; role: string; json?: boolean }, cmd: Command) => runMemberCommand(cmd, 'addMember', opts.workspace, { principal: opts.principal, role: opts.role }, opts.json);
export const changeMemberRole = (opts: { workspace: string; principal: string; role: string; json?: boolean }, cmd: Command) => runMemberCommand(cmd, 'changeMemberRole', opts.workspace, { principal: opts.principal, role: opts.role }, opts.json);
export const removeMember = (opts: { workspace: string; principal: string; json?: boolean }, cmd: Command) => runMemberCommand(cmd, 'removeMember', opts.workspace, { principal: opts.principal }, opts.json);

export async function listMembers(opts: { workspace: string; json?: boolean }, cmd: Command): Promise<void> {
  await withLedger(cmd, async (ledger) => {
    const ws = await ledger.workspace(opts.workspace);
    const { state } = await ledger.executor.load(workspaceFold, ws, 'workspace');
    const rows = Object.entries(state.members).map(([principal, role]) => ({ principal, role }));
    if (opts.json) process.stdout.write(`${JSON.stringify(rows)}\n`);
    else process.stdout.write(table(['principal', 'role'], rows.map((r) => [r.principal, r.role])));
  });
}

export async function setWebhookSecret(opts: { workspace: string; repo: string; secret?: string }, cmd: Command): Promise<void> {
  await withLedger(cmd, async (ledger) => {
    const ws = await ledger.workspace(opts.workspace);
    const secret = writeWebhookSecret(ws.dir, opts.repo, opts.secret);
    process.stdout.write(opts.secret ? 'secret stored\n' : `${secret}\n`);
  });
}

/**
 * `review-ledger login`: the device authorization grant through the server (it holds the client
 * credentials): the person opens the provider's page, enters the code and signs in; the token printed
 * is theirs (a sign-in token, `session_expired` after the server's sessionTtlSeconds).
 */
export async function login(opts: { workspace: string; url?: string; json?: boolean }): Promise<void> {
  const base = (opts.url ?? process.env.REVIEW_LEDGER_URL ?? 'http://127.0.0.1:3000').replace(/\/+$/, '');
  const post = async (path: string): Promise<{ status: number; body: any }> => {
    let res: Response;
    try {
      res = await fetch(`${base}${path}`, { method: 'POST' });
    } catch (err) {
      throw new DomainError('sign_in_failed', `--url: cannot reach ${base}: ${(err as Error).message}`);
    }
    const body = await res.json().catch(() => null);
    if (res.status >= 400) {
      const e = body?.error;
      throw new DomainError((e?.data?.code ?? 'sign_in_failed') as ErrorCode, e?.message ?? `${base}${path} answered ${res.status}`);
    }
    return { status: res.status, body };
  };
  const started = (await post(`/auth/device?workspace=${encodeURIComponent(opts.workspace)}`)).body;
  process.stderr.write(`To sign in, open ${started.verificationUriComplete ?? started.verificationUri}\nand enter the code ${started.userCode} (valid ${Math.round(started.expiresIn / 60)} minutes).\n`);
  for (;;) {
    const r = await post(`/auth/device/poll?handle=${encodeURIComponent(started.handle)}`);
    if (r.status === 202) continue;
    const s = r.body;
    process.stderr.write(`Signed in as ${s.principal} in workspace ${s.workspaceId} until ${s.expiresAt}.\n`);
    process.stdout.write(opts.json ? `${JSON.stringify({ token: s.token, tokenId: s.tokenId, principal: s.principal, workspaceId: s.workspaceId, expiresAt: s.expiresAt })}\n` : `${s.token}\n`);
    return;
  }
}
