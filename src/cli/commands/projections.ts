import type { Command } from 'commander';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const actions = (): typeof import('./projections.actions') => require('./projections.actions');

/** `projections rebuild|status`: the read models of src/readmodels. */
export function register(program: Command): void {
  const projections = program.command('projections').description('Checkpointed read models of workspace-wide queries (audit, …): rebuild from position 0, status');
  projections
    .command('rebuild')
    .description('Rebuild read models from position 0 beside the active ones (which keep answering), then switch over')
    .requiredOption('--workspace <id>', 'workspace id')
    .option('--name <name>', 'only this read model (default: every one)')
    .option('--json', 'print one JSON line per rebuilt model')
    .action((opts: { workspace: string; name?: string; json?: boolean }, cmd: Command) => actions().rebuild(opts, cmd));
  projections
    .command('status')
    .description('Each read model: version, generation, checkpoint position against the head, ready or building')
    .requiredOption('--workspace <id>', 'workspace id')
    .option('--json', 'print JSON')
    .action((opts: { workspace: string; json?: boolean }, cmd: Command) => actions().status(opts, cmd));
}
