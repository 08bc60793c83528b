import type { Command } from 'commander';
import { DomainError } from '../../domain-error';
import { newUuidV7 } from '../../events/ids';
import { withLedger } from '../context';
import { cliIdentity } from '../identity';

interface PublishOptions {
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

const common = (c: Command): Command =>
  c
    .requiredOption('--workspace <id>', 'workspace id')
    .requiredOption('--repo <repoId>', 'repo id')
    .requiredOption('--pr <number>', 'PR number')
    .option('--token <token>', "who presses publish: this token's principal, with its role (env REVIEW_LEDGER_TOKEN); without one: the local operator")
    .option('--as <principal>', "the principal you mean to act as: must be the token's (or the local operator without a token)")
    .option('--idempotency-key <uuid>', 'UUIDv7 (generated when omitted); reuse it to retry safely');

async function runPublishCommand(cmd: Command, name: string, opts: PublishOptions, payload: Record<string, unknown>): Promise<void> {
  await withLedger(cmd, async (ledger) => {
    const actor = await cliIdentity(ledger, opts.workspace, opts);
    const out = await ledger.run(name, opts.workspace, { ...actor, idempotencyKey: opts.idempotencyKey ?? newUuidV7() }, { ...target(opts), ...payload });
    process.stdout.write(`${out.json}\n`);
    const r = out.response.result as { status?: string; reason?: string } | null;
    if (r?.status === 'failed') process.exitCode = 2;
  });
}

/**
 * `review-ledger publish` (SPEC §14): publish a finalized review (the button), `--request` a publish a
 * human must approve (what agents do), or `--approve <requestId>` a pending request. GitHub
 * credentials come from the environment only (REVIEW_LEDGER_GITHUB_TOKEN or a GitHub App;
 * REVIEW_LEDGER_GITHUB_API_URL for GitHub Enterprise).
 */
export function register(program: Command): void {
  common(
    program
      .command('publish')
      .description('Publish a finalized review to GitHub as one review: human members publish, agents (or --request) record a request a human approves (--approve)')
      .option('--selection <selection>', 'all_open (every open finding) | consensus (peer-confirmed only); default all_open, consensus with --request')
      .option('--no-approve-on-ship', 'post a Ship verdict as COMMENT instead of APPROVE')
      .option('--request', 'record a publish request that a human member must approve')
      .option('--approve <requestId>', 'approve a pending publish request: it is published now'),
  ).action(async (opts: PublishOptions & { selection?: string; approveOnShip: boolean; request?: boolean; approve?: string }, cmd: Command) => {
    if (opts.request && opts.approve) throw new DomainError('invalid_payload', '--request and --approve: choose one');
    if (opts.approve) return runPublishCommand(cmd, 'approvePublish', opts, { requestId: opts.approve });
    // A request defaults to the agent semantics: peer-confirmed findings, Ship as COMMENT unless asked.
    const explicitApprove = cmd.getOptionValueSource('approveOnShip') === 'cli';
    if (opts.request) return runPublishCommand(cmd, 'requestPublish', opts, { selection: opts.selection ?? 'consensus', approveOnShip: explicitApprove ? opts.approveOnShip : false });
    return runPublishCommand(cmd, 'publish', opts, { selection: opts.selection ?? 'all_open', approveOnShip: opts.approveOnShip });
  });
}
