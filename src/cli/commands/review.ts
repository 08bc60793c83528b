import type { Command } from 'commander';
import { LOCAL_OPERATOR } from '../../local-operator';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const actions = (): typeof import('./review.actions') => require('./review.actions');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const auditActions = (): typeof import('./audit.actions') => require('./audit.actions');

/** review run|show, replay, audit. */
export function register(program: Command): void {
  const review = program.command('review').description('Review commands and read models (SPEC §5–§10)');

  review
    .command('run <command>')
    .description('Run any command of the command registry with a JSON payload (`review run --help` lists them with their payloads)')
    .requiredOption('--workspace <id>', 'workspace id')
    .requiredOption('--payload <json>', 'the command payload as JSON')
    .option('--token <token>', "act as this token's principal, with its role (env REVIEW_LEDGER_TOKEN); without one: the local operator")
    .option('--as <principal>', `the principal you mean to act as: must be the token's (or ${LOCAL_OPERATOR.principal} without a token)`)
    .option('--idempotency-key <uuid>', 'UUIDv7 (generated when omitted)')
    .option('--json', 'print the exact JSON response (byte-identical on a replay of the key)')
    // Generated from the registry when this help is shown, so `review-ledger --help` stays light.
    .addHelpText('after', () => actions().commandCatalogue())
    .action((name: string, opts: { workspace: string; payload: string; token?: string; as?: string; idempotencyKey?: string; json?: boolean }, cmd: Command) => actions().runReviewCommand(name, opts, cmd));

  review
    .command('show <query>')
    .description('Read any query (read model) of the query registry by its one name, the same as its RPC method (`review show --help` lists them), optionally as of a global position or ISO time')
    .requiredOption('--workspace <id>', 'workspace id')
    .option('--repo <repoId>', 'repo id (input field repoId)')
    .option('--pr <number>', 'PR number (input field prNumber)')
    .option('--round <n>', 'round (input field round, reReviewDelta)')
    .option('--input <json>', 'further input fields as a JSON object (e.g. {"cohortId":"…"}); --repo/--pr/--round override it')
    .option('--as-of <position|time>', 'answer as of a global position or an ISO-8601 time')
    .addHelpText('after', () => actions().queryCatalogue())
    .action((query: string, opts: { workspace: string; repo?: string; pr?: string; round?: string; input?: string; asOf?: string }, cmd: Command) => actions().showReview(query, opts, cmd));

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

  const audit = program
    .command('audit')
    .description('Who decided what, when: one row per decision act (confirm, dismiss, resolve, contract decision, visual approval, finalize, publish); `audit verify|export|checkpoint|status|rotate-key` check the log itself (docs/audit.md)')
    // Not required here: the subcommands read it too (commander hands parent options to the parent), and rotate-key has none.
    .option('--workspace <id>', 'workspace id')
    .option('--actor <principal>', 'only this actor')
    .option('--action <action>', 'only this action')
    .option('--repo <repoId>', 'only this repo')
    .option('--pr <number>', 'only this PR number')
    .option('--since <time>', 'ISO-8601: acts at or after')
    .option('--until <time>', 'ISO-8601: acts at or before')
    .option('--authn <kind>', 'only acts authenticated this way: sign-in, admin-provisioned, agent-token or local')
    .option('--subject <sub>', "only acts signed in as this identity-provider subject (GitHub: the numeric user id)")
    .option('--as-of <position|time>', 'the log as of a global position or ISO-8601 time')
    .option('--order <desc|asc>', 'desc: newest first (default); asc: log order')
    .option('--limit <n>', 'rows per page (default 100, at most 1000)')
    .option('--cursor <next>', "the next page: the previous page's `next`, with the same filters and --order")
    .option('--json', 'print the page as JSON: {position, rows, next}')
    .action((opts: { workspace: string; actor?: string; action?: string; repo?: string; pr?: string; since?: string; until?: string; authn?: string; subject?: string; asOf?: string; order?: string; limit?: string; cursor?: string; json?: boolean }, cmd: Command) => actions().audit(opts, cmd));

  audit
    .command('verify')
    .description("Recompute the workspace's hash chain and check its signed checkpoints; prints the first broken position and exits 1")
    .option('--file <export>', 'verify an `audit export` file instead of the store')
    .option('--witness <receipt...>', 'also check the log against receipts kept earlier (`audit checkpoint --out`, `audit export`, a witness file): each must still be in the log and among its checkpoints (the configured audit.witnessDir is checked by default)')
    .action((opts: { file?: string; witness?: string[] }, cmd: Command) => auditActions().verify(opts, cmd));
  audit
    .command('export')
    .description('Write a self-contained file (events as stored, checkpoints, public key) that an outsider can verify without the server')
    .requiredOption('--out <file>', 'where to write the export')
    .option('--no-checkpoint', 'do not sign a checkpoint at the current head first')
    .option('--receipt <file>', "also write the last checkpoint's receipt to this file (the export carries it as `receipt`)")
    .action((opts: { out: string; checkpoint: boolean; receipt?: string }, cmd: Command) => auditActions().exportLog(opts, cmd));
  audit
    .command('checkpoint')
    .description("Sign a checkpoint at the workspace's current head now (the server also signs them on a schedule)")
    .option('--out <file>', 'write its receipt (signed: workspace, position, chain hash, key, time) for a verifier to keep; signs even when the head did not move')
    .action((opts: { out?: string }, cmd: Command) => auditActions().checkpoint(opts, cmd));
  audit
    .command('status')
    .description("Where signing stands: the head, the last checkpoint, the witness's latest receipt, and whether signing is refused because the store went backwards relative to the witness (exit 1)")
    .action((_opts: unknown, cmd: Command) => auditActions().status(cmd));
  audit
    .command('rotate-key')
    .description('Replace the checkpoint key: every workspace records a rotation signed by the old and the new key')
    .action((_opts: unknown, cmd: Command) => auditActions().rotateKey(cmd));
}
