import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

const KEY_FILE = 'server.key';

/**
 * The server's own 256-bit secret (`<dataDir>/server.key`, mode 0600), created on first use. Token
 * secrets are derived from it and the issuing request's idempotency key, so an idempotent replay of
 * `issueToken` answers with the same token while the event log only ever holds its hash.
 */
export function loadServerKey(dataDir: string): Buffer {
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
