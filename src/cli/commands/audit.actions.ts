import * as fs from 'node:fs';
import type { Command } from 'commander';
import { DomainError } from '../../domain-error';
import { hasAuditLog } from '../../events/chain';
import type { Ledger } from '../../ledger';
import { AuditableStore, readCheckpointList, rotateCheckpointKey, verifyStore, witnessOf, witnessRollback, writeCheckpoint } from '../../audit/checkpointer';
import { readLatestWitnessed, witnessFile } from '../../audit/witness';
import { AuditExport, verifyAuditExport, writeAuditExport } from '../../audit/export';
import { AuditKeyring } from '../../audit/keys';
import { AuditReceipt, parseReceipts, receiptOf } from '../../audit/receipt';
import { WitnessInput, formatReport } from '../../audit/verify';
import { withLedger } from '../context';

/** The actions of `audit verify|export|checkpoint|status|rotate-key` (registered in review.ts), loaded when one runs. */

async function auditable(ledger: Ledger, workspace: string | undefined): Promise<AuditableStore> {
  if (!workspace) throw new DomainError('missing_workspace', '--workspace: required');
  const { store } = await ledger.workspace(workspace);
  if (!hasAuditLog(store)) throw new DomainError('audit_unsupported', `store: the ${store.adapter} adapter keeps no hash chain (see docs/stores.md)`);
  return store;
}

type Globals = { workspace?: string; json?: boolean };

/** Receipt files given with --witness, each as one witness named by its file. */
function receiptFiles(files: string[] | undefined): WitnessInput[] {
  return (files ?? []).map((file) => {
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (err) {
      throw new DomainError('invalid_receipt', `--witness ${file}: cannot read it (${(err as Error).message})`);
    }
    return { source: `receipt ${file}`, receipts: parseReceipts(text, `--witness ${file}`) };
  });
}

export async function verify(opts: { file?: string; witness?: string[] }, cmd: Command): Promise<void> {
  const { workspace, json } = cmd.optsWithGlobals() as Globals;
  await withLedger(cmd, async (ledger) => {
    // Read-only: never creates a key. Without one, a store's checkpoints are checked against their own genesis key.
    const key = new AuditKeyring(ledger.config.dataDir).current(false);
    const witnesses = receiptFiles(opts.witness);
    const witnessDir = ledger.operator.auditWitnessDir;
    let report;
    if (opts.file) {
      const doc = JSON.parse(fs.readFileSync(opts.file, 'utf8')) as AuditExport;
      // The configured witness speaks for the workspace the file claims to be.
      report = await verifyAuditExport(doc, key?.publicKey, [...witnesses, ...(witnessDir ? [witnessOf(witnessDir, doc.workspace)] : [])]);
    } else {
      report = await verifyStore(await auditable(ledger, workspace), key?.publicKey, { witnesses, witnessDir });
    }
    process.stdout.write(json ? `${JSON.stringify(report)}\n` : formatReport(report));
    if (!report.ok) process.exitCode = 1;
  });
}

/** Writes a receipt for the verifier to keep (pretty JSON, 0644: it holds nothing secret). */
function writeReceipt(file: string, receipt: AuditReceipt): void {
  fs.writeFileSync(`${file}.tmp`, `${JSON.stringify(receipt, null, 2)}\n`, { mode: 0o644 });
  fs.renameSync(`${file}.tmp`, file);
}

export async function exportLog(opts: { out: string; checkpoint: boolean; receipt?: string }, cmd: Command): Promise<void> {
  const { workspace } = cmd.optsWithGlobals() as Globals;
  await withLedger(cmd, async (ledger) => {
    const store = await auditable(ledger, workspace);
    const key = new AuditKeyring(ledger.config.dataDir).current(opts.checkpoint);
    if (opts.checkpoint && key) await writeCheckpoint(store, key, ledger.clock(), { witnessDir: ledger.operator.auditWitnessDir });
    const out = await writeAuditExport(store, key, opts.out, ledger.clock());
    if (opts.receipt) {
      if (!out.receipt) throw new DomainError('invalid_receipt', `--receipt ${opts.receipt}: the workspace has no checkpoint to give a receipt of (export without --no-checkpoint)`);
      writeReceipt(opts.receipt, out.receipt);
    }
    const kept = out.receipt ? `; receipt: checkpoint #${out.receipt.seq} at position ${out.receipt.position}${opts.receipt ? ` (also in ${opts.receipt})` : ''}` : '';
    process.stdout.write(`wrote ${opts.out}: ${out.events} events, ${out.checkpoints} checkpoint(s)${key ? `, key ${key.keyId}` : ''}${kept}\n`);
  });
}

