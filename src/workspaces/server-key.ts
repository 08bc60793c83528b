import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DomainError } from '../domain-error';

const KEY_FILE = 'server.key';

/**
 * The server's own 256-bit secret (`<dataDir>/server.key`, mode 0600), created on first use. Token
 * secrets are derived from it and the issuing request's idempotency key, so an idempotent replay of
 * `issueToken` answers with the same token while the event log only ever holds its hash. Several
 * servers on one store must hold the same secret: the operator's `serverKeyFile` /
 * REVIEW_LEDGER_SERVER_KEY_FILE, used instead of the data dir's file when configured.
 */
export function loadServerKey(dataDir: string, operatorFile?: string | null): Buffer {
  if (operatorFile) {
    // Shared by every server on one store (docs/stores.md): never created here, or two servers would
    // derive different secrets for one idempotent issueToken.
    let key: Buffer;
    try {
      key = fs.readFileSync(operatorFile);
    } catch (err) {
      throw new DomainError('invalid_config', `serverKeyFile (REVIEW_LEDGER_SERVER_KEY_FILE): cannot read ${operatorFile}: ${(err as Error).message}`);
    }
    if (key.length < 32) throw new DomainError('invalid_config', `serverKeyFile (REVIEW_LEDGER_SERVER_KEY_FILE): ${operatorFile} holds ${key.length} bytes, at least 32 are needed (e.g. head -c 32 /dev/urandom > file)`);
    return key;
  }
  const file = path.join(dataDir, KEY_FILE);
  try {
    const key = fs.readFileSync(file);
    if (key.length >= 32) return key;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  fs.mkdirSync(dataDir, { recursive: true });
  const fresh = randomBytes(32);
  try {
    // 'wx': two processes starting at once must not overwrite each other's key.
    fs.writeFileSync(file, fresh, { mode: 0o600, flag: 'wx' });
    return fresh;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return fs.readFileSync(file);
    throw err;
  }
}
