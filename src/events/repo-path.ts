import * as path from 'node:path';
import { DomainError } from '../domain-error';

/** A repo-relative path: normalized, never absolute, never escaping the work tree, no NUL. */
export function normalizeRepoPath(p: string): string {
  if (typeof p !== 'string' || p.length === 0) throw new DomainError('invalid_path', 'path: must be a non-empty repo-relative path');
  if (p.includes('\0')) throw new DomainError('invalid_path', 'path: must not contain NUL');
  const unix = p.replace(/\\/g, '/');
  if (unix.startsWith('/') || /^[a-zA-Z]:\//.test(unix)) throw new DomainError('invalid_path', `path: must be repo-relative, got absolute "${p}"`);
  const norm = path.posix.normalize(unix).replace(/^\.\//, '').replace(/\/$/, '');
  if (norm === '..' || norm.startsWith('../') || norm === '.' || norm === '') throw new DomainError('invalid_path', `path: escapes the repository ("${p}")`);
  return norm;
}
