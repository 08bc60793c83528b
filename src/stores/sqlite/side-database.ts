import type BetterSqlite3 from 'better-sqlite3';
import * as fs from 'node:fs';
import { isStoreDamagedError, touchPrivate } from '../private-files';

/** A SQLite database beside the log (a side table's file): better-sqlite3's handle. */
export type SideDatabase = BetterSqlite3.Database;

export interface SideDatabaseOptions {
  /** WAL journal (default true): readers never wait for the writer. */
  wal?: boolean;
  /** Durability of this file's commits (default: SQLite's, FULL). A cache that can be rebuilt may say OFF. */
  synchronous?: 'OFF' | 'NORMAL' | 'FULL';
  /** Wait this long for another writer (another process serving the workspace) instead of failing; default 5000. */
  busyTimeoutMs?: number;
  readonly?: boolean;
  /** Open only an existing file (default false: create it, 0600). */
  fileMustExist?: boolean;
  /**
   * The file holds only what can be made again (a read model, positions, a cache): when SQLite finds it
   * damaged at open, it is moved aside (quarantineDamaged) and a fresh one is opened. The text says, for
   * the log, what happens next ("rebuilt from the log").
   */
  replaceWhenDamaged?: string;
}

/**
 * Moves a damaged SQLite file (and its -wal, -shm) aside as `<file>.damaged-<time>` — kept for whoever
 * wants to look, never opened again — and says so in the log with what happens next.
 */
export function quarantineDamaged(file: string, err: unknown, next: string): void {
  const aside = `${file}.damaged-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  for (const suffix of ['', '-wal', '-shm']) {
    if (fs.existsSync(file + suffix)) fs.renameSync(file + suffix, aside + suffix);
  }
  console.error(`review-ledger: ${file} is damaged (${(err as { code?: string }).code}: ${(err as Error).message}): moved to ${aside}; ${next}`);
}

/**
 * The side-table port: the one place outside the event store that opens a SQLite file. Every file the
 * ledger keeps beside a workspace's log (read models, consumer positions, no-op keys, the code-graph cache)
 * and the data dir's catalogue opens here, with the house rules: the file is created 0600 before SQLite
 * opens it (SQLite gives its -wal and -shm files the same mode; docs/security.md "Data at rest"), WAL, a
 * busy timeout, and the durability its data needs. `:memory:` gives a throwaway database.
 */
export function openSideDatabase(file: string, options: SideDatabaseOptions = {}): SideDatabase {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const Database = require('better-sqlite3') as typeof BetterSqlite3;
  if (file === ':memory:') return new Database(':memory:');
  if (!options.replaceWhenDamaged) return openChecked(Database, file, options);
  try {
    return openChecked(Database, file, options);
  } catch (err) {
    if (!isStoreDamagedError(err)) throw err;
    quarantineDamaged(file, err, options.replaceWhenDamaged);
    return openChecked(Database, file, options);
  }
}

/** Opens `file` with the house rules and reads its schema once, so a damaged header or schema shows here. */
function openChecked(Database: typeof BetterSqlite3, file: string, options: SideDatabaseOptions): SideDatabase {
  if (!options.fileMustExist && !options.readonly) touchPrivate(file);
  const db = new Database(file, { readonly: options.readonly ?? false, fileMustExist: options.fileMustExist ?? options.readonly ?? false });
  try {
    if (options.readonly) return db;
    if (options.wal ?? true) db.pragma('journal_mode = WAL');
    if (options.synchronous) db.pragma(`synchronous = ${options.synchronous}`);
    db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
    if (options.replaceWhenDamaged) db.prepare('SELECT count(*) FROM sqlite_schema').get();
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}
