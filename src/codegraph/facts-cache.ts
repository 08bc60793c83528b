import Database from 'better-sqlite3';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { mkdirPrivate, touchPrivate } from '../events/store/private-files';
import type { FileFacts } from './facts';

/**
 * Content-addressed cache of parse results: (blob SHA, grammar, engine version) → facts. A blob's facts
 * never change, so re-indexing another commit only parses the blobs this table has not seen.
 */
export class FactsCache {
  private readonly db: Database.Database;
  private readonly getStmt: Database.Statement<[string, string, string], { data: string }>;
  private readonly putStmt: Database.Statement<[string, string, string, string]>;

  private constructor(db: Database.Database) {
    this.db = db;
    db.exec(`CREATE TABLE IF NOT EXISTS codegraph_facts (
      blob TEXT NOT NULL, grammar TEXT NOT NULL, engine TEXT NOT NULL, data TEXT NOT NULL,
      PRIMARY KEY (blob, grammar, engine)) WITHOUT ROWID`);
    this.getStmt = db.prepare('SELECT data FROM codegraph_facts WHERE blob = ? AND grammar = ? AND engine = ?');
    this.putStmt = db.prepare('INSERT OR IGNORE INTO codegraph_facts (blob, grammar, engine, data) VALUES (?, ?, ?, ?)');
  }

  /** Opens (creating) the cache file `<dir>/codegraph.db`; `:memory:` for a throwaway cache. */
  static open(dir: string | ':memory:'): FactsCache {
    if (dir === ':memory:') return new FactsCache(new Database(':memory:'));
    mkdirPrivate(dir);
    touchPrivate(path.join(dir, 'codegraph.db'));
    const db = new Database(path.join(dir, 'codegraph.db'));
    db.pragma('journal_mode = WAL');
    // A lost cache entry is re-parsed, never wrong: durability is not worth an fsync per batch.
    db.pragma('synchronous = OFF');
    // Several commands (or processes) may index at once: wait for the writer instead of failing.
    db.pragma('busy_timeout = 5000');
    return new FactsCache(db);
  }

  get(blob: string, grammar: string, engine: string): FileFacts | undefined {
    const row = this.getStmt.get(blob, grammar, engine);
    return row ? (JSON.parse(row.data) as FileFacts) : undefined;
  }

  /** `json`, when given, is `JSON.stringify(facts)` already made (by an extract worker). */
  putMany(entries: Array<{ blob: string; grammar: string; engine: string; facts: FileFacts; json?: string }>): void {
    if (!entries.length) return;
    this.db.transaction(() => {
      for (const e of entries) this.putStmt.run(e.blob, e.grammar, e.engine, e.json ?? JSON.stringify(e.facts));
    })();
  }

  close(): void {
    this.db.close();
  }
}
