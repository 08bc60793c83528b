import type { Command } from 'commander';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const actions = (): typeof import('./read-models.actions') => require('./read-models.actions');

/**
 * `read-models rebuild|status`: the checkpointed read models of src/readmodels. `projections` is kept as an
 * alias (the command's name before 2026-12-04), so existing scripts keep working.
 */
export function register(program: Command): void {
  const readModels = program.command('read-models').alias('projections').description('Checkpointed read models of workspace-wide queries (audit, …): rebuild from position 0, status');
  readModels
    .command('rebuild')
    .description('Rebuild read models from position 0 beside the active ones (which keep answering), then switch over')
    .requiredOption('--workspace <id>', 'workspace id')
    .option('--name <name>', 'only this read model (default: every one)')
    .option('--json', 'print one JSON line per rebuilt model')
    .action((opts: { workspace: string; name?: string; json?: boolean }, cmd: Command) => actions().rebuild(opts, cmd));
  readModels
    .command('status')
    .description('Each read model: version, generation, checkpoint position against the head, ready or building')
    .requiredOption('--workspace <id>', 'workspace id')
    .option('--json', 'print JSON')
    .action((opts: { workspace: string; json?: boolean }, cmd: Command) => actions().status(opts, cmd));
}
