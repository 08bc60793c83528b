import type { Command } from 'commander';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const actions = (): typeof import('./contract-diff.actions') => require('./contract-diff.actions');

/** contract-diff BASE HEAD [--json | --format oasdiff] [--profile oasdiff]: the API-contract engine on two plain files, outside any workspace. */
export function register(program: Command): void {
  program
    .command('contract-diff <baseSpec> <headSpec>')
    .description('Compare two OpenAPI 3.x / Swagger 2.0 files (YAML or JSON) and classify every change; exit 0 when nothing breaks, 1 when something breaks (breaking or warning), 2 on error')
    .option('--json', 'print the changes as JSON (same as --format json)')
    .option('--format <format>', "output format: text | json | oasdiff | oasdiff-yaml | oasdiff-text (oasdiff's changelog: its exact rule ids and levels, as JSON, YAML or its text layout)")
    .option('--profile <profile>', "grading: review-ledger (default: our severities) | oasdiff (oasdiff's default level of each exact rule id)")
    .option('--as-of <date>', 'date the x-sunset rules compare against (default: today)')
    .action((baseSpec: string, headSpec: string, opts: { json?: boolean; format?: string; asOf?: string; profile?: string }) => actions().contractDiff(baseSpec, headSpec, opts));
}
