import Database from 'better-sqlite3';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DomainError } from '../domain-error';
import { workspaceIdSchema } from '../events/catalogue/workspace';
import type { EventStore } from '../events/store/port';
import { SqliteEventStore, SynchronousMode } from '../events/store/sqlite';

export interface WorkspaceInfo {
  workspaceId: string;
  name: string;
  createdAt: string;
}

/** An open workspace: its store and the in-process caches that belong to it (never shared across workspaces). */
export interface WorkspaceHandle {
  readonly id: string;
  /** `<dataDir>/<workspaceId>`: the workspace's own folder (blob caches, diff images, …). */
  readonly dir: string;
  readonly store: EventStore;
  /** Per-workspace caches keyed by their owner (folded stream states, indexes, …). */
  readonly cache: Map<unknown, unknown>;
}

export type StoreFactory = (workspaceId: string, dir: string) => Promise<EventStore>;

export const sqliteStoreFactory =
  (synchronous: SynchronousMode = 'FULL'): StoreFactory =>
  async (workspaceId, dir) =>
    new SqliteEventStore({ file: path.join(dir, 'workspace.db'), workspaceId, synchronous });

/**
 * The workspace catalogue (`<dataDir>/catalog.db`) and the per-workspace store handles. Isolation
 * starts here: an id is validated and looked up in the catalogue BEFORE any store is opened or any
 * folder created, and the id grammar (a-z0-9-) cannot name a path outside the data dir.
 */
export class WorkspaceRegistry {
  private readonly catalog: Database.Database;
  private readonly handles = new Map<string, Promise<WorkspaceHandle>>();
  private readonly stmts;

  constructor(readonly dataDir: string, private readonly storeFactory: StoreFactory = sqliteStoreFactory()) {
    fs.mkdirSync(dataDir, { recursive: true });
    this.catalog = new Database(path.join(dataDir, 'catalog.db'));
    this.catalog.pragma('journal_mode = WAL');
    this.catalog.pragma('synchronous = FULL');
    this.catalog.pragma('busy_timeout = 5000');
    this.catalog.exec('CREATE TABLE IF NOT EXISTS workspaces (workspace_id TEXT PRIMARY KEY, name TEXT NOT NULL, created_at TEXT NOT NULL)');
    this.stmts = {
      get: this.catalog.prepare('SELECT workspace_id AS workspaceId, name, created_at AS createdAt FROM workspaces WHERE workspace_id = ?'),
      list: this.catalog.prepare('SELECT workspace_id AS workspaceId, name, created_at AS createdAt FROM workspaces ORDER BY workspace_id'),
      insert: this.catalog.prepare('INSERT OR IGNORE INTO workspaces (workspace_id, name, created_at) VALUES (?, ?, ?)'),
    };
  }

  static validateId(id: unknown): string {
    if (id === undefined || id === null || id === '') throw new DomainError('missing_workspace', 'workspace_id: required', 'invalid');
    const parsed = workspaceIdSchema.safeParse(id);
    if (!parsed.success) throw new DomainError('invalid_workspace_id', `workspace_id: ${parsed.error.issues[0].message}`, 'invalid');
    return parsed.data;
  }

  get(id: string): WorkspaceInfo | undefined {
    return this.stmts.get.get(id) as WorkspaceInfo | undefined;
  }

  list(): WorkspaceInfo[] {
    return this.stmts.list.all() as WorkspaceInfo[];
  }

  /** Registers a workspace in the catalogue; returns whether it was new. */
  register(id: string, name: string, createdAt: string): boolean {
    const wid = WorkspaceRegistry.validateId(id);
    return this.stmts.insert.run(wid, name, createdAt).changes === 1;
  }

  /** Opens the store of a registered workspace; refuses unknown ids before touching the disk. */
  async open(id: unknown): Promise<WorkspaceHandle> {
    const wid = WorkspaceRegistry.validateId(id);
    let handle = this.handles.get(wid);
    if (!handle) {
      if (!this.get(wid)) throw new DomainError('unknown_workspace', `workspace_id: "${wid}" is not a registered workspace`, 'not_found');
      handle = this.openHandle(wid);
      this.handles.set(wid, handle);
      handle.catch(() => this.handles.delete(wid));
    }
    return handle;
  }

  private async openHandle(id: string): Promise<WorkspaceHandle> {
    const dir = path.join(this.dataDir, id);
    if (path.dirname(dir) !== path.resolve(this.dataDir)) throw new DomainError('invalid_workspace_id', 'workspace_id: escapes the data dir');
    fs.mkdirSync(dir, { recursive: true });
    const store = await this.storeFactory(id, dir);
    return { id, dir, store, cache: new Map() };
  }

  async close(): Promise<void> {
    const handles = [...this.handles.values()];
    this.handles.clear();
    for (const h of handles) await (await h).store.close().catch(() => undefined);
    this.catalog.close();
  }
}
