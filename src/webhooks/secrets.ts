import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DomainError } from '../domain-error';

/**
 * Per-repo GitHub webhook secrets, kept OUT of the event log (an HMAC key must be readable to verify
 * with, so it cannot be stored hashed): `<workspaceDir>/webhook-secrets/<repoId>`, mode 0600.
 */
const REPO_ID_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

function fileFor(workspaceDir: string, repoId: string): string {
  if (!REPO_ID_RE.test(repoId) || repoId.includes('..')) throw new DomainError('invalid_payload', `repoId: "${repoId.slice(0, 100)}" is not a repo id`);
  return path.join(workspaceDir, 'webhook-secrets', repoId);
}

export function readWebhookSecret(workspaceDir: string, repoId: string): string | null {
  try {
    return fs.readFileSync(fileFor(workspaceDir, repoId), 'utf8').trim() || null;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/** Stores (or replaces) a repo's secret; generates 256 random bits when none is given. */
export function writeWebhookSecret(workspaceDir: string, repoId: string, secret?: string): string {
  const value = secret ?? randomBytes(32).toString('hex');
  if (value.length < 16 || value.length > 1000) throw new DomainError('invalid_payload', 'secret: must be 16–1000 characters');
  const file = fileFor(workspaceDir, repoId);
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, `${value}\n`, { mode: 0o600 });
  fs.renameSync(tmp, file);
  return value;
}
