import Database from 'better-sqlite3';
import * as path from 'node:path';
import type { WorkspaceHandle } from '../workspaces/registry';
import { touchPrivate } from '../events/store/private-files';

export interface NoopRecord {
  /** Who used the key: a key answers only its original caller (as for keys of written events). */
  principal: string;
  command: string;
  digest: string;
  /** The response bytes given the first time: a replay with the same payload returns exactly these. */
  json: string;
}

/**
 * Idempotency keys of commands that changed nothing (SPEC §3). Such a command appends no event, so the
 * event store cannot tell that its key was used: without this table, the same key with another payload
 * (`observeHead` of the same head from another `source`) would be accepted instead of answering
 * `idempotency_key_reused`. One small SQLite table per workspace folder (`<dir>/idempotency.db`),
 * durable across restarts; the first writer of a key wins under concurrency (`INSERT OR IGNORE`).
 * Events stay the log: nothing here is a fact of the review, only what a key already answered.
 */
export class NoopKeys {
  private readonly getStmt: Database.Statement<[string], NoopRecord>;
  private readonly putStmt: Database.Statement<[string, string, string, string, string]>;

  private constructor(private readonly db: Database.Database) {
    db.exec('CREATE TABLE IF NOT EXISTS noop_keys (key TEXT PRIMARY KEY, principal TEXT NOT NULL, command TEXT NOT NULL, digest TEXT NOT NULL, json TEXT NOT NULL) WITHOUT ROWID');
    this.getStmt = db.prepare('SELECT principal, command, digest, json FROM noop_keys WHERE key = ?');
    this.putStmt = db.prepare('INSERT OR IGNORE INTO noop_keys (key, principal, command, digest, json) VALUES (?, ?, ?, ?, ?)');
  }

  /** The workspace's table, opened once per workspace handle (closed with it). */
  static of(ws: WorkspaceHandle): NoopKeys {
    let keys = ws.cache.get(NoopKeys) as NoopKeys | undefined;
    if (!keys) {
      // The server user's alone, like every store file (docs/security.md "Data at rest").
      touchPrivate(path.join(ws.dir, 'idempotency.db'));
      const db = new Database(path.join(ws.dir, 'idempotency.db'));
      // Several processes may serve one workspace folder: wait for a writer instead of failing.
      db.pragma('busy_timeout = 5000');
      ws.cache.set(NoopKeys, (keys = new NoopKeys(db)));
    }
    return keys;
  }

  get(key: string): NoopRecord | undefined {
    return this.getStmt.get(key);
  }

  /** Records the key unless it is already there; returns what the key answers now (this record or the first one). */
  put(key: string, record: NoopRecord): NoopRecord {
    this.putStmt.run(key, record.principal, record.command, record.digest, record.json);
    return this.get(key)!;
  }

  /** Called by the workspace registry when the workspace closes. */
  closeWithWorkspace(): void {
    if (this.db.open) this.db.close();
  }
}
