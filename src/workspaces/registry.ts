import * as fs from 'node:fs';
import * as path from 'node:path';
import { isStoreDamagedError, mkdirPrivate } from '../stores/private-files';
import { DomainError } from '../domain-error';
import { workspaceIdSchema } from '../events/catalogue/workspace';
import type { EventStore } from '../events/store/port';
import { damagedStoreError, SqliteEventStore, SynchronousMode } from '../stores/sqlite/sqlite-event-store';
import { SqliteCatalogue, type WorkspaceCatalogue, type WorkspaceInfo } from './catalogue';
import { SlotMap } from '../slots';
import { softOpenFileLimit } from '../operator-config';

export type { WorkspaceCatalogue, WorkspaceInfo } from './catalogue';

/** An open workspace: its store and the in-process caches that belong to it (never shared across workspaces). */
export interface WorkspaceHandle {
  readonly id: string;
  /** `<dataDir>/<workspaceId>`: the workspace's own folder (blob caches, diff images, …). */
  readonly dir: string;
  readonly store: EventStore;
  /** Per-workspace caches keyed by their owner (folded stream states, indexes, …). */
  readonly cache: SlotMap;
  /**
   * Keeps the workspace open until the returned release is called: whoever holds the handle beyond one
   * request (a stream, a subscription, a job) retains it, or the registry may close it when idle. Absent on
   * handles built outside a registry (tests), which never close on their own. See `retainWorkspace`.
   */
  readonly retain?: () => () => void;
}

/** Retains `ws` (see WorkspaceHandle.retain); the release is idempotent. */
export function retainWorkspace(ws: WorkspaceHandle): () => void {
  return ws.retain?.() ?? (() => undefined);
}

/** How many workspaces stay open at once, and how long an unused one stays open. */
export interface OpenWorkspaceLimits {
  /**
   * Open workspaces past which the least recently used idle one is closed (each holds about
   * FDS_PER_WORKSPACE files). Default: half the process's file limit divided by that, at least 8.
   */
  maxOpen?: number;
  /** An open workspace nobody used or retained for this long is closed (default 300 s). */
  idleMs?: number;
  /** A handle opened outside any request scope is not closed within this time of its last use (default 10 s). */
  graceMs?: number;
}

/** Files an open SQLite workspace holds: its log, read models, consumer positions and code-graph cache, each with WAL and shared memory. */
export const FDS_PER_WORKSPACE = 12;

/** The default `maxOpen`: half of the soft `nofile` limit over FDS_PER_WORKSPACE. */
export function defaultMaxOpenWorkspaces(): number {
  return Math.max(8, Math.min(4096, Math.floor(softOpenFileLimit() / 2 / FDS_PER_WORKSPACE)));
}

interface Slot {
  readonly handle: Promise<WorkspaceHandle>;
  /** Retains outstanding (requests in flight, streams, jobs): a retained workspace is never closed. */
  retained: number;
  /** When it was last opened or released (ms), for least-recently-used order; 0: only background work used it. */
  lastUsed: number;
  /** Opened outside any request scope (nothing retains it): not closed before this time (ms). */
  graceUntil: number;
}

export type StoreFactory = ((workspaceId: string, dir: string) => Promise<EventStore>) & {
  /** The catalogue that goes with this store (shared stores need a shared catalogue); default SQLite. */
  catalogue?: (dataDir: string) => WorkspaceCatalogue;
  /** Releases what the factory shares across workspaces (connection pools), after every store closed. */
  close?: () => Promise<void>;
  /** Opens what the stores share (and migrates it, when the factory may): a server awaits it before serving. */
  ready?: () => Promise<void>;
  /**
   * The stores share connections (PostgreSQL, KurrentDB) and hold no files per workspace: by default
   * their workspaces stay open (every server follows every workspace's events as they happen).
   */
  sharesConnections?: boolean;
  /**
   * What a closed workspace's files look like (SQLite: size and mtime of the log and its WAL), so a
   * follower can tell that another process wrote to it while it was closed.
   */
  fingerprint?: (dir: string) => string | null;
  /** The shared connection's state, for /health (`degraded` during an outage, with the reason). */
  health?: () => { status: 'ok' | 'degraded'; reason?: string; since?: string } | undefined;
  /** The catalogue's workspaces without blocking the thread (the catalogue's own calls do). */
  listWorkspaces?: () => Promise<WorkspaceInfo[]>;
};

