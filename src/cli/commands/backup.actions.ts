import type { Command } from 'commander';
import { DomainError, isDomainError } from '../../domain-error';
import { backupSqliteDataDir } from '../../stores/sqlite/backup';
import { configFrom } from '../context';

/** `review-ledger backup --to DIR`: prints what was copied (each workspace's head), or why not. */
export async function backup(opts: { to: string; json?: boolean }, cmd: Command): Promise<void> {
  try {
    const config = configFrom(cmd);
    if (config.store !== 'sqlite') throw new DomainError('invalid_config', `--store ${config.store}: the log lives in the database; back it up with the database's own tools (PostgreSQL: pg_dump of the review_ledger schema; docs/stores.md)`);
    const report = backupSqliteDataDir(config.dataDir, opts.to);
    if (opts.json) process.stdout.write(`${JSON.stringify(report)}\n`);
    else {
      for (const w of report.workspaces) process.stdout.write(`workspace ${w.workspaceId}: ${w.head} events, ${w.bytes} bytes\n`);
      process.stdout.write(`backup of ${report.workspaces.length} workspace(s) and ${report.secrets.length} key file(s) at ${report.createdAt} in ${opts.to}\n`);
    }
  } catch (err) {
    if (!isDomainError(err)) throw err;
    process.stderr.write(`error [${err.code}]: ${err.message}\n`);
    process.exitCode = 1;
  }
}
