import * as fs from 'node:fs';
import { CHAIN_VERSION, ChainRow } from '../events/chain';
import { readCheckpointList, storePages, type AuditableStore } from './checkpointer';
import type { Checkpoint } from './checkpoint';
import type { AuditKey } from './keys';
import { AuditReceipt, latestReceipt } from './receipt';
import { VerifyReport, WitnessInput, verifyChain } from './verify';

/**
 * v2: events carry `hash` only; the hash each one links to is the previous event's (v1 also carried it as
 * `prevHash`). The chain itself is unchanged, so a v1 file still verifies here (its prevHash is ignored).
 */
export const EXPORT_FORMAT = 'review-ledger-audit-export/v2';

/** A self-contained audit file: everything an outsider needs to check the log without the server. */
export interface AuditExport {
  format: typeof EXPORT_FORMAT | 'review-ledger-audit-export/v1';
  chain: typeof CHAIN_VERSION;
  workspace: string;
  exportedAt: string;
  chainedFrom: number;
  /** The server's current checkpoint key, SPKI DER base64 (compare it with GET /.well-known/review-ledger/audit-key). */
  publicKey: string | null;
  keyId: string | null;
  checkpoints: Checkpoint[];
  /** The receipt of the last checkpoint (docs/audit.md, "Receipts and the witness"): keep it to detect a later rollback or rewrite. Null without checkpoints. */
  receipt?: AuditReceipt | null;
  /** Stored form: data and metadata are the JSON texts the chain hashed; hash in lowercase hex. */
  events: ChainRow[];
}

/** Writes the export as JSON, one event per line (streamed: the log is never held in memory whole). */
export async function writeAuditExport(store: AuditableStore, key: AuditKey | null, file: string, now: Date): Promise<{ events: number; checkpoints: number; receipt: AuditReceipt | null }> {
  const checkpoints = await readCheckpointList(store);
  const receipt = latestReceipt(checkpoints);
  const info = await store.chainInfo();
  const fd = fs.openSync(`${file}.tmp`, 'w', 0o644);
  let n = 0;
  try {
    const head = { format: EXPORT_FORMAT, chain: CHAIN_VERSION, workspace: store.workspaceId, exportedAt: now.toISOString(), chainedFrom: info.chainedFrom, publicKey: key?.publicKey ?? null, keyId: key?.keyId ?? null, checkpoints, receipt };
    fs.writeSync(fd, `${JSON.stringify(head).slice(0, -1)},"events":[\n`);
    for await (const page of storePages(store)()) {
      let chunk = '';
      for (const row of page) chunk += `${n++ === 0 ? '' : ',\n'}${JSON.stringify(row)}`;
      fs.writeSync(fd, chunk);
    }
    fs.writeSync(fd, '\n]}\n');
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(`${file}.tmp`, file);
  return { events: n, checkpoints: checkpoints.length, receipt };
}

/** Verifies an export with the project's own verifier (the independent one is in docs/audit.md). */
export function verifyAuditExport(doc: AuditExport, trustedPublicKey?: string, witnesses: WitnessInput[] = []): Promise<VerifyReport> {
  return verifyChain({
    workspace: doc.workspace,
    pages: async function* () {
      for (let i = 0; i < doc.events.length; i += 5000) yield doc.events.slice(i, i + 5000);
    },
    checkpoints: doc.checkpoints,
    trustedPublicKey: trustedPublicKey ?? doc.publicKey ?? undefined,
    chainedFrom: doc.chainedFrom,
    witnesses,
  });
}
