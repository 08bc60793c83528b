import type { Command } from 'commander';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const actions = (): typeof import('./backup.actions') => require('./backup.actions');

/** backup: a consistent copy of the SQLite data dir while the server runs. */
export function register(program: Command): void {
  program
    .command('backup')
    .description('Copy the SQLite data dir (catalogue, every workspace log, webhook secrets, key files) into a new folder while the server runs; the copy is a data dir (--data-dir <copy> serves it). PostgreSQL: use pg_dump')
    .requiredOption('--to <dir>', 'a new or empty folder')
    .option('--json', 'print the report as JSON')
    .action((opts: { to: string; json?: boolean }, cmd: Command) => actions().backup(opts, cmd));
}
