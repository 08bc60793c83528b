import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { EventBus } from '@nestjs/cqrs';
import type { Subscription } from '../events/store/port';
import { Ledger } from '../ledger';
import type { WorkspaceHandle } from '../workspaces/registry';
import { toLedgerEvent, WorkspaceCaughtUp } from './events';

/** Optional ledger service: how often the feed looks for new workspaces and for appends by other processes. */
export const EVENT_FEED_OPTIONS_SERVICE = 'cqrs.feed.options';
/** Ledger service under which the running feed is registered (tests wait on `settled()`). */
export const EVENT_FEED_SERVICE = 'cqrs.feed';

export interface EventFeedOptions {
  /** New workspaces in the catalogue are followed within this many ms (default 1000). */
  rescanMs?: number;
  /**
   * A subscription wakes on this process's own appends; another process appending to the same SQLite
   * file wakes nobody here. Every `pollMs` (default 500) a feed that did not move while the store's
   * head did re-subscribes from where it stopped.
   */
  pollMs?: number;
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
}

/**
 * Feeds the Nest EventBus from each workspace's store subscription: every event of the log — those of
 * this process, of another process on the same store, and on start-up the whole log again
 * (`replayed: true`) — is published once it was read back from the store, so nothing reaches a handler
 * before it is durable. Nothing else publishes ledger events on the bus: the kernel never does.
 */
@Injectable()
export class LedgerEventFeed implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly follows = new Map<string, Follow | null>();
  private rescan: NodeJS.Timeout | null = null;
  private poll: NodeJS.Timeout | null = null;
  private stopped = false;
  private readonly options: Required<EventFeedOptions>;

  constructor(
    @Inject(Ledger) private readonly ledger: Ledger,
    private readonly eventBus: EventBus,
  ) {
    const o = (ledger.services.get(EVENT_FEED_OPTIONS_SERVICE) as EventFeedOptions | undefined) ?? {};
    this.options = { rescanMs: o.rescanMs ?? 1000, pollMs: o.pollMs ?? 500 };
  }

  // Bootstrap, not init: the CqrsModule (global, so its hook runs first) has bound every handler and saga by now.
  onApplicationBootstrap(): void {
    this.ledger.services.set(EVENT_FEED_SERVICE, this);
    this.scan(true);
    this.rescan = setInterval(() => this.scan(), this.options.rescanMs).unref();
    this.poll = setInterval(() => void this.wakeStalled(), this.options.pollMs).unref();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.rescan) clearInterval(this.rescan);
    if (this.poll) clearInterval(this.poll);
    for (const f of this.follows.values()) f?.sub?.close();
    await Promise.all([...this.follows.values()].map((f) => f?.reading.catch(() => undefined)));
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
    for (const w of this.ledger.workspaces.list()) {
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
    const f: Follow = { ws, sub: null, seen: 0, polledAt: 0, caughtUp: false, resubscribe: false, reading: Promise.resolve() };
    this.follows.set(ws.id, f);
    f.reading = (async () => {
      const head = createdWhileRunning ? 0 : await ws.store.headPosition();
      if (head === 0) this.caughtUp(f, 0);
      while (!this.stopped) {
        f.sub = ws.store.subscribeAll({ after: f.seen });
        try {
          for await (const e of f.sub) {
            f.seen = e.globalPosition;
            this.eventBus.publish(toLedgerEvent(ws.id, e, e.globalPosition <= head));
            if (!f.caughtUp && e.globalPosition >= head) this.caughtUp(f, e.globalPosition);
          }
        } catch (err) {
          if (!this.stopped) console.error(`event feed: the subscription of workspace ${ws.id} ended:`, err);
          return;
        }
        // The subscription ended: stopped, the store closed, or woken by the poll (then resume from `seen`).
        if (!f.resubscribe) return;
        f.resubscribe = false;
      }
    })();
  }

  private caughtUp(f: Follow, position: number): void {
    f.caughtUp = true;
    this.eventBus.publish(new WorkspaceCaughtUp(f.ws.id, position));
  }

  /** Re-subscribes the feeds that did not move since the last poll while their store's head did. */
  private async wakeStalled(): Promise<void> {
    for (const f of this.follows.values()) {
      if (!f || !f.sub || this.stopped) continue;
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
