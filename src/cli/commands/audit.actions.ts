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

/** The actions of `audit verify|export|checkpoint|rotate-key` (registered in review.ts), loaded when one runs. */

async function auditable(ledger: Ledger, workspace: string | undefined): Promise<AuditableStore> {
  if (!workspace) throw new DomainError('missing_workspace', '--workspace: required');
  const { store } = await ledger.workspace(workspace);
  if (!hasAuditLog(store)) throw new DomainError('audit_unsupported', `store: the ${store.adapter} adapter keeps no hash chain (see docs/stores.md)`);
  return store;
}

type Globals = { workspace?: string; json?: boolean };

export async function verify(opts: { file?: string }, cmd: Command): Promise<void> {
  const { workspace, json } = cmd.optsWithGlobals() as Globals;
  await withLedger(cmd, async (ledger) => {
    // Read-only: never creates a key. Without one, a store's checkpoints are checked against their own genesis key.
    const key = new AuditKeyring(ledger.config.dataDir).current(false);
    const report = opts.file
      ? await verifyAuditExport(JSON.parse(fs.readFileSync(opts.file, 'utf8')) as AuditExport, key?.publicKey)
      : await verifyStore(await auditable(ledger, workspace), key?.publicKey);
    process.stdout.write(json ? `${JSON.stringify(report)}\n` : formatReport(report));
    if (!report.ok) process.exitCode = 1;
  });
}

export async function exportLog(opts: { out: string; checkpoint: boolean }, cmd: Command): Promise<void> {
  const { workspace } = cmd.optsWithGlobals() as Globals;
  await withLedger(cmd, async (ledger) => {
    const store = await auditable(ledger, workspace);
    const key = new AuditKeyring(ledger.config.dataDir).current(opts.checkpoint);
    if (opts.checkpoint && key) await writeCheckpoint(store, key, ledger.clock());
    const out = await writeAuditExport(store, key, opts.out, ledger.clock());
    process.stdout.write(`wrote ${opts.out}: ${out.events} events, ${out.checkpoints} checkpoint(s)${key ? `, key ${key.keyId}` : ''}\n`);
  });
}

export async function checkpoint(cmd: Command): Promise<void> {
  const { workspace, json } = cmd.optsWithGlobals() as Globals;
  await withLedger(cmd, async (ledger) => {
    const cp = await writeCheckpoint(await auditable(ledger, workspace), new AuditKeyring(ledger.config.dataDir).current()!, ledger.clock());
    process.stdout.write(json ? `${JSON.stringify(cp)}\n` : cp ? `checkpoint #${cp.seq} (${cp.kind}) at position ${cp.position}, key ${cp.keyId}\n` : 'nothing new to sign\n');
  });
}

export async function rotateKey(cmd: Command): Promise<void> {
  await withLedger(cmd, async (ledger) => {
    const ring = new AuditKeyring(ledger.config.dataDir);
    const old = ring.current()!;
    const next = ring.nextKey();
    // Every workspace first, the key file last: an interrupted rotation is resumed by running it again.
    for (const w of ledger.workspaces.list()) {
      const cp = await rotateCheckpointKey(await auditable(ledger, w.workspaceId), old, next, ledger.clock());
      process.stdout.write(`${w.workspaceId}: ${cp ? `rotation recorded as checkpoint #${cp.seq}` : 'already rotated'}\n`);
    }
    ring.promoteNext();
    process.stdout.write(`key ${old.keyId} → ${next.keyId}\n`);
  });
}
