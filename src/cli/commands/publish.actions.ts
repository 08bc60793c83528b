import type { Command } from 'commander';
import { DomainError } from '../../domain-error';
import { newUuidV7 } from '../../events/ids';
import { withLedger } from '../context';
import { cliIdentity } from '../identity';

/** The action of publish.ts, loaded when `publish` runs. */

export interface PublishOptions {
  workspace: string;
  repo: string;
  pr: string;
  as?: string;
  token?: string;
  idempotencyKey?: string;
}

function target(opts: PublishOptions) {
  if (!/^\d+$/.test(opts.pr) || Number(opts.pr) < 1) throw new DomainError('invalid_payload', `--pr: must be a positive integer, got "${opts.pr}"`);
  return { repoId: opts.repo, prNumber: Number(opts.pr) };
}

async function runPublishCommand(cmd: Command, name: string, opts: PublishOptions, payload: Record<string, unknown>): Promise<void> {
  await withLedger(cmd, async (ledger) => {
    const actor = await cliIdentity(ledger, opts.workspace, opts);
    const out = await ledger.run(name, opts.workspace, { ...actor, idempotencyKey: opts.idempotencyKey ?? newUuidV7() }, { ...target(opts), ...payload });
    process.stdout.write(`${out.json}\n`);
    const r = out.response.result as { status?: string; reason?: string } | null;
    if (r?.status === 'failed') process.exitCode = 2;
  });
}

export async function publish(opts: PublishOptions & { selection?: string; approveOnShip: boolean; request?: boolean; approve?: string }, cmd: Command): Promise<void> {
  if (opts.request && opts.approve) throw new DomainError('invalid_payload', '--request and --approve: choose one');
  if (opts.approve) return runPublishCommand(cmd, 'approvePublish', opts, { requestId: opts.approve });
  // A request defaults to the agent semantics: peer-confirmed findings, Ship as COMMENT unless asked.
  const explicitApprove = cmd.getOptionValueSource('approveOnShip') === 'cli';
  if (opts.request) return runPublishCommand(cmd, 'requestPublish', opts, { selection: opts.selection ?? 'consensus', approveOnShip: explicitApprove ? opts.approveOnShip : false });
  return runPublishCommand(cmd, 'publish', opts, { selection: opts.selection ?? 'all_open', approveOnShip: opts.approveOnShip });
}
