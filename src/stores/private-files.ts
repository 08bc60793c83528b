import * as fs from 'node:fs';

/**
 * Data at rest is the server user's alone (SPEC §16): folders 0700, files 0600, whatever the umask.
 * SQLite gives its -wal and -shm files the mode of the database file, so creating that file 0600
 * before SQLite opens it covers all three.
 */
export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

export function mkdirPrivate(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
}

/** Creates `file` (mode 0600) if it does not exist, so a database opened on it inherits the mode. */
export function touchPrivate(file: string): void {
  fs.closeSync(fs.openSync(file, 'a', PRIVATE_FILE_MODE));
}

/**
 * SQLite's answers for "the disk or the file cannot take this write" — or another process holds its
 * write lock past the busy timeout (BUSY, LOCKED): a store problem, not a bug.
 */
const UNAVAILABLE_CODES = /^SQLITE_(FULL|IOERR|READONLY|CANTOPEN|CORRUPT|NOTADB|PROTOCOL|BUSY|LOCKED)/;

export function isStoreUnavailableError(err: unknown): boolean {
  // By name, not `instanceof Error`: better-sqlite3's native half keeps the error class of the context that
  // loaded it first, so under a test runner's per-file contexts its errors are not this context's Errors.
  return typeof err === 'object' && err !== null && (err as { name?: unknown }).name === 'SqliteError' && UNAVAILABLE_CODES.test((err as { code?: string }).code ?? '');
}

/** SQLite's answers for a file that is not a sound database: a damaged page, a header that is not SQLite's. */
const DAMAGED_CODES = /^SQLITE_(CORRUPT|NOTADB)/;

/** Whether `err` says the database file is damaged (by name, as isStoreUnavailableError). */
export function isStoreDamagedError(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { name?: unknown }).name === 'SqliteError' && DAMAGED_CODES.test((err as { code?: string }).code ?? '');
}
