import * as fs from 'node:fs';
import * as path from 'node:path';
import { mkdirPrivate } from '../stores/private-files';
import type { CheckerEdgeStore, FileFacts, StoredCheckerEdge } from './facts';
import type Database from 'better-sqlite3';
import { openSideDatabase } from '../stores/sqlite/side-database';

/**
 * Content-addressed cache of parse results: (blob SHA, grammar, engine version) → facts. A blob's facts
 * never change, so re-indexing another commit only parses the blobs this table has not seen.
 */
export class FactsCache implements CheckerEdgeStore {
  private readonly db: Database.Database;
  private readonly getStmt: Database.Statement<[string, string, string], { data: string }>;
  private readonly putStmt: Database.Statement<[string, string, string, string]>;
  private readonly getEdgesStmt: Database.Statement<[string, string, string], { data: string }>;
  private readonly putEdgesStmt: Database.Statement<[string, string, string, string]>;

  private constructor(db: Database.Database) {
    this.db = db;
    db.exec(`CREATE TABLE IF NOT EXISTS codegraph_facts (
      blob TEXT NOT NULL, grammar TEXT NOT NULL, engine TEXT NOT NULL, data TEXT NOT NULL,
      PRIMARY KEY (blob, grammar, engine)) WITHOUT ROWID`);
    // TypeScript checker results of one file at one commit (type-edges.ts): they depend on every text of
    // that commit the Program read, so they are keyed by commit, not by blob.
    db.exec(`CREATE TABLE IF NOT EXISTS codegraph_checker_edges (
      commit_sha TEXT NOT NULL, path TEXT NOT NULL, engine TEXT NOT NULL, data TEXT NOT NULL,
      PRIMARY KEY (commit_sha, path, engine)) WITHOUT ROWID`);
    this.getEdgesStmt = db.prepare('SELECT data FROM codegraph_checker_edges WHERE commit_sha = ? AND path = ? AND engine = ?');
    this.putEdgesStmt = db.prepare('INSERT OR IGNORE INTO codegraph_checker_edges (commit_sha, path, engine, data) VALUES (?, ?, ?, ?)');
    this.getStmt = db.prepare('SELECT data FROM codegraph_facts WHERE blob = ? AND grammar = ? AND engine = ?');
    this.putStmt = db.prepare('INSERT OR IGNORE INTO codegraph_facts (blob, grammar, engine, data) VALUES (?, ?, ?, ?)');
  }

  /** Opens (creating) the cache file `<dir>/codegraph.db`; `:memory:` for a throwaway cache. */
  static open(dir: string | ':memory:'): FactsCache {
    if (dir === ':memory:') return new FactsCache(openSideDatabase(':memory:'));
    mkdirPrivate(dir);
    // A lost cache entry is re-parsed, never wrong: durability is not worth an fsync per batch. Several
    // commands (or processes) may index at once: the busy timeout waits for the writer instead of failing.
    return new FactsCache(openSideDatabase(path.join(dir, 'codegraph.db'), { synchronous: 'OFF', replaceWhenDamaged: 'files are parsed again as they are needed' }));
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

  getCheckerEdges(commit: string, path: string, engine: string): StoredCheckerEdge[] | undefined {
    const row = this.getEdgesStmt.get(commit, path, engine);
    return row ? (JSON.parse(row.data) as StoredCheckerEdge[]) : undefined;
  }

  putCheckerEdges(entries: Array<{ commit: string; path: string; engine: string; edges: StoredCheckerEdge[] }>): void {
    if (!entries.length) return;
    this.db.transaction(() => {
      for (const e of entries) this.putEdgesStmt.run(e.commit, e.path, e.engine, JSON.stringify(e.edges));
    })();
  }

  /** Forgets every stored checker result (benchmarks measure the checker path cold with it). */
  clearCheckerEdges(): void {
    this.db.exec('DELETE FROM codegraph_checker_edges');
  }

  close(): void {
    this.db.close();
  }
}
