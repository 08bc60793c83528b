import { KeyObject, createHash, createPublicKey, sign, verify } from 'node:crypto';

/**
 * Signed checkpoints (docs/audit.md). A checkpoint states "the workspace's log at `position` has head
 * hash `headHash`", signed with the server's Ed25519 key. A workspace's checkpoints form their own
 * chain (`prev` = digest of the previous checkpoint), starting with a `genesis` that carries the
 * signing public key; a `key_rotation` is signed by the old key AND the new one and hands over to the
 * new key from there on — rotation is itself a signed, chained record.
 */
export type CheckpointKind = 'genesis' | 'checkpoint' | 'key_rotation';

export interface CheckpointBody {
  v: 1;
  kind: CheckpointKind;
  workspace: string;
  seq: number;
  position: number;
  headHash: string;
  /** Server time, ISO-8601 UTC. */
  time: string;
  keyId: string;
  /** Digest of the previous checkpoint (checkpointDigest), null for the genesis. */
  prev: string | null;
  /** genesis: the signing key (SPKI DER, base64); key_rotation: the old key. */
  publicKey?: string;
  /** genesis: events 1..chainedFrom existed before the chain and were hashed at the upgrade. */
  chainedFrom?: number;
  newKeyId?: string;
  newPublicKey?: string;
}

export interface Checkpoint extends CheckpointBody {
  /** Ed25519 signature (base64) by `keyId` over signedMessage(body). */
  sig: string;
  /** key_rotation: the new key's signature over the same message. */
  newSig?: string;
}

/** The signed bytes: the body's fields (no signatures) as JSON with sorted keys. Values are flat. */
export function signedMessage(body: CheckpointBody): Buffer {
  const fields = Object.entries(body).filter(([k, v]) => k !== 'sig' && k !== 'newSig' && v !== undefined);
  fields.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Buffer.from(JSON.stringify(Object.fromEntries(fields)), 'utf8');
}

/** What the next checkpoint's `prev` holds: sha256 over the signed message and the signatures. */
export function checkpointDigest(cp: Checkpoint): string {
  return createHash('sha256').update(signedMessage(cp)).update(`\n${cp.sig}\n${cp.newSig ?? ''}`).digest('hex');
}

export const publicKeyDer = (key: KeyObject): string => key.export({ type: 'spki', format: 'der' }).toString('base64');
export const keyIdOf = (publicKeyBase64: string): string => createHash('sha256').update(Buffer.from(publicKeyBase64, 'base64')).digest('hex').slice(0, 16);
export const publicKeyFrom = (publicKeyBase64: string): KeyObject => createPublicKey({ key: Buffer.from(publicKeyBase64, 'base64'), format: 'der', type: 'spki' });

export const signBody = (body: CheckpointBody, privateKey: KeyObject): string => sign(null, signedMessage(body), privateKey).toString('base64');

export function signatureValid(body: CheckpointBody, sig: string | undefined, publicKeyBase64: string): boolean {
  if (typeof sig !== 'string') return false;
  try {
    return verify(null, signedMessage(body), publicKeyFrom(publicKeyBase64), Buffer.from(sig, 'base64'));
  } catch {
    return false;
  }
}
