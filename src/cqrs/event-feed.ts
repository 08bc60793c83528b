import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { EventBus } from '@nestjs/cqrs';
import type { Subscription } from '../events/store/port';
import { Ledger } from '../ledger';
import type { WorkspaceHandle } from '../workspaces/registry';
import { consumerPositionsFor, type ConsumerPositions } from './consumer-positions';
import { toLedgerEvent, WorkspaceCaughtUp } from './events';
import { Slot } from '../slots';

/** Workspaces the feed opens at once to catch up (at start, after another process wrote to a closed one). */
const VISITS_AT_ONCE = 2;

/** Optional ledger service: how often the feed looks for new workspaces and for appends by other processes. */
export const EVENT_FEED_OPTIONS_SERVICE = new Slot<EventFeedOptions>('cqrs.feed.options');
/** Ledger service under which the running feed is registered (tests wait on `settled()`). */
export const EVENT_FEED_SERVICE = new Slot<LedgerEventFeed>('cqrs.feed');

export interface EventFeedOptions {
  /** New workspaces in the catalogue are followed within this many ms (default 1000). */
  rescanMs?: number;
  /**
   * A SQLite subscription wakes on this process's own appends; another process appending to the same
   * file wakes nobody here. Every `pollMs` (default 500) a feed on such a store that did not move while
   * the store's head did re-subscribes from where it stopped. Stores whose subscription is woken by
   * every writer (PostgreSQL's LISTEN/NOTIFY, KurrentDB's server-side subscription) are not polled.
   */
  pollMs?: number;
  /** How often the consumers' positions are committed (default 250 ms; also at catch-up and shutdown). */
  checkpointMs?: number;
}

/**
 * An @EventsHandler or @Saga whose position in each workspace's log is stored (`consumer_positions`):
 * the feed resumes a workspace from the lowest position of its consumers instead of replaying the whole
 * log, and a consumer skips what it already handled (`LedgerEventFeed.handled`). Register it with
 * `feed.register(this)` before the application bootstraps (its constructor or onModuleInit).
 */
export interface CheckpointedConsumer {
  /** Stable name its positions are stored under (a new name is handed the whole log once). */
  readonly consumer: string;
  /**
   * Up to which position everything the bus gave it in this workspace is handled, `published` being the
   * last position the feed published there (the bus calls handlers synchronously, so the consumer has
   * been given everything up to it). Read after handling: work still in flight holds the position back.
   */
  handledThrough(workspaceId: string, published: number): number;
}

/** Positions of work in flight per workspace: the lowest one holds a consumer's position back. */
export class InFlight {
  private readonly pending = new Map<string, Map<number, number>>();

  begin(workspaceId: string, position: number): void {
    let m = this.pending.get(workspaceId);
    if (!m) this.pending.set(workspaceId, (m = new Map()));
    m.set(position, (m.get(position) ?? 0) + 1);
  }

  end(workspaceId: string, position: number): void {
    const m = this.pending.get(workspaceId);
    const n = m?.get(position);
    if (!m || n === undefined) return;
    if (n > 1) m.set(position, n - 1);
    else m.delete(position);
  }

  through(workspaceId: string, published: number): number {
    let low = Infinity;
    for (const p of this.pending.get(workspaceId)?.keys() ?? []) if (p < low) low = p;
    return low === Infinity ? published : Math.min(published, low - 1);
  }
}

interface Follow {
  ws: WorkspaceHandle;
  sub: Subscription | null;
  /** Position of the last event published. */
  seen: number;
  /** `seen` at the last poll: a feed that stays put while the head moves is woken. */
  polledAt: number;
  caughtUp: boolean;
  /** Set by the poll before it closes the subscription: the loop subscribes again from `seen`. */
  resubscribe: boolean;
  reading: Promise<void>;
  /** Where the registered consumers' positions live, and where each stood when the feed started (or last committed). */
  positions: ConsumerPositions | null;
  committed: Map<string, number>;
  /** The last commit of positions failed (the store is away): logged once until one succeeds. */
  commitFailing?: boolean;
  /** The position each consumer had handled through when the feed started following: it skips up to there. */
  resumedFrom: Map<string, number>;
  /** Called once the log up to the head at follow time was published (a visit waits on it). */
  onCaughtUp: Array<() => void>;
}

/**
 * How a follow starts: `initial` (in the catalogue when the feed started: events up to the head then are
 * `replayed`), `created` (created while the feed ran: every event is live), `resumed` (opened again after
 * it was closed idle: what came after the committed positions was appended while the feed ran, live).
 */
type FollowMode = 'initial' | 'created' | 'resumed';

