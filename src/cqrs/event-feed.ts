import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { EventBus } from '@nestjs/cqrs';
import type { Subscription } from '../events/store/port';
import { Ledger } from '../ledger';
import type { WorkspaceHandle } from '../workspaces/registry';
import { consumerPositionsFor, type ConsumerPositions } from './consumer-positions';
import { toLedgerEvent, WorkspaceCaughtUp } from './events';

/** Optional ledger service: how often the feed looks for new workspaces and for appends by other processes. */
export const EVENT_FEED_OPTIONS_SERVICE = 'cqrs.feed.options';
/** Ledger service under which the running feed is registered (tests wait on `settled()`). */
export const EVENT_FEED_SERVICE = 'cqrs.feed';

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
}

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
  private poll: NodeJS.Timeout | null = null;
  private stopped = false;
  private readonly options: Required<EventFeedOptions>;
  private readonly consumers = new Map<string, CheckpointedConsumer>();
  private checkpointTimer: NodeJS.Timeout | null = null;

  constructor(
    @Inject(Ledger) private readonly ledger: Ledger,
    private readonly eventBus: EventBus,
  ) {
    const o = (ledger.services.get(EVENT_FEED_OPTIONS_SERVICE) as EventFeedOptions | undefined) ?? {};
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
    this.scan(true);
    this.rescan = setInterval(() => this.scan(), this.options.rescanMs).unref();
    this.poll = setInterval(() => void this.wakeStalled(), this.options.pollMs).unref();
    this.checkpointTimer = setInterval(() => void this.commitAll(), this.options.checkpointMs).unref();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
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
    for (const w of this.ledger.workspaces.list()) heads.set(w.workspaceId, await (await this.ledger.workspace(w.workspaceId)).store.headPosition());
    for (;;) {
      if (this.stopped) return;
      const pending = [...heads].filter(([id, head]) => {
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
   * Follows every workspace not yet followed. The first scan's logs are a replay; a workspace found
   * by a later scan was created while the feed ran, so its events (even those appended before the
   * scan saw it) are live.
   */
  private scan(initial = false): void {
    if (this.stopped) return;
    let list: Array<{ workspaceId: string }>;
    try {
      list = this.ledger.workspaces.list();
    } catch (err) {
      // The catalogue is away (a PostgreSQL outage): this runs on a timer, so a throw would end the
      // process. The next rescan tries again.
      if (!initial) return;
      throw err;
    }
    for (const w of list) {
      if (this.follows.has(w.workspaceId)) continue;
      this.follows.set(w.workspaceId, null);
      void this.ledger.workspace(w.workspaceId).then(
        (ws) => this.follow(ws, !initial),
        (err) => {
          this.follows.delete(w.workspaceId);
          if (!this.stopped) console.error(`event feed: workspace ${w.workspaceId} could not be opened:`, err);
        },
      );
    }
  }

  private follow(ws: WorkspaceHandle, createdWhileRunning: boolean): void {
    if (this.stopped) return;
    const f: Follow = { ws, sub: null, seen: 0, polledAt: 0, caughtUp: false, resubscribe: false, reading: Promise.resolve(), positions: null, committed: new Map(), resumedFrom: new Map() };
    this.follows.set(ws.id, f);
    f.reading = (async () => {
      if (this.consumers.size > 0) {
        f.positions = consumerPositionsFor(ws);
        f.committed = await f.positions.read([...this.consumers.keys()]);
        f.resumedFrom = new Map(f.committed);
        // Resume after the consumer that is furthest behind; the others skip what they had handled.
        f.seen = Math.min(...f.committed.values());
      }
      const head = createdWhileRunning ? 0 : await ws.store.headPosition();
      if (!createdWhileRunning && f.seen > head) {
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
            this.eventBus.publish(toLedgerEvent(ws.id, e, e.globalPosition <= head));
            if (!f.caughtUp && e.globalPosition >= head) this.caughtUp(f, e.globalPosition);
          }
        } catch (err) {
          if (this.stopped) return;
          console.error(`event feed: the subscription of workspace ${ws.id} ended:`, err);
          // Forgotten, so the next rescan follows it again from its committed positions.
          if (this.follows.get(ws.id) === f) this.follows.delete(ws.id);
          return;
        }
        // The subscription ended: stopped, the store closed, or woken by the poll (then resume from `seen`).
        if (!f.resubscribe) return;
        f.resubscribe = false;
      }
    })().catch((err) => {
      // Reading its positions or head failed (the store is away): never an unhandled rejection; the
      // workspace is forgotten, and the next rescan follows it again.
      if (this.stopped) return;
      console.error(`event feed: workspace ${ws.id} could not be followed (retried on the next rescan):`, (err as Error).message);
      if (this.follows.get(ws.id) === f) this.follows.delete(ws.id);
    });
  }

  private caughtUp(f: Follow, position: number): void {
    f.caughtUp = true;
    this.eventBus.publish(new WorkspaceCaughtUp(f.ws.id, position));
    void this.commit(f);
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
