import * as fs from 'node:fs';
import * as path from 'node:path';
import { DomainError } from '../domain-error';
import { AuditReceipt, parseReceipts } from './receipt';

/**
 * The witness directory (operator config `audit.witnessDir`, REVIEW_LEDGER_AUDIT_WITNESS_DIR): outside
 * the workspace database, ideally on another volume or machine. Every checkpoint the server or the CLI
 * signs is appended to `<dir>/<workspaceId>.receipts.jsonl` as a receipt, one per line, and fsynced
 * before the signer goes on. Nothing ever rewrites the file; `audit verify` compares the log with it, and
 * the checkpointer refuses to sign a store that went backwards relative to it (docs/audit.md).
 */
export const witnessFile = (dir: string, workspaceId: string): string => path.join(dir, `${workspaceId}.receipts.jsonl`);

/** Appends one receipt and fsyncs it (and the directory, when the file is new). */
export function appendWitness(dir: string, receipt: AuditReceipt): void {
  const file = witnessFile(dir, receipt.workspace);
  try {
    appendLine(dir, file, receipt);
  } catch (err) {
    throw new DomainError('audit_witness_unwritable', `workspace ${receipt.workspace}: checkpoint #${receipt.seq} is signed and stored, but the witness ${file} could not be appended to (${(err as Error).message}); the next checkpoint is checked against the witness's latest receipt`);
  }
}

function appendLine(dir: string, file: string, receipt: AuditReceipt): void {
  fs.mkdirSync(dir, { recursive: true });
  const created = !fs.existsSync(file);
  const fd = fs.openSync(file, 'a', 0o644);
  try {
    // A line cut short by a crash is left as it is (readers skip it); the next receipt starts on its own line.
    const size = fs.fstatSync(fd).size;
    let lead = '';
    if (size > 0) {
      const last = Buffer.alloc(1);
      const rfd = fs.openSync(file, 'r');
      try {
        fs.readSync(rfd, last, 0, 1, size - 1);
      } finally {
        fs.closeSync(rfd);
      }
      if (last[0] !== 0x0a) lead = '\n';
    }
    fs.writeSync(fd, `${lead}${JSON.stringify(receipt)}\n`);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  if (created) fsyncDir(dir);
}

function fsyncDir(dir: string): void {
  let fd: number | null = null;
  try {
    fd = fs.openSync(dir, 'r');
    fs.fsyncSync(fd);
  } catch {
    // Some filesystems refuse fsync on a directory; the file itself is synced.
  } finally {
    if (fd !== null) fs.closeSync(fd);
  }
}

/** Every receipt the witness holds for a workspace, in the order written; [] when it holds none. */
export function readWitness(dir: string, workspaceId: string): AuditReceipt[] {
  const file = witnessFile(dir, workspaceId);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new DomainError('audit_witness_unreadable', `witness ${file}: ${(err as Error).message}`);
  }
  const receipts = parseReceipts(text, `witness ${file}`, { lines: true });
  const stranger = receipts.find((r) => r.workspace !== workspaceId);
  if (stranger) throw new DomainError('invalid_receipt', `witness ${file}: holds a receipt of workspace "${stranger.workspace}"`);
  return receipts;
}

/** The receipt with the highest seq (the latest checkpoint the witness saw), or null. */
export function latestWitnessed(receipts: AuditReceipt[]): AuditReceipt | null {
  let best: AuditReceipt | null = null;
  for (const r of receipts) if (!best || r.seq > best.seq) best = r;
  return best;
}

/** Bytes read from the end of a witness file for its latest receipt (~80 receipts): the signer never reads the whole history. */
const TAIL_BYTES = 64 * 1024;

/**
 * The latest receipt of a workspace's witness file, read from its tail (receipts are appended in seq
 * order, up to two signers racing by one), or null when the witness holds none.
 */
export function readLatestWitnessed(dir: string, workspaceId: string): AuditReceipt | null {
  const file = witnessFile(dir, workspaceId);
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new DomainError('audit_witness_unreadable', `witness ${file}: ${(err as Error).message}`);
  }
  let text: string;
  let whole: boolean;
  try {
    const size = fs.fstatSync(fd).size;
    const start = Math.max(0, size - TAIL_BYTES);
    const buf = Buffer.alloc(size - start);
    fs.readSync(fd, buf, 0, buf.length, start);
    text = buf.toString('utf8');
    whole = start === 0;
    // Drop the (possibly partial) first line of a tail window.
    if (!whole) text = text.slice(text.indexOf('\n') + 1);
  } finally {
    fs.closeSync(fd);
  }
  const receipts = parseReceipts(text, `witness ${file}`, { lines: true });
  // A tail window with no whole receipt in it (a torn line longer than the window): read everything.
  if (receipts.length === 0 && !whole) return latestWitnessed(readWitness(dir, workspaceId));
  const stranger = receipts.find((r) => r.workspace !== workspaceId);
  if (stranger) throw new DomainError('invalid_receipt', `witness ${file}: holds a receipt of workspace "${stranger.workspace}"`);
  return latestWitnessed(receipts);
}
