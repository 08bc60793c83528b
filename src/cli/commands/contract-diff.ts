import type { Command } from 'commander';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const actions = (): typeof import('./contract-diff.actions') => require('./contract-diff.actions');

/** contract-diff BASE HEAD [--json | --format oasdiff]: the API-contract engine on two plain files, outside any workspace. */
export function register(program: Command): void {
  program
    .command('contract-diff <baseSpec> <headSpec>')
    .description('Compare two OpenAPI 3.x / Swagger 2.0 files (YAML or JSON) and classify every change; exit 0 when nothing breaks, 1 when something breaks (breaking or warning), 2 on error')
    .option('--json', 'print the changes as JSON (same as --format json)')
    .option('--format <format>', "output format: text | json | oasdiff (oasdiff's rule ids and levels, for users migrating from oasdiff)")
    .option('--as-of <date>', 'date the x-sunset rules compare against (default: today)')
    .action((baseSpec: string, headSpec: string, opts: { json?: boolean; format?: string; asOf?: string }) => actions().contractDiff(baseSpec, headSpec, opts));
}
