import type { Command } from 'commander';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const actions = (): typeof import('./compute.actions') => require('./compute.actions');

/** `compute`: request (or reuse) the PR's review, compute it, print the cohort report. */
export function register(program: Command): void {
  program
    .command('compute')
    .description('Compute the review of a PR (cohorts, blast radius, dependency diffs, axes) and print the cohort report')
    .requiredOption('--workspace <id>', 'workspace id')
    .requiredOption('--repo <repoId>', 'registered repo id')
    .requiredOption('--pr <number>', 'pull request number')
    .requiredOption('--base <sha>', 'base commit sha')
    .requiredOption('--head <sha>', 'head commit sha')
    .option('--json', 'print the computation as JSON')
    .action((opts: { workspace: string; repo: string; pr: string; base: string; head: string; json?: boolean }, cmd: Command) => actions().compute(opts, cmd));
}
