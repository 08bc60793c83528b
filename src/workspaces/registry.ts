import * as fs from 'node:fs';
import * as path from 'node:path';
import { mkdirPrivate } from '../events/store/private-files';
import { DomainError } from '../domain-error';
import { workspaceIdSchema } from '../events/catalogue/workspace';
import type { EventStore } from '../events/store/port';
import { SqliteEventStore, SynchronousMode } from '../events/store/sqlite';
import { SqliteCatalogue, type WorkspaceCatalogue, type WorkspaceInfo } from './catalogue';

export type { WorkspaceCatalogue, WorkspaceInfo } from './catalogue';

/** An open workspace: its store and the in-process caches that belong to it (never shared across workspaces). */
export interface WorkspaceHandle {
  readonly id: string;
  /** `<dataDir>/<workspaceId>`: the workspace's own folder (blob caches, diff images, …). */
  readonly dir: string;
  readonly store: EventStore;
  /** Per-workspace caches keyed by their owner (folded stream states, indexes, …). */
  readonly cache: Map<unknown, unknown>;
}

export type StoreFactory = ((workspaceId: string, dir: string) => Promise<EventStore>) & {
  /** The catalogue that goes with this store (shared stores need a shared catalogue); default SQLite. */
  catalogue?: (dataDir: string) => WorkspaceCatalogue;
  /** Releases what the factory shares across workspaces (connection pools), after every store closed. */
  close?: () => Promise<void>;
  /** Opens what the stores share (and migrates it, when the factory may): a server awaits it before serving. */
  ready?: () => Promise<void>;
  /** The shared connection's state, for /health (`degraded` during an outage, with the reason). */
  health?: () => { status: 'ok' | 'degraded'; reason?: string; since?: string };
};

export const sqliteStoreFactory =
  (synchronous: SynchronousMode = 'FULL'): StoreFactory =>
  async (workspaceId, dir) =>
    new SqliteEventStore({ file: path.join(dir, 'workspace.db'), workspaceId, synchronous });

/**
 * The workspace catalogue and the per-workspace store handles. Isolation starts here: an id is
 * validated and looked up in the catalogue BEFORE any store is opened or any folder created, and the
 * id grammar (a-z0-9-) cannot name a path outside the data dir. The catalogue is `<dataDir>/catalog.db`
 * unless the store factory brings a shared one (PostgreSQL, for several processes on one store).
 */
export class WorkspaceRegistry {
  private readonly catalog: WorkspaceCatalogue;
  private readonly handles = new Map<string, Promise<WorkspaceHandle>>();

  /** `onOpen`: what the composition root attaches to every handle it opens (its read side). */
  constructor(
    readonly dataDir: string,
    private readonly storeFactory: StoreFactory = sqliteStoreFactory(),
    catalogue?: WorkspaceCatalogue,
    private readonly onOpen?: (handle: WorkspaceHandle) => void,
  ) {
    mkdirPrivate(dataDir);
    this.catalog = catalogue ?? storeFactory.catalogue?.(dataDir) ?? new SqliteCatalogue(dataDir);
  }

  static validateId(id: unknown): string {
    if (id === undefined || id === null || id === '') throw new DomainError('missing_workspace', 'workspace_id: required');
    const parsed = workspaceIdSchema.safeParse(id);
    if (!parsed.success) throw new DomainError('invalid_workspace_id', `workspace_id: ${parsed.error.issues[0].message}`);
    return parsed.data;
  }

  get(id: string): WorkspaceInfo | undefined {
    return this.catalog.get(id);
  }

  list(): WorkspaceInfo[] {
    return this.catalog.list();
  }

  /** Registers a workspace in the catalogue; returns whether it was new. */
  register(id: string, name: string, createdAt: string, createdBy?: string): boolean {
    const wid = WorkspaceRegistry.validateId(id);
    return this.catalog.register(wid, name, createdAt, createdBy);
  }

  /**
   * Registers a workspace a tenant creates, counted against its owner key (see `ownerKeyOf`): refused with
   * `workspace_quota_exceeded` when that key already counts `limit` workspaces. A workspace that already
   * exists (an idempotent replay) is not counted again. Count and insert run without a yield in between.
   */
  registerWithin(id: string, name: string, createdAt: string, owner: string, limit: number): boolean {
    const wid = WorkspaceRegistry.validateId(id);
    if (this.catalog.get(wid)) return false;
    const used = this.catalog.countCreatedBy(owner);
    if (used >= limit) {
      throw new DomainError('workspace_quota_exceeded', `workspaceId: the workspaces created from ${owner} number ${used}, the operator's limit (maxWorkspacesPerOwner ${limit}); "${wid}" was not created`, { limit, used });
    }
    return this.catalog.register(wid, name, createdAt, owner);
  }

  /**
   * Whom a workspace created by `principal` acting in `home` counts against: the owner key `home` itself
   * counts against when a tenant created it, so workspaces created from created workspaces share one
   * quota (no chain of owners multiplies it); otherwise `<home>/<principal>`.
   */
  ownerKeyOf(home: string, principal: string): string {
    return this.catalog.createdBy(home) ?? `${home}/${principal}`;
  }

  /** Opens the store of a registered workspace; refuses unknown ids before touching the disk. */
  async open(id: unknown): Promise<WorkspaceHandle> {
    const wid = WorkspaceRegistry.validateId(id);
    let handle = this.handles.get(wid);
    if (!handle) {
      if (!this.get(wid)) throw new DomainError('unknown_workspace', `workspace_id: "${wid}" is not a registered workspace`);
      handle = this.openHandle(wid);
      this.handles.set(wid, handle);
      handle.catch(() => this.handles.delete(wid));
    }
    return handle;
  }

  private async openHandle(id: string): Promise<WorkspaceHandle> {
    const dir = path.join(this.dataDir, id);
    if (path.dirname(dir) !== path.resolve(this.dataDir)) throw new DomainError('invalid_workspace_id', 'workspace_id: escapes the data dir');
    mkdirPrivate(dir);
    const store = await this.storeFactory(id, dir);
    const handle: WorkspaceHandle = { id, dir, store, cache: new Map() };
    this.onOpen?.(handle);
    return handle;
  }

  /** Opens (and, when allowed, migrates) the shared store before anything is served; a no-op for SQLite. */
  async ready(): Promise<void> {
    await this.storeFactory.ready?.();
  }

  /** The shared store connection's state (PostgreSQL); undefined for stores without one. */
  storeHealth(): { status: 'ok' | 'degraded'; reason?: string; since?: string } | undefined {
    return this.storeFactory.health?.();
  }

  async close(): Promise<void> {
    const handles = [...this.handles.values()];
    this.handles.clear();
    for (const h of handles) {
      const handle = await h.catch(() => null);
      if (!handle) continue;
      await handle.store.close().catch(() => undefined);
      // Caches holding files of their own (e.g. the no-op idempotency keys) close with the workspace.
      for (const v of handle.cache.values()) (v as { closeWithWorkspace?: () => void }).closeWithWorkspace?.();
    }
    await this.catalog.close();
    await this.storeFactory.close?.();
  }
}