export async function checkpoint(opts: { out?: string }, cmd: Command): Promise<void> {
  const { workspace, json } = cmd.optsWithGlobals() as Globals;
  await withLedger(cmd, async (ledger) => {
    const key = new AuditKeyring(ledger.config.dataDir).current()!;
    // A receipt asked for is always of a checkpoint signed now: at the head, even when it did not move.
    const cp = await writeCheckpoint(await auditable(ledger, workspace), key, ledger.clock(), { witnessDir: ledger.operator.auditWitnessDir, force: opts.out !== undefined });
    if (opts.out !== undefined) {
      if (!cp) throw new DomainError('audit_checkpoint_conflict', `workspace ${workspace}: another writer signed the same checkpoint at this moment; run it again for a receipt`);
      writeReceipt(opts.out, receiptOf(cp, key.publicKey));
    }
    process.stdout.write(json ? `${JSON.stringify(cp)}\n` : cp ? `checkpoint #${cp.seq} (${cp.kind}) at position ${cp.position}, key ${cp.keyId}${opts.out !== undefined ? `; receipt written to ${opts.out}` : ''}\n` : 'nothing new to sign\n');
  });
}

/**
 * Where signing stands for a workspace, without verifying the whole log: the head, the last checkpoint,
 * the witness's latest receipt, and whether a signer (the server's checkpointer, `audit checkpoint`)
 * would refuse to sign now because the store went backwards relative to the witness (exit 1 then).
 */
export async function status(cmd: Command): Promise<void> {
  const { workspace, json } = cmd.optsWithGlobals() as Globals;
  await withLedger(cmd, async (ledger) => {
    const store = await auditable(ledger, workspace);
    const [list, info] = await Promise.all([readCheckpointList(store), store.chainInfo()]);
    const dir = ledger.operator.auditWitnessDir;
    const latest = dir ? readLatestWitnessed(dir, store.workspaceId) : null;
    const refused = dir ? await witnessRollback(store, latest, list, info.headPosition) : null;
    const last = list[list.length - 1] ?? null;
    const out = {
      workspace: store.workspaceId,
      headPosition: info.headPosition,
      checkpoints: list.length,
      lastCheckpoint: last ? { seq: last.seq, position: last.position, time: last.time } : null,
      witness: dir ? { file: witnessFile(dir, store.workspaceId), latest: latest ? { seq: latest.seq, position: latest.position, time: latest.time } : null } : null,
      signing: refused ? { refused: true, reason: refused } : { refused: false },
    };
    if (json) process.stdout.write(`${JSON.stringify(out)}\n`);
    else {
      process.stdout.write(`workspace ${out.workspace}: head ${out.headPosition}, ${out.checkpoints} checkpoint(s)${last ? `, the last #${last.seq} at position ${last.position} (${last.time})` : ''}\n`);
      process.stdout.write(out.witness ? `witness ${out.witness.file}: ${latest ? `the latest receipt #${latest.seq} at position ${latest.position} (${latest.time})` : 'no receipt yet'}\n` : 'witness: none configured (audit.witnessDir / REVIEW_LEDGER_AUDIT_WITNESS_DIR)\n');
      process.stdout.write(refused ? `signing: REFUSED — ${refused}; run \`audit verify\`\n` : 'signing: allowed\n');
    }
    if (refused) process.exitCode = 1;
  });
}

export async function rotateKey(cmd: Command): Promise<void> {
  await withLedger(cmd, async (ledger) => {
    const ring = new AuditKeyring(ledger.config.dataDir);
    const old = ring.current()!;
    const next = ring.nextKey();
    // Every workspace first, the key file last: an interrupted rotation is resumed by running it again.
    for (const w of ledger.workspaces.list()) {
      const cp = await rotateCheckpointKey(await auditable(ledger, w.workspaceId), old, next, ledger.clock(), ledger.operator.auditWitnessDir);
      process.stdout.write(`${w.workspaceId}: ${cp ? `rotation recorded as checkpoint #${cp.seq}` : 'already rotated'}\n`);
    }
    ring.promoteNext();
    process.stdout.write(`key ${old.keyId} → ${next.keyId}\n`);
  });
}
