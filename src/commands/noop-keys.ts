import type Database from 'better-sqlite3';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { WorkspaceHandle } from '../workspaces/registry';
import type { EventStore, NoopRecord } from '../events/store/port';
import { Slot } from '../slots';
import { openSideDatabase } from '../stores/sqlite/side-database';

export type { NoopRecord } from '../events/store/port';

/**
 * Idempotency keys of commands that changed nothing (SPEC §3). Such a command appends no event, so the
 * events alone cannot tell that its key was used: without a record, the same key with another payload
 * (`observeHead` of the same head from another `source`) would be accepted instead of answering
 * `idempotency_key_reused`.
 *
 * They live in the event store's own database (SQLite: a table of the workspace file; PostgreSQL: a table
 * beside the events), claimed under the same lock as appends: a key is held by a no-op or by events,
 * never both, and every server sharing the store sees the same answer. Events stay the log: nothing here
 * is a fact of the review, only what a key already answered.
 */
export interface NoopKeyTable {
  find(key: string): Promise<NoopRecord | null>;
  /** Claims the key unless a no-op or events hold it: the record holding it now, or 'event'. */
  claim(key: string, record: NoopRecord): Promise<NoopRecord | 'event'>;
}

/** Where the keys lived before they moved into the event store (imported once, then renamed). */
const LEGACY_FILE = 'idempotency.db';

export function noopKeysOf(ws: WorkspaceHandle): NoopKeyTable {
  let table = ws.cache.get(NOOP_KEYS);
  if (!table) {
    const store = ws.store;
    if (store.claimNoopKey && store.findNoopKey) {
      const imported = importLegacyFile(ws.dir, store);
      table = {
        find: async (key) => (await imported, store.findNoopKey!(key)),
        claim: async (key, record) => (await imported, store.claimNoopKey!(key, record)),
      };
    } else {
      table = SideTable.open(ws.dir);
    }
    ws.cache.set(NOOP_KEYS, table);
  }
  return table;
}

const NOOP_KEYS = new Slot<NoopKeyTable>('noop-keys');

/** Keys recorded by an earlier build in `<dir>/idempotency.db` move into the store once (first claim wins there too). */
async function importLegacyFile(dir: string, store: EventStore): Promise<void> {
  const file = path.join(dir, LEGACY_FILE);
  if (!fs.existsSync(file)) return;
  let db: Database.Database;
  try {
    db = openSideDatabase(file, { readonly: true });
  } catch {
    return; // another process imported and renamed it meanwhile
  }
  try {
    const rows = db.prepare('SELECT key, principal, command, digest, json FROM noop_keys').all() as Array<NoopRecord & { key: string }>;
    for (const { key, ...record } of rows) await store.claimNoopKey!(key, record);
  } catch (err) {
    // A file without the table holds no key.
    if (!/no such table/.test(String((err as Error).message))) throw err;
  } finally {
    db.close();
  }
  fs.rmSync(`${file}-wal`, { force: true });
  fs.rmSync(`${file}-shm`, { force: true });
  try {
    fs.renameSync(file, `${file}.imported`);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

/**
 * For adapters that cannot keep the keys beside the events (KurrentDB): one small SQLite table per
 * workspace folder. The first writer of a key wins under concurrency (`INSERT OR IGNORE`), but a claim
 * and an append of events under the same key are not mutually exclusive here (docs/stores.md).
 */
class SideTable implements NoopKeyTable {
  private readonly getStmt: Database.Statement<[string], NoopRecord>;
  private readonly putStmt: Database.Statement<[string, string, string, string, string]>;

  private constructor(private readonly db: Database.Database) {
    db.exec('CREATE TABLE IF NOT EXISTS noop_keys (key TEXT PRIMARY KEY, principal TEXT NOT NULL, command TEXT NOT NULL, digest TEXT NOT NULL, json TEXT NOT NULL) WITHOUT ROWID');
    this.getStmt = db.prepare('SELECT principal, command, digest, json FROM noop_keys WHERE key = ?');
    this.putStmt = db.prepare('INSERT OR IGNORE INTO noop_keys (key, principal, command, digest, json) VALUES (?, ?, ?, ?, ?)');
  }

  static open(dir: string): SideTable {
    // The server user's alone, like every store file (docs/security.md "Data at rest").
    // Several processes may serve one workspace folder: the busy timeout waits for a writer instead of failing.
    return new SideTable(openSideDatabase(path.join(dir, LEGACY_FILE), { wal: false }));
  }

  async find(key: string): Promise<NoopRecord | null> {
    return this.getStmt.get(key) ?? null;
  }

  async claim(key: string, record: NoopRecord): Promise<NoopRecord> {
    this.putStmt.run(key, record.principal, record.command, record.digest, record.json);
    return this.getStmt.get(key)!;
  }

  /** Called by the workspace registry when the workspace closes. */
  closeWithWorkspace(): void {
    if (this.db.open) this.db.close();
  }
}
