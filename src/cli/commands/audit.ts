import * as fs from 'node:fs';
import type { Command } from 'commander';
import { DomainError } from '../../domain-error';
import { hasAuditLog } from '../../events/chain';
import type { Ledger } from '../../ledger';
import { AuditableStore, rotateCheckpointKey, verifyStore, writeCheckpoint } from '../../audit/checkpointer';
import { AuditExport, verifyAuditExport, writeAuditExport } from '../../audit/export';
import { AuditKeyring } from '../../audit/keys';
import { formatReport } from '../../audit/verify';
import { withLedger } from '../context';

async function auditable(ledger: Ledger, workspace: string | undefined): Promise<AuditableStore> {
  if (!workspace) throw new DomainError('missing_workspace', '--workspace: required');
  const { store } = await ledger.workspace(workspace);
  if (!hasAuditLog(store)) throw new DomainError('audit_unsupported', `store: the ${store.adapter} adapter keeps no hash chain (see docs/stores.md)`);
  return store;
}

type Opts = { workspace?: string; json?: boolean };

/** audit verify | export | checkpoint | rotate-key, under the existing `audit` command. */
export function registerAuditSubcommands(audit: Command): void {
  audit
    .command('verify')
    .description('Recompute the workspace\'s hash chain and check its signed checkpoints; exit 1 at the first broken position')
    .option('--file <export>', 'verify an `audit export` file instead of the store')
    .action(async (opts: { file?: string }, cmd: Command) => {
      const { workspace, json } = cmd.optsWithGlobals() as Opts;
      await withLedger(cmd, async (ledger) => {
        const key = new AuditKeyring(ledger.config.dataDir).current(false);
        const report = opts.file
          ? await verifyAuditExport(JSON.parse(fs.readFileSync(opts.file, 'utf8')) as AuditExport, key?.publicKey)
          : await verifyStore(await auditable(ledger, workspace), key?.publicKey);
        process.stdout.write(json ? `${JSON.stringify(report)}\n` : formatReport(report));
        if (!report.ok) process.exitCode = 1;
      });
    });
  audit
    .command('export')
    .description('Write a self-contained file (events as stored, checkpoints, public key) that an outsider can verify')
    .requiredOption('--out <file>', 'where to write the export')
    .option('--no-checkpoint', 'do not sign a checkpoint at the current head first')
    .action(async (opts: { out: string; checkpoint: boolean }, cmd: Command) => {
      const { workspace } = cmd.optsWithGlobals() as Opts;
      await withLedger(cmd, async (ledger) => {
        const store = await auditable(ledger, workspace);
        const key = new AuditKeyring(ledger.config.dataDir).current(opts.checkpoint);
        if (opts.checkpoint && key) await writeCheckpoint(store, key, ledger.clock());
        const out = await writeAuditExport(store, key, opts.out, ledger.clock());
        process.stdout.write(`wrote ${opts.out}: ${out.events} events, ${out.checkpoints} checkpoint(s)${key ? `, key ${key.keyId}` : ''}\n`);
      });
    });
  audit
    .command('checkpoint')
    .description('Sign a checkpoint at the workspace\'s current head now (the server also does this on a schedule)')
    .action(async (_opts: unknown, cmd: Command) => {
      const { workspace, json } = cmd.optsWithGlobals() as Opts;
      await withLedger(cmd, async (ledger) => {
        const cp = await writeCheckpoint(await auditable(ledger, workspace), new AuditKeyring(ledger.config.dataDir).current()!, ledger.clock());
        process.stdout.write(json ? `${JSON.stringify(cp)}\n` : cp ? `checkpoint #${cp.seq} (${cp.kind}) at position ${cp.position}, key ${cp.keyId}\n` : 'nothing new to sign\n');
      });
    });
  audit
    .command('rotate-key')
    .description('Replace the checkpoint key: every workspace records a rotation signed by the old and the new key')
    .action(async (_opts: unknown, cmd: Command) => {
      await withLedger(cmd, async (ledger) => {
        const ring = new AuditKeyring(ledger.config.dataDir);
        const old = ring.current()!;
        const next = ring.nextKey();
        for (const w of ledger.workspaces.list()) {
          const store = await auditable(ledger, w.workspaceId);
          const cp = await rotateCheckpointKey(store, old, next, ledger.clock());
          process.stdout.write(`${w.workspaceId}: ${cp ? `rotation at checkpoint #${cp.seq}` : 'already rotated'}\n`);
        }
        ring.promoteNext();
        process.stdout.write(`key ${old.keyId} → ${next.keyId}\n`);
      });
    });
}
