import { DomainError } from '../domain-error';
import { Checkpoint, checkpointDigest, keyIdOf, signatureValid } from './checkpoint';

/**
 * A receipt (docs/audit.md, "Receipts and the witness"): one signed checkpoint as a verifier keeps it,
 * outside the workspace database. It is the checkpoint exactly as signed — workspace, seq, position,
 * headHash (the chain hash at that position), time, keyId, prev, sig — plus two fields outside the
 * signature: `format`, and `signerPublicKey`, the key that made `sig` (its sha256 prefix is `keyId`).
 * A verifier who keeps its latest receipt detects a rollback or a rewrite of anything before it, even by
 * someone who deletes every checkpoint from the database (Go's checksum database client keeps the latest
 * tree head it saw in the same way).
 */
export const RECEIPT_FORMAT = 'review-ledger-audit-receipt/v1';

export interface AuditReceipt extends Checkpoint {
  format: typeof RECEIPT_FORMAT;
  /** SPKI DER, base64: the key that made `sig` (for a key_rotation, the old key). */
  signerPublicKey: string;
}

/** The checkpoint inside a receipt: the receipt without its two unsigned fields. */
export function checkpointOf(r: AuditReceipt): Checkpoint {
  const { format: _format, signerPublicKey: _signer, ...cp } = r;
  return cp;
}

export const receiptOf = (cp: Checkpoint, signerPublicKey: string): AuditReceipt => ({ format: RECEIPT_FORMAT, ...cp, signerPublicKey });

/** The receipt's signature holds for its own key, and `keyId` names that key. */
export function receiptSignatureValid(r: AuditReceipt): boolean {
  if (typeof r.signerPublicKey !== 'string' || keyIdOf(r.signerPublicKey) !== r.keyId) return false;
  return signatureValid(checkpointOf(r), r.sig, r.signerPublicKey);
}

export const receiptDigest = (r: AuditReceipt): string => checkpointDigest(checkpointOf(r));

/**
 * The key that signed each checkpoint of a chain, in order: the genesis's own key, then the key in force
 * (a key_rotation is signed by the old key and hands over to the new one for the next).
 */
export function signerKeys(checkpoints: Checkpoint[]): Array<string | null> {
  let active: string | null = null;
  return checkpoints.map((cp) => {
    if (cp.kind === 'genesis' && typeof cp.publicKey === 'string') active = cp.publicKey;
    const signer = active;
    if (cp.kind === 'key_rotation' && typeof cp.newPublicKey === 'string') active = cp.newPublicKey;
    return signer;
  });
}

/** The receipt of a chain's last checkpoint, or null when there is none. */
export function latestReceipt(checkpoints: Checkpoint[]): AuditReceipt | null {
  const last = checkpoints[checkpoints.length - 1];
  const signer = signerKeys(checkpoints).pop();
  return last && signer ? receiptOf(last, signer) : null;
}

const HEX64 = /^[0-9a-f]{64}$/;

/** Checks the shape of one parsed receipt; bad input is refused naming where it came from. */
export function asReceipt(value: unknown, where: string): AuditReceipt {
  const r = value as Partial<AuditReceipt> | null;
  const bad = (why: string): never => {
    throw new DomainError('invalid_receipt', `${where}: not an audit receipt (${why})`);
  };
  if (!r || typeof r !== 'object' || Array.isArray(r)) return bad('not a JSON object');
  if (r.format !== RECEIPT_FORMAT) return bad(`format must be "${RECEIPT_FORMAT}", got ${JSON.stringify(r.format)?.slice(0, 60)}`);
  if (typeof r.workspace !== 'string' || r.workspace === '') return bad('workspace: missing');
  if (!Number.isSafeInteger(r.seq) || (r.seq as number) < 0) return bad('seq: not a non-negative integer');
  if (!Number.isSafeInteger(r.position) || (r.position as number) < 0) return bad('position: not a non-negative integer');
  if (typeof r.headHash !== 'string' || !HEX64.test(r.headHash)) return bad('headHash: not 64 lowercase hex digits');
  if (typeof r.sig !== 'string' || typeof r.keyId !== 'string' || typeof r.signerPublicKey !== 'string') return bad('sig, keyId and signerPublicKey are required');
  return r as AuditReceipt;
}

/**
 * The receipts in a file a verifier kept: a receipt (`audit checkpoint --out`), an `audit export` (its
 * `receipt`), or a witness file (one receipt per line; `lines`: always read so, and [] when it holds
 * none). A last line without its newline that is not JSON is an append cut short by a crash, and is
 * skipped (in a witness file, any started object that is not JSON); any other line that is not a
 * receipt is refused.
 */
export function parseReceipts(text: string, source: string, options: { lines?: boolean } = {}): AuditReceipt[] {
  const trimmed = text.trim();
  if (trimmed === '' && !options.lines) throw new DomainError('invalid_receipt', `${source}: empty, no receipt in it`);
  if (!options.lines) {
    // One JSON document (a receipt, an export: both may span lines), else one receipt per line.
    let doc: Record<string, unknown> | undefined;
    try {
      doc = JSON.parse(trimmed) as Record<string, unknown>;
    } catch {
      if (!trimmed.startsWith('{') || !trimmed.includes('\n')) throw new DomainError('invalid_receipt', `${source}: not JSON, nor JSON lines`);
    }
    if (doc !== undefined) {
      if (doc && typeof doc.format === 'string' && doc.format.startsWith('review-ledger-audit-export/')) {
        if (!doc.receipt) throw new DomainError('invalid_receipt', `${source}: an audit export without a receipt (written before receipts, or with no checkpoint): export again, or give a receipt file`);
        return [asReceipt(doc.receipt, `${source} (receipt)`)];
      }
      return [asReceipt(doc, source)];
    }
  }
  const lines = text.split('\n');
  const out: AuditReceipt[] = [];
  lines.forEach((line, i) => {
    if (line.trim() === '') return;
    // An append cut short by a crash: the last line without its newline, or — in a witness file, which
    // only its signers write — a started object the next append put a newline after.
    const torn = i === lines.length - 1 || (options.lines === true && line.startsWith('{'));
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (err) {
      if (torn) return;
      throw new DomainError('invalid_receipt', `${source}: line ${i + 1} is not JSON (${(err as Error).message})`);
    }
    out.push(asReceipt(value, `${source}: line ${i + 1}`));
  });
  if (out.length === 0 && !options.lines) throw new DomainError('invalid_receipt', `${source}: no receipt in it`);
  return out;
}