/**
 * Feeds the Nest EventBus from each workspace's store subscription: every event of the log — those of
 * this process and of another process on the same store — is published once it was read back from the
 * store, so nothing reaches a handler before it is durable. Nothing else publishes ledger events on
 * the bus: the kernel never does.
 *
 * On start-up a workspace resumes after the lowest stored position of the registered
 * CheckpointedConsumers (events up to the head at start are `replayed: true`); with none registered,
 * the whole log is replayed as before. A plain @EventsHandler sees what the feed publishes from there.
 */
@Injectable()
export class LedgerEventFeed implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly follows = new Map<string, Follow | null>();
  private rescan: NodeJS.Timeout | null = null;
  private rescanning = false;
  private poll: NodeJS.Timeout | null = null;
  private stopped = false;
  private readonly options: Required<EventFeedOptions>;
  private readonly consumers = new Map<string, CheckpointedConsumer>();
  private checkpointTimer: NodeJS.Timeout | null = null;
  /** Workspaces in the catalogue when the feed started, not yet followed: their first follow replays. */
  private readonly atStart = new Set<string>();
  /** Workspaces followed at least once (a later follow resumes). */
  private readonly followedOnce = new Set<string>();
  /** Workspaces to visit (open, catch up, release): at start, when created, when another process wrote to a closed one. */
  private readonly toVisit: string[] = [];
  private readonly visiting = new Set<string>();
  private unhook: Array<() => void> = [];
  /** Workspaces whose follow failed (the store was away): visited again at the next rescan. */
  private readonly retry = new Set<string>();

  constructor(
    @Inject(Ledger) private readonly ledger: Ledger,
    private readonly eventBus: EventBus,
  ) {
    const o = ledger.services.get(EVENT_FEED_OPTIONS_SERVICE) ?? {};
    this.options = { rescanMs: o.rescanMs ?? 1000, pollMs: o.pollMs ?? 500, checkpointMs: o.checkpointMs ?? 250 };
  }

  /** Gives a consumer a stored position per workspace (call before bootstrap: the feed reads them when it starts). */
  register(consumer: CheckpointedConsumer): void {
    const other = this.consumers.get(consumer.consumer);
    if (other && other !== consumer) throw new Error(`event feed: two consumers are named "${consumer.consumer}"`);
    this.consumers.set(consumer.consumer, consumer);
  }

  /** The position `consumer` had handled this workspace's log through when the feed started following it (0: none). */
  resumedAfter(consumer: string, workspaceId: string): number {
    return this.follows.get(workspaceId)?.resumedFrom.get(consumer) ?? 0;
  }

  /** Whether `consumer` had already handled this position of the workspace's log before this start (skip it). */
  handled(consumer: string, workspaceId: string, position: number): boolean {
    const f = this.follows.get(workspaceId);
    return !!f && position <= (f.resumedFrom.get(consumer) ?? 0);
  }

  // Bootstrap, not init: the CqrsModule (global, so its hook runs first) has bound every handler and saga by now.
  onApplicationBootstrap(): void {
    this.ledger.services.set(EVENT_FEED_SERVICE, this);
    // The feed follows every open workspace; the registry closes idle ones (an fd budget), and each
    // closed workspace is visited again when its files change.
    const registry = this.ledger.workspaces;
    this.unhook.push(registry.onOpened((ws) => this.follow(ws, this.modeFor(ws.id))));
    this.unhook.push(registry.beforeClose((ws) => this.unfollow(ws)));
    this.scan(true);
    this.followOpenOnes();
    this.rescan = setInterval(() => this.rescanLater(), this.options.rescanMs).unref();
    this.poll = setInterval(() => void this.wakeStalled(), this.options.pollMs).unref();
    this.checkpointTimer = setInterval(() => void this.commitAll(), this.options.checkpointMs).unref();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    for (const u of this.unhook) u();
    this.unhook = [];
    if (this.rescan) clearInterval(this.rescan);
    if (this.poll) clearInterval(this.poll);
    if (this.checkpointTimer) clearInterval(this.checkpointTimer);
    for (const f of this.follows.values()) f?.sub?.close();
    await Promise.all([...this.follows.values()].map((f) => f?.reading.catch(() => undefined)));
    await this.commitAll();
    for (const f of this.follows.values()) await f?.positions?.close().catch(() => undefined);
    if (this.ledger.services.get(EVENT_FEED_SERVICE) === this) this.ledger.services.delete(EVENT_FEED_SERVICE);
  }

  /**
   * Resolves once every workspace in the catalogue is followed and every event in its log at the time
   * of the call has been published (handlers bound to the bus have been called with it).
   */
  async settled(timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    this.scan();
    const heads = new Map<string, number>();
    for (const w of this.ledger.workspaces.list()) {
      const lease = await this.ledger.workspaces.lease(w.workspaceId);
      try {
        heads.set(w.workspaceId, await lease.handle.store.headPosition());
      } finally {
        lease.release();
      }
    }
    for (;;) {
      if (this.stopped) return;
      const pending = [...heads].filter(([id, head]) => {
        if (this.followedOnce.has(id) && !this.follows.has(id) && !this.visiting.has(id) && !this.toVisit.includes(id)) return false; // closed after it was followed through
        const f = this.follows.get(id);
        return !f || !f.caughtUp || f.seen < head;
      });
      if (pending.length === 0) return;
      if (Date.now() > deadline) throw new Error(`event feed: not settled after ${timeoutMs} ms (${pending.map(([id]) => id).join(', ')})`);
      await this.wakeStalled();
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  /**
   * Queues a visit to every workspace not yet seen: at the first scan those in the catalogue (their logs
   * are a replay), later the ones created while the feed ran (live), and closed ones another process
   * wrote to. A visit opens the workspace (the registry's open hook starts its follow), waits until its
   * log is published and the positions committed, and releases it: at most VISITS_AT_ONCE are open for
   * this, so a data dir of 1,000 workspaces never has them all open.
   */
  private scan(initial = false): void {
    if (this.stopped) return;
    this.enqueue(this.ledger.workspaces.list(), initial);
  }

  /**
   * The timer's scan: the catalogue read asynchronously (PostgreSQL's catalogue would block this thread
   * for a round trip each second, and for its whole timeout in a partition). The catalogue away (an
   * outage): nothing happens, the next rescan tries again.
   */
  private rescanLater(): void {
    if (this.stopped || this.rescanning) return;
    this.rescanning = true;
    this.ledger.workspaces
      .listAsync()
      .then((list) => {
        if (!this.stopped) this.enqueue(list, false);
      })
      .catch(() => undefined)
      .finally(() => (this.rescanning = false));
  }

  private enqueue(list: Array<{ workspaceId: string }>, initial: boolean): void {
    for (const w of list) {
      const id = w.workspaceId;
      if (this.follows.has(id) || this.followedOnce.has(id) || this.visiting.has(id) || this.toVisit.includes(id)) continue;
      if (initial) this.atStart.add(id);
      this.toVisit.push(id);
    }
    for (const id of this.ledger.workspaces.changedSinceClosed()) if (!this.toVisit.includes(id)) this.toVisit.push(id);
    for (const id of this.retry) if (!this.follows.has(id) && !this.toVisit.includes(id)) this.toVisit.push(id);
    this.retry.clear();
    this.drainVisits();
  }

  private modeFor(id: string): FollowMode {
    if (this.followedOnce.has(id)) return 'resumed';
    return this.atStart.has(id) ? 'initial' : 'created';
  }

  /** Workspaces opened before the feed started (the hook sees only later opens). */
  private followOpenOnes(): void {
    void this.ledger.workspaces.openHandles().then((hs) => {
      for (const ws of hs) if (!this.follows.has(ws.id)) this.follow(ws, this.modeFor(ws.id));
    });
  }

  private drainVisits(): void {
    while (!this.stopped && this.visiting.size < VISITS_AT_ONCE && this.toVisit.length > 0) {
      const id = this.toVisit.shift()!;
      this.visiting.add(id);
      void this.visit(id).finally(() => {
        this.visiting.delete(id);
        this.drainVisits();
      });
    }
  }

  private async visit(id: string): Promise<void> {
    let lease: { handle: WorkspaceHandle; release: () => void };
    try {
      lease = await this.ledger.workspaces.lease(id);
    } catch (err) {
      if (!this.stopped) console.error(`event feed: workspace ${id} could not be opened:`, (err as Error).message);
      return;
    }
    try {
      let f = this.follows.get(id);
      if (!f || f.ws !== lease.handle) {
        this.follow(lease.handle, this.modeFor(id));
        f = this.follows.get(id);
      }
      if (!f) return;
      const follow = f;
      if (!follow.caughtUp) await new Promise<void>((resolve) => follow.onCaughtUp.push(resolve));
      await this.commit(follow);
    } finally {
      lease.release();
    }
  }

  /** The registry is closing an idle workspace: stop following it and commit where its consumers stand. */
  private async unfollow(ws: WorkspaceHandle): Promise<void> {
    const f = this.follows.get(ws.id);
    if (!f || f.ws !== ws) return;
    this.follows.delete(ws.id);
    f.sub?.close();
    await f.reading.catch(() => undefined);
    await this.commit(f);
    await f.positions?.close().catch(() => undefined);
    for (const resolve of f.onCaughtUp.splice(0)) resolve();
  }

  private follow(ws: WorkspaceHandle, mode: FollowMode): void {
    if (this.stopped) return;
    if (this.follows.get(ws.id)?.ws === ws) return;
    this.followedOnce.add(ws.id);
    const f: Follow = { ws, sub: null, seen: 0, polledAt: 0, caughtUp: false, resubscribe: false, reading: Promise.resolve(), positions: null, committed: new Map(), resumedFrom: new Map(), onCaughtUp: [] };
    this.follows.set(ws.id, f);
    const forget = () => {
      if (this.follows.get(ws.id) === f) this.follows.delete(ws.id);
      for (const resolve of f.onCaughtUp.splice(0)) resolve();
      if (!this.stopped) this.retry.add(ws.id);
    };
    f.reading = (async () => {
      if (this.consumers.size > 0) {
        f.positions = consumerPositionsFor(ws);
        f.committed = await f.positions.read([...this.consumers.keys()]);
        f.resumedFrom = new Map(f.committed);
        // Resume after the consumer that is furthest behind; the others skip what they had handled.
        f.seen = Math.min(...f.committed.values());
      }
      const head = mode === 'created' ? 0 : await ws.store.headPosition();
      // Only the first follow of a workspace that was there at start replays; what a resumed follow finds
      // past its positions was appended while this feed ran.
      const replayThrough = mode === 'initial' ? head : 0;
      if (mode === 'initial' && f.seen > head) {
        // Positions ahead of the log (a store restored from an older backup): hand everyone the log again.
        console.error(`event feed: workspace ${ws.id}: stored consumer positions are past the head (${head}); replaying the log`);
        f.seen = 0;
        f.resumedFrom = new Map();
        f.committed = new Map();
      }
      if (head <= f.seen) this.caughtUp(f, f.seen);
      while (!this.stopped) {
        f.sub = ws.store.subscribeAll({ after: f.seen });
        try {
          for await (const e of f.sub) {
            f.seen = e.globalPosition;
            this.eventBus.publish(toLedgerEvent(ws.id, e, e.globalPosition <= replayThrough));
            if (!f.caughtUp && e.globalPosition >= head) this.caughtUp(f, e.globalPosition);
          }
        } catch (err) {
          if (this.stopped || this.follows.get(ws.id) !== f) return;
          console.error(`event feed: the subscription of workspace ${ws.id} ended:`, err);
          // Forgotten, so the next rescan follows it again from its committed positions.
          forget();
          return;
        }
        // The subscription ended: stopped, the store closed, or woken by the poll (then resume from `seen`).
        if (!f.resubscribe) return;
        f.resubscribe = false;
      }
    })().catch((err) => {
      // Reading its positions or head failed (the store is away): never an unhandled rejection; the
      // workspace is forgotten, and the next rescan follows it again.
      if (this.stopped || this.follows.get(ws.id) !== f) return;
      console.error(`event feed: workspace ${ws.id} could not be followed (retried on the next rescan):`, (err as Error).message);
      forget();
    });
  }

  private caughtUp(f: Follow, position: number): void {
    f.caughtUp = true;
    this.eventBus.publish(new WorkspaceCaughtUp(f.ws.id, position));
    void this.commit(f);
    for (const resolve of f.onCaughtUp.splice(0)) resolve();
  }

  /** Commits every consumer's position that moved (after handling: `handledThrough` holds back work in flight). */
  private async commit(f: Follow): Promise<void> {
    if (!f.positions) return;
    const moved = new Map<string, number>();
    for (const [name, c] of this.consumers) {
      const through = c.handledThrough(f.ws.id, f.seen);
      if (through > (f.committed.get(name) ?? 0)) moved.set(name, through);
    }
    if (moved.size === 0) return;
    const before = new Map(f.committed);
    for (const [name, p] of moved) f.committed.set(name, p);
    try {
      await f.positions.commit(moved);
      f.commitFailing = false;
    } catch (err) {
      // Retried on the next commit (every checkpointMs); said once per outage, not four times a second.
      if (!this.stopped && !f.commitFailing) console.error(`event feed: positions of workspace ${f.ws.id} not committed (retrying): ${(err as Error).message}`);
      f.commitFailing = true;
      // Not committed: the next commit sends them again.
      for (const name of moved.keys()) {
        const was = before.get(name);
        if (was === undefined) f.committed.delete(name);
        else if ((f.committed.get(name) ?? 0) === moved.get(name)) f.committed.set(name, was);
      }
    }
  }

  private async commitAll(): Promise<void> {
    await Promise.all([...this.follows.values()].map((f) => (f ? this.commit(f) : undefined)));
  }

  /** Re-subscribes the feeds that did not move since the last poll while their store's head did. */
  private async wakeStalled(): Promise<void> {
    for (const f of this.follows.values()) {
      if (!f || !f.sub || this.stopped || f.ws.store.wakesOnEveryWriter) continue;
      const stalled = f.seen === f.polledAt;
      f.polledAt = f.seen;
      if (!stalled) continue;
      let head: number;
      try {
        head = await f.ws.store.headPosition();
      } catch {
        continue; // the store is closing
      }
      if (head > f.seen && f.seen === f.polledAt && f.sub) {
        f.resubscribe = true;
        f.sub.close();
      }
    }
  }
}
