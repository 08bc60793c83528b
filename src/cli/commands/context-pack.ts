import type { Command } from 'commander';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const actions = (): typeof import('./context-pack.actions') => require('./context-pack.actions');

/** `context` and `metrics` subcommands (registered in src/cli/commands/index.ts). */
export function register(program: Command): void {
  program
    .command('context')
    .description('Print the context pack of one cohort (fragments and clues within a byte budget)')
    .requiredOption('--workspace <id>', 'workspace id')
    .requiredOption('--repo <repoId>', 'repo id')
    .requiredOption('--pr <number>', 'PR number')
    .requiredOption('--cohort <key>', 'cohort key (see `compute`)')
    .option('--budget <bytes>', 'byte budget', '32768')
    .option('--json', 'print the pack as JSON')
    .action((opts: { workspace: string; repo: string; pr: string; cohort: string; budget: string; json?: boolean }, cmd: Command) => actions().showContextPack(opts, cmd));
  program
    .command('metrics')
    .description('Print the review metrics of a PR: files, cohorts vs target files, merge ratio, bytes per context pack, clean vs partial cohorts')
    .requiredOption('--workspace <id>', 'workspace id')
    .requiredOption('--repo <repoId>', 'repo id')
    .requiredOption('--pr <number>', 'PR number')
    .option('--json', 'print JSON')
    .action((opts: { workspace: string; repo: string; pr: string; json?: boolean }, cmd: Command) => actions().showMetrics(opts, cmd));
}
