import type BetterSqlite3 from 'better-sqlite3';
import { touchPrivate } from '../private-files';

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
  if (!options.fileMustExist && !options.readonly) touchPrivate(file);
  const db = new Database(file, { readonly: options.readonly ?? false, fileMustExist: options.fileMustExist ?? options.readonly ?? false });
  if (options.readonly) return db;
  if (options.wal ?? true) db.pragma('journal_mode = WAL');
  if (options.synchronous) db.pragma(`synchronous = ${options.synchronous}`);
  db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
  return db;
}
