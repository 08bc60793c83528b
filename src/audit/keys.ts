import { KeyObject, createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DomainError } from '../domain-error';
import { configuredAuditKeyFile } from '../operator-config';
import { keyIdOf, publicKeyDer } from './checkpoint';

/**
 * The server's Ed25519 checkpoint key: `<dataDir>/audit-ed25519.pem` (PKCS#8, mode 0600). It is not
 * the HMAC `server.key`: that one is a shared secret, this one's public half is published so anyone
 * can check checkpoints without the server.
 */
export const AUDIT_KEY_FILE = 'audit-ed25519.pem';
/** A rotation in progress: the new key, written before any workspace is handed over to it. */
export const AUDIT_NEXT_KEY_FILE = 'audit-ed25519.next.pem';

export interface AuditKey {
  privateKey: KeyObject;
  /** SPKI DER, base64. */
  publicKey: string;
  keyId: string;
}

export function keyFromPem(pem: string): AuditKey {
  const privateKey = createPrivateKey(pem);
  const publicKey = publicKeyDer(createPublicKey(privateKey));
  return { privateKey, publicKey, keyId: keyIdOf(publicKey) };
}

export function generateAuditKey(): { key: AuditKey; pem: string } {
  const { privateKey } = generateKeyPairSync('ed25519');
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  return { key: keyFromPem(pem), pem };
}

/** Writes a key file with mode 0600 from the start (never briefly world-readable), atomically. */
export function writeKeyFile(file: string, pem: string): void {
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, pem, { mode: 0o600, flag: 'w' });
  fs.chmodSync(tmp, 0o600);
  fs.renameSync(tmp, file);
}

/** Where a rotation writes the next key: beside the current one (`x.pem` → `x.next.pem`). */
const nextFileOf = (file: string): string => (file.endsWith('.pem') ? `${file.slice(0, -4)}.next.pem` : `${file}.next`);

/**
 * The current key: the operator's key file when one is configured (never created: every server must
 * hold the same key), else `<dataDir>/audit-ed25519.pem`, created on first use. Re-read when the file
 * changes (a rotation by the CLI, or the operator, renames a new file in: new inode).
 */
export class AuditKeyring {
  private cached: { ino: number; mtimeMs: number; size: number; key: AuditKey } | null = null;
  readonly file: string;
  /** Whether the key comes from operator configuration (shared by every server) rather than the data dir. */
  readonly operatorProvided: boolean;

  constructor(readonly dataDir: string, keyFile?: string) {
    const operator = keyFile ?? configuredAuditKeyFile(dataDir);
    this.operatorProvided = operator !== undefined;
    this.file = operator ?? path.join(dataDir, AUDIT_KEY_FILE);
  }

  /** The key, or null when none exists and `create` is false (read-only tools never make one). */
  current(create = true): AuditKey | null {
    let st: fs.Stats | null = null;
    try {
      st = fs.statSync(this.file);
    } catch (err) {
      if (this.operatorProvided) throw new DomainError('invalid_config', `auditKeyFile (REVIEW_LEDGER_AUDIT_KEY_FILE): cannot read ${this.file}: ${(err as Error).message}`);
      if (!create) return null;
      fs.mkdirSync(this.dataDir, { recursive: true });
      writeKeyFile(this.file, generateAuditKey().pem);
      st = fs.statSync(this.file);
    }
    if (!this.cached || this.cached.ino !== st.ino || this.cached.mtimeMs !== st.mtimeMs || this.cached.size !== st.size) {
      this.cached = { ino: st.ino, mtimeMs: st.mtimeMs, size: st.size, key: keyFromPem(fs.readFileSync(this.file, 'utf8')) };
    }
    return this.cached.key;
  }

  private get nextFile(): string {
    return this.operatorProvided ? nextFileOf(this.file) : path.join(this.dataDir, AUDIT_NEXT_KEY_FILE);
  }

  /** The key a rotation is handing over to (created on the first call, reused by a resumed rotation). */
  nextKey(): AuditKey {
    const file = this.nextFile;
    if (!fs.existsSync(file)) writeKeyFile(file, generateAuditKey().pem);
    return keyFromPem(fs.readFileSync(file, 'utf8'));
  }

  /** Ends a rotation: the next key becomes the current one; the old private key is gone. */
  promoteNext(): void {
    fs.renameSync(this.nextFile, this.file);
    this.cached = null;
  }
}
