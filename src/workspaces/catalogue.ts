import type Database from 'better-sqlite3';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isStoreDamagedError, mkdirPrivate } from '../stores/private-files';
import { DomainError } from '../domain-error';
import { openSideDatabase } from '../stores/sqlite/side-database';

export interface WorkspaceInfo {
  workspaceId: string;
  name: string;
  createdAt: string;
}

/**
 * Where the list of workspaces lives. Synchronous on purpose: isolation checks (`get`) run on every
 * request before any store opens, and callers rely on a plain answer, not a promise they could forget
 * to await. Implementations: SQLite under the data dir (one process), PostgreSQL (several processes).
 */
export interface WorkspaceCatalogue {
  get(workspaceId: string): WorkspaceInfo | undefined;
  list(): WorkspaceInfo[];
  /**
   * Registers a workspace; returns whether it was new (an existing id keeps its name, date and owner).
   * `createdBy`: the owner key it counts against (workspace-quota.ts); absent for the operator's.
   */
  register(workspaceId: string, name: string, createdAt: string, createdBy?: string): boolean;
  /** The owner key a workspace counts against, or undefined (the operator's, or unknown). */
  createdBy(workspaceId: string): string | undefined;
  /** How many workspaces count against an owner key. */
  countCreatedBy(createdBy: string): number;
  close(): Promise<void>;
}

/** `<dataDir>/catalog.db`: the catalogue of a single-process deployment. */
export class SqliteCatalogue implements WorkspaceCatalogue {
  private readonly db: Database.Database;
  private readonly stmts;

  constructor(dataDir: string) {
    mkdirPrivate(dataDir);
    const file = path.join(dataDir, 'catalog.db');
    try {
      this.db = openSideDatabase(file, { synchronous: 'FULL' });
      this.db.exec('CREATE TABLE IF NOT EXISTS workspaces (workspace_id TEXT PRIMARY KEY, name TEXT NOT NULL, created_at TEXT NOT NULL)');
    } catch (err) {
      // Not derived data (which workspaces exist): never replaced silently. Said plainly, naming the file.
      if (!isStoreDamagedError(err)) throw err;
      throw new DomainError('store_damaged', `the workspace catalogue ${file} is damaged (${(err as { code?: string }).code}: ${(err as Error).message}): restore it from a backup (docs/stores.md)`);
    }
    // Added in place to catalogues created before workspace quotas.
    const columns = this.db.prepare('PRAGMA table_info(workspaces)').all() as Array<{ name: string }>;
    if (!columns.some((c) => c.name === 'created_by')) this.db.exec('ALTER TABLE workspaces ADD COLUMN created_by TEXT');
    this.db.exec('CREATE INDEX IF NOT EXISTS workspaces_created_by ON workspaces (created_by)');
    this.stmts = {
      get: this.db.prepare('SELECT workspace_id AS workspaceId, name, created_at AS createdAt FROM workspaces WHERE workspace_id = ?'),
      list: this.db.prepare('SELECT workspace_id AS workspaceId, name, created_at AS createdAt FROM workspaces ORDER BY workspace_id'),
      insert: this.db.prepare('INSERT OR IGNORE INTO workspaces (workspace_id, name, created_at, created_by) VALUES (?, ?, ?, ?)'),
      createdBy: this.db.prepare('SELECT created_by AS createdBy FROM workspaces WHERE workspace_id = ?'),
      count: this.db.prepare('SELECT count(*) AS n FROM workspaces WHERE created_by = ?'),
    };
  }

  get(workspaceId: string): WorkspaceInfo | undefined {
    return this.stmts.get.get(workspaceId) as WorkspaceInfo | undefined;
  }

  list(): WorkspaceInfo[] {
    return this.stmts.list.all() as WorkspaceInfo[];
  }

  register(workspaceId: string, name: string, createdAt: string, createdBy?: string): boolean {
    return this.stmts.insert.run(workspaceId, name, createdAt, createdBy ?? null).changes === 1;
  }

  createdBy(workspaceId: string): string | undefined {
    return (this.stmts.createdBy.get(workspaceId) as { createdBy: string | null } | undefined)?.createdBy ?? undefined;
  }

  countCreatedBy(createdBy: string): number {
    return (this.stmts.count.get(createdBy) as { n: number }).n;
  }

  async close(): Promise<void> {
    this.db.close();
  }
}
