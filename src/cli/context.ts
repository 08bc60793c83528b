import type { Command } from 'commander';
import { loadConfig, LedgerConfig } from '../config';
import { Ledger } from '../ledger';
import { isDomainError } from '../domain-error';
import { attachReadModels } from '../readmodels/stored/registry';

/** Global options every subcommand understands. */
export function configFrom(cmd: Command): LedgerConfig {
  const opts = cmd.optsWithGlobals() as { dataDir?: string; store?: LedgerConfig['store']; synchronous?: string; databaseUrl?: string; kurrentdbUrl?: string; config?: string; auditKeyFile?: string; serverKeyFile?: string; repoRoot?: string; githubEnterpriseHost?: string[]; unsafeRenderWithoutSandbox?: boolean };
  return loadConfig({
    dataDir: opts.dataDir,
    store: opts.store,
    synchronous: opts.synchronous as LedgerConfig['synchronous'],
    databaseUrl: opts.databaseUrl,
    kurrentdbUrl: opts.kurrentdbUrl,
    configFile: opts.config,
    auditKeyFile: opts.auditKeyFile,
    serverKeyFile: opts.serverKeyFile,
    repoRoot: opts.repoRoot,
    githubEnterpriseHosts: opts.githubEnterpriseHost,
    unsafeRenderWithoutSandbox: opts.unsafeRenderWithoutSandbox ? true : undefined,
  });
}

/**
 * Opens a Ledger for one CLI action and always closes it. Domain errors print their code and message.
 * It never migrates a PostgreSQL schema (only `serve` and `migrate` do): an outdated schema is refused
 * with schema_outdated, which names `review-ledger migrate`.
 */
export async function withLedger<T>(cmd: Command, fn: (ledger: Ledger) => Promise<T>): Promise<T | undefined> {
  const ledger = new Ledger({ ...configFrom(cmd), migrateSchema: false }, { onOpenWorkspace: attachReadModels });
  try {
    return await fn(ledger);
  } catch (err) {
    if (isDomainError(err)) {
      process.stderr.write(`error [${err.code}]: ${err.message}\n`);
      process.exitCode = 1;
      return undefined;
    }
    throw err;
  } finally {
    await ledger.close();
  }
}
