import type { Command } from 'commander';
import { LOCAL_OPERATOR } from '../../local-operator';
import type { PublishOptions } from './publish.actions';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const actions = (): typeof import('./publish.actions') => require('./publish.actions');

const common = (c: Command): Command =>
  c
    .requiredOption('--workspace <id>', 'workspace id')
    .requiredOption('--repo <repoId>', 'repo id')
    .requiredOption('--pr <number>', 'PR number')
    .option('--token <token>', "who presses publish: this token's principal, with its role (env REVIEW_LEDGER_TOKEN); without one: the local operator")
    .option('--as <principal>', `the principal you mean to act as: must be the token's (or ${LOCAL_OPERATOR.principal} without a token)`)
    .option('--idempotency-key <uuid>', 'UUIDv7 (generated when omitted); reuse it to retry safely');

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
  ).action((opts: PublishOptions & { selection?: string; approveOnShip: boolean; request?: boolean; approve?: string }, cmd: Command) => actions().publish(opts, cmd));
}