export const sqliteStoreFactory = (synchronous: SynchronousMode = 'FULL'): StoreFactory => {
  // Workspaces whose log SQLite found damaged, for /health until the server restarts (after a restore).
  const damaged = new Map<string, { reason: string; since: string }>();
  const onDamaged = (workspaceId: string, reason: string) => {
    if (damaged.has(workspaceId)) return;
    damaged.set(workspaceId, { reason, since: new Date().toISOString() });
    console.error(`review-ledger: the event store of workspace "${workspaceId}" is damaged (${reason}): its calls answer store_damaged until it is restored from a backup and the server restarted`);
  };
  const factory: StoreFactory = async (workspaceId, dir) => {
    try {
      return new SqliteEventStore({ file: path.join(dir, 'workspace.db'), workspaceId, synchronous, onDamaged });
    } catch (err) {
      // Damaged where opening reads (the header, the schema): the same answer as a damaged page later.
      if (!isStoreDamagedError(err)) throw err;
      onDamaged(workspaceId, `${(err as { code?: string }).code}: ${(err as Error).message}`);
      throw damagedStoreError(workspaceId, err);
    }
  };
  factory.health = () => {
    if (damaged.size === 0) return undefined; // nothing to say: /health shows no connection for SQLite
    // A count, no names: /health needs no token (which workspaces exist is nobody else's business). The
    // server log names each one (onDamaged), and each call on one answers store_damaged naming it.
    return { status: 'degraded', reason: `the event store of ${damaged.size} workspace(s) is damaged (named in the server log): their calls answer store_damaged; restore from a backup`, since: [...damaged.values()][0].since };
  };
  factory.fingerprint = (dir) => {
    const parts: string[] = [];
    for (const f of ['workspace.db', 'workspace.db-wal']) {
      const st = fs.statSync(path.join(dir, f), { throwIfNoEntry: false });
      parts.push(st ? `${st.size}:${st.mtimeMs}` : '-');
    }
    return parts.join('/');
  };
  return factory;
};

/**
 * The workspace catalogue and the per-workspace store handles. Isolation starts here: an id is
 * validated and looked up in the catalogue BEFORE any store is opened or any folder created, and the
 * id grammar (a-z0-9-) cannot name a path outside the data dir. The catalogue is `<dataDir>/catalog.db`
 * unless the store factory brings a shared one (PostgreSQL, for several processes on one store).
 */
export class WorkspaceRegistry {
  private readonly catalog: WorkspaceCatalogue;
  private readonly slots = new Map<string, Slot>();
  /** Workspaces being closed: an open waits for the close to finish before it opens the files again. */
  private readonly closing = new Map<string, Promise<void>>();
  private readonly closeListeners: Array<(handle: WorkspaceHandle) => Promise<void> | void> = [];
  private readonly openListeners: Array<(handle: WorkspaceHandle) => void> = [];
  readonly limits: Required<OpenWorkspaceLimits>;
  private sweeper: NodeJS.Timeout | null = null;
  private closed = false;
  /** Workspaces this registry closed, and their files' fingerprint at that moment. */
  private readonly closedAs = new Map<string, string>();

