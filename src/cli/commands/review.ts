import type { Command } from 'commander';
import { LOCAL_OPERATOR } from '../../local-operator';
import { REVIEW_COMMANDS, REVIEW_VIEWS } from './review.names';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const actions = (): typeof import('./review.actions') => require('./review.actions');

/** review run|show, replay, audit. */
export function register(program: Command): void {
  const review = program.command('review').description('Review commands and read models (SPEC §5–§10)');

  review
    .command('run <command>')
    .description(`Run a review command with a JSON payload (${REVIEW_COMMANDS.join(', ')})`)
    .requiredOption('--workspace <id>', 'workspace id')
    .requiredOption('--payload <json>', 'the command payload as JSON')
    .option('--as <principal>', 'act as this principal (default: the local operator)', LOCAL_OPERATOR.principal)
    .option('--role <role>', 'workspace role of that principal', LOCAL_OPERATOR.role)
    .option('--idempotency-key <uuid>', 'UUIDv7 (generated when omitted)')
    .action((name: string, opts: { workspace: string; payload: string; as: string; role: string; idempotencyKey?: string }, cmd: Command) => actions().runReviewCommand(name, opts, cmd));

  review
    .command('show <view>')
    .description(`Read a review projection (${REVIEW_VIEWS.join(', ')}), optionally as of a global position or ISO time`)
    .requiredOption('--workspace <id>', 'workspace id')
    .requiredOption('--repo <repoId>', 'repo id')
    .requiredOption('--pr <number>', 'PR number')
    .option('--round <n>', 'round (delta only)')
    .option('--as-of <position|time>', 'answer as of a global position or an ISO-8601 time')
    .action((view: string, opts: { workspace: string; repo: string; pr: string; round?: string; asOf?: string }, cmd: Command) => actions().showReview(view, opts, cmd));

  program
    .command('replay')
    .description('Re-fold reviews under another rules document and show whose verdict or confidence would change (writes nothing without --activate)')
    .requiredOption('--workspace <id>', 'workspace id')
    .requiredOption('--rules <file>', 'rules document (JSON, e.g. src/rules/v1.json)')
    .option('--pr <number>', 'only this PR number')
    .option('--repo <repoId>', 'only this repo')
    .option('--as-of <position|time>', 'replay the log only up to a global position or ISO-8601 time')
    .option('--all', 'list unchanged reviews too')
    .option('--json', 'print JSON rows')
    .option('--activate', 'record RulesVersionActivated for this document afterwards')
    .action((opts: { workspace: string; rules: string; pr?: string; repo?: string; asOf?: string; all?: boolean; json?: boolean; activate?: boolean }, cmd: Command) => actions().replay(opts, cmd));

  program
    .command('audit')
    .description('Who decided what, when: one row per decision act (confirm, dismiss, resolve, contract decision, visual approval, finalize, publish)')
    .requiredOption('--workspace <id>', 'workspace id')
    .option('--actor <principal>', 'only this actor')
    .option('--action <action>', 'only this action')
    .option('--repo <repoId>', 'only this repo')
    .option('--pr <number>', 'only this PR number')
    .option('--since <time>', 'ISO-8601: acts at or after')
    .option('--until <time>', 'ISO-8601: acts at or before')
    .option('--as-of <position|time>', 'the log as of a global position or ISO-8601 time')
    .option('--json', 'print JSON rows')
    .action((opts: { workspace: string; actor?: string; action?: string; repo?: string; pr?: string; since?: string; until?: string; asOf?: string; json?: boolean }, cmd: Command) => actions().audit(opts, cmd));
}