  /** `onOpen`: what the composition root attaches to every handle it opens (its read side). */
  constructor(
    readonly dataDir: string,
    private readonly storeFactory: StoreFactory = sqliteStoreFactory(),
    catalogue?: WorkspaceCatalogue,
    onOpen?: (handle: WorkspaceHandle) => void,
    limits: OpenWorkspaceLimits = {},
  ) {
    mkdirPrivate(dataDir);
    this.catalog = catalogue ?? storeFactory.catalogue?.(dataDir) ?? new SqliteCatalogue(dataDir);
    if (onOpen) this.openListeners.push(onOpen);
    const shared = storeFactory.sharesConnections === true;
    this.limits = {
      maxOpen: limits.maxOpen ?? (shared ? Number.POSITIVE_INFINITY : defaultMaxOpenWorkspaces()),
      idleMs: limits.idleMs ?? (shared ? Number.POSITIVE_INFINITY : 300_000),
      graceMs: limits.graceMs ?? 10_000,
    };
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

  /**
   * Opens the store of a registered workspace; refuses unknown ids before touching the disk. Nothing
   * retains it: it may close once idle for `graceMs` after this call. A request keeps what it uses with
   * `acquire`, a stream or job with `retainWorkspace`.
   */
  async open(id: unknown): Promise<WorkspaceHandle> {
    const wid = WorkspaceRegistry.validateId(id);
    return (await this.slotFor(wid, 'grace', false)).handle;
  }

  /**
   * Opens a workspace for one request (an RPC frame, a command, an MCP tool call): it stays open until
   * `release`, and may close at once after it when more than `maxOpen` are open (least recently used first).
   * (Not AsyncLocalStorage: its promise hooks cost ~7 % of a server's CPU on Node 20.)
   */
  async acquire(id: unknown): Promise<{ handle: WorkspaceHandle; release: () => void }> {
    return this.retained(WorkspaceRegistry.validateId(id), 'use');
  }

  /**
   * Opens a workspace for background work (a catch-up, a checkpoint pass) without counting as a use:
   * once released it may be closed at once when more than `maxOpen` are open.
   */
  async lease(id: unknown): Promise<{ handle: WorkspaceHandle; release: () => void }> {
    return this.retained(WorkspaceRegistry.validateId(id), 'background');
  }

  private async retained(wid: string, use: 'use' | 'background'): Promise<{ handle: WorkspaceHandle; release: () => void }> {
    const slot = await this.slotFor(wid, use, true);
    const handle = await slot.handle.catch((err) => {
      this.release(slot, false);
      throw err;
    });
    return { handle, release: this.releaser(slot, use === 'use') };
  }

  /** A release of one retain of `slot`, idempotent (a second call does nothing). */
  private releaser(slot: Slot, touch: boolean): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.release(slot, touch);
    };
  }

  /** Called with each handle as it opens (after the read side is attached). */
  onOpened(listener: (handle: WorkspaceHandle) => void): () => void {
    this.openListeners.push(listener);
    return () => this.openListeners.splice(this.openListeners.indexOf(listener) >>> 0, 1);
  }

  /** Called (and awaited) before an idle workspace's store closes: stop following it, sign its tail. */
  beforeClose(listener: (handle: WorkspaceHandle) => Promise<void> | void): () => void {
    this.closeListeners.push(listener);
    return () => this.closeListeners.splice(this.closeListeners.indexOf(listener) >>> 0, 1);
  }

  /** The handles open now (their stores are open). */
  async openHandles(): Promise<WorkspaceHandle[]> {
    const out: WorkspaceHandle[] = [];
    for (const s of [...this.slots.values()]) {
      const h = await s.handle.catch(() => null);
      if (h) out.push(h);
    }
    return out;
  }

  /** How many workspaces are open now. */
  openCount(): number {
    return this.slots.size;
  }

  /**
   * The workspace's slot, opened if needed; `retain` counts a retain before anything may be closed.
   * `grace`: an unretained use (protected for graceMs); `use`: a retained request; `background`: no use.
   */
  private async slotFor(wid: string, use: 'grace' | 'use' | 'background', retain: boolean): Promise<Slot> {
    for (let pending = this.closing.get(wid); pending; pending = this.closing.get(wid)) await pending;
    let slot = this.slots.get(wid);
    let created = false;
    if (!slot) {
      if (this.closed) throw new DomainError('store_unavailable', 'the ledger is closed');
      if (!this.get(wid)) throw new DomainError('unknown_workspace', `workspace_id: "${wid}" is not a registered workspace`);
      const fresh: Slot = { handle: null as unknown as Promise<WorkspaceHandle>, retained: 0, lastUsed: 0, graceUntil: 0 };
      (fresh as { handle: Promise<WorkspaceHandle> }).handle = this.openHandle(wid, fresh);
      slot = fresh;
      this.slots.set(wid, slot);
      this.closedAs.delete(wid);
      slot.handle.catch(() => {
        if (this.slots.get(wid) === fresh) this.slots.delete(wid);
      });
      this.startSweeper();
      created = true;
    }
    if (use !== 'background') slot.lastUsed = Date.now();
    if (use === 'grace') slot.graceUntil = slot.lastUsed + this.limits.graceMs;
    if (retain) slot.retained++;
    // Room for the new one: the least recently used idle workspaces close (in the background).
    if (created) this.evict(slot);
    return slot;
  }

  private release(slot: Slot, touch = true): void {
    slot.retained = Math.max(0, slot.retained - 1);
    if (touch) slot.lastUsed = Date.now();
    if (slot.retained === 0 && this.slots.size > this.limits.maxOpen) this.evict();
  }

  private async openHandle(id: string, slot: Slot): Promise<WorkspaceHandle> {
    const dir = path.join(this.dataDir, id);
    if (path.dirname(dir) !== path.resolve(this.dataDir)) throw new DomainError('invalid_workspace_id', 'workspace_id: escapes the data dir');
    mkdirPrivate(dir);
    const store = await this.storeFactory(id, dir);
    const retain = (): (() => void) => {
      slot.retained++;
      return this.releaser(slot, true);
    };
    const handle: WorkspaceHandle = { id, dir, store, cache: new SlotMap(), retain };
    for (const listener of this.openListeners) listener(handle);
    return handle;
  }

  /** Closes idle workspaces past `maxOpen`, least recently used first. */
  private evict(spare?: Slot): void {
    const excess = this.slots.size - this.limits.maxOpen;
    if (excess <= 0) return;
    const now = Date.now();
    const idle = [...this.slots]
      .filter(([, s]) => s !== spare && s.retained === 0 && now >= s.graceUntil)
      .sort(([, a], [, b]) => a.lastUsed - b.lastUsed)
      .slice(0, excess);
    for (const [id, s] of idle) this.closeSlot(id, s);
  }

  /** Every minute: closes what nobody used for `idleMs`, and what is past `maxOpen` once its grace ran out. */
  private startSweeper(): void {
    if (this.sweeper || this.closed) return;
    if (this.limits.maxOpen === Number.POSITIVE_INFINITY && this.limits.idleMs === Number.POSITIVE_INFINITY) return;
    const every = Math.max(50, Math.min(60_000, this.limits.idleMs / 4, this.limits.graceMs));
    this.sweeper = setInterval(() => {
      const now = Date.now();
      for (const [id, s] of [...this.slots]) if (s.retained === 0 && now - s.lastUsed >= this.limits.idleMs) this.closeSlot(id, s);
      this.evict();
    }, every);
    this.sweeper.unref();
  }

  private closeSlot(id: string, slot: Slot): void {
    if (this.slots.get(id) !== slot) return;
    this.slots.delete(id);
    const done = (async () => {
      const handle = await slot.handle.catch(() => null);
      if (handle) await this.closeHandle(handle);
    })().finally(() => {
      if (this.closing.get(id) === done) this.closing.delete(id);
    });
    this.closing.set(id, done);
  }

  private async closeHandle(handle: WorkspaceHandle): Promise<void> {
    for (const listener of this.closeListeners) {
      try {
        await listener(handle);
      } catch (err) {
        process.stderr.write(`review-ledger: closing workspace ${handle.id}: ${(err as Error).message}\n`);
      }
    }
    await handle.store.close().catch(() => undefined);
    // Caches holding files of their own (read models, no-op keys, consumer positions) close with the workspace.
    for (const v of handle.cache.values()) await (v as { closeWithWorkspace?: () => unknown }).closeWithWorkspace?.();
    const fp = this.fingerprintOf(handle.id);
    if (fp !== null) this.closedAs.set(handle.id, fp);
  }

  private fingerprintOf(id: string): string | null {
    try {
      return this.storeFactory.fingerprint?.(path.join(this.dataDir, id)) ?? null;
    } catch {
      return null;
    }
  }

  /**
   * The workspaces this registry closed whose files changed since (another process appended), for a
   * follower to open again. Forgets them: each change is reported once.
   */
  changedSinceClosed(): string[] {
    const out: string[] = [];
    for (const [id, fp] of this.closedAs) {
      if (this.slots.has(id) || this.closing.has(id)) continue;
      const now = this.fingerprintOf(id);
      if (now !== fp) {
        this.closedAs.delete(id);
        out.push(id);
      }
    }
    return out;
  }

  /** Opens (and, when allowed, migrates) the shared store before anything is served; a no-op for SQLite. */
  async ready(): Promise<void> {
    await this.storeFactory.ready?.();
  }

  /**
   * The catalogue's workspaces without blocking the thread where the catalogue is a database away
   * (PostgreSQL: through the store's pool, bounded by its query timeout): what timers and /health use.
   */
  async listAsync(): Promise<WorkspaceInfo[]> {
    return this.storeFactory.listWorkspaces ? this.storeFactory.listWorkspaces() : this.catalog.list();
  }

  /** The shared store connection's state (PostgreSQL); undefined for stores without one. */
  storeHealth(): { status: 'ok' | 'degraded'; reason?: string; since?: string } | undefined {
    return this.storeFactory.health?.();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = null;
    const slots = [...this.slots.values()];
    this.slots.clear();
    await Promise.all([...this.closing.values()]);
    for (const s of slots) {
      const handle = await s.handle.catch(() => null);
      if (!handle) continue;
      await handle.store.close().catch(() => undefined);
      for (const v of handle.cache.values()) await (v as { closeWithWorkspace?: () => unknown }).closeWithWorkspace?.();
    }
    await this.catalog.close();
    await this.storeFactory.close?.();
  }
}
