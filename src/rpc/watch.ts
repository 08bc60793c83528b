import { canonicalJson } from '../events/canonical-json';
import { canonicalJsonWithin, LIMITS } from './limits';
import type { RecordedEvent } from '../events/envelope';
import type { Subscription } from '../events/store/port';
import type { StreamFold } from '../events/kernel-types';
import { DomainError } from '../domain-error';
import type { QueryDefinition } from '../readmodels/queries/query';
import { readModelAdvance, readModelAnswer } from '../readmodels/queries/run-query';
import { retainWorkspace, type WorkspaceHandle } from '../workspaces/registry';
import { EventLoopTurns } from '../events/event-loop-turns';

/** Where a watcher's frames go (a WebSocket, an SSE response). */
export interface WatchSink {
  send(update: WatchUpdate): void;
  /** True while the transport's own buffer is above its high-water mark. */
  congested(): boolean;
  /** Calls `cb` once the transport can take more (or at once if it already can). */
  onDrain(cb: () => void): void;
  /** The watch ended for a reason other than unsubscribe (store closed, fold failed). */
  fail(err: DomainError): void;
}

export interface WatchUpdate {
  /** The watcher's id (the subscription id clients see). */
  subscription: string;
  position: number;
  /** The view as JSON (computed once per change, shared by every watcher of the same query+input). */
  valueJson: string;
  /** Intermediate states were skipped because the consumer was slow: this is the latest state. */
  coalesced: boolean;
}

/**
 * Updates a started watcher may hold while its transport is congested. Past it, a subscriber that asked
 * for `coalesce: true` gets the latest state marked coalesced; any other one is ended with
 * `watch_lagging` and resumes with `since` — it never silently misses a step (issue 34).
 */
const MAX_QUEUED_UPDATES = 64;
/**
 * Before `start` (a resume's catch-up, written before the subscribe response) every missed update is
 * kept, so a resume gives each one (issue 34); past this many bytes the resume is refused instead of
 * coalesced: the client subscribes again without `since` for a snapshot.
 */
const MAX_RESUME_BYTES = 64 * 1024 * 1024;

/**
 * One subscriber. Updates go straight to the sink while it keeps up; while it is congested (or before
 * `start`, when the subscribe response is not yet written) they queue, and past MAX_QUEUED_UPDATES the
 * queue collapses to the latest state. So memory per watcher is bounded whatever the consumer does.
 */
export class Watcher {
  private queue: Array<Omit<WatchUpdate, 'subscription'>> = [];
  private queuedBytes = 0;
  private started = false;
  /** Updates that may queue while the transport is congested (MAX_QUEUED_UPDATES plus a resume's backlog). */
  private allowance = MAX_QUEUED_UPDATES;
  private waitingForDrain = false;
  closed = false;
  group: WatchGroup | null = null;
  /** Position of the last update handed to this watcher (snapshot or update). */
  position = 0;
  /** Position of the last update the transport took (where a lagging subscriber resumes). */
  private delivered = 0;

  /** `coalesce`: the subscriber accepts the latest state in place of the steps it was too slow for. */
  constructor(readonly id: string, private readonly sink: WatchSink, private readonly onClose: (w: Watcher) => void, readonly coalesce = false) {}

  /** Where the subscription starts (the snapshot's position, or `since`). */
  startAt(position: number): void {
    this.position = this.delivered = position;
  }

  private send(update: Omit<WatchUpdate, 'subscription'>): void {
    this.delivered = update.position;
    this.sink.send({ subscription: this.id, ...update });
  }

  private lagging(): void {
    this.fail(new DomainError('watch_lagging', `the subscriber fell ${this.queue.length} updates behind; resume with since: ${this.delivered} (or subscribe with coalesce: true to get the latest state instead)`, { since: this.delivered }));
  }

  /** `coalesced`: this state already stands for several changes (a group answered from a read model). */
  enqueue(position: number, valueJson: string, coalesced = false): void {
    if (this.closed) return;
    this.position = position;
    if (this.started && this.queue.length === 0 && !this.sink.congested()) {
      this.send({ position, valueJson, coalesced });
      return;
    }
    if (!this.started) {
      this.queuedBytes += valueJson.length;
      if (this.queuedBytes > MAX_RESUME_BYTES) {
        throw new DomainError('invalid_since', `since: the updates missed since then exceed ${MAX_RESUME_BYTES} bytes; subscribe again without since for a snapshot`);
      }
      this.queue.push({ position, valueJson, coalesced });
      return;
    }
    if (this.queue.length >= (this.coalesce ? MAX_QUEUED_UPDATES : this.allowance)) {
      if (!this.coalesce) return this.lagging();
      this.queue = [{ position, valueJson, coalesced: true }];
    } else this.queue.push({ position, valueJson, coalesced });
    this.scheduleFlush();
  }

  /** The subscribe response has been written: updates may follow. */
  start(): void {
    this.started = true;
    // A resume's backlog (bounded by MAX_RESUME_BYTES) drains at the transport's pace on top of the usual allowance.
    this.allowance = this.queue.length + MAX_QUEUED_UPDATES;
    this.flush();
  }

  private scheduleFlush(): void {
    if (!this.started || this.waitingForDrain) return;
    this.waitingForDrain = true;
    this.sink.onDrain(() => {
      this.waitingForDrain = false;
      this.flush();
    });
  }

  private flush(): void {
    this.queuedBytes = 0;
    while (!this.closed && this.queue.length && !this.sink.congested()) this.send(this.queue.shift()!);
    if (this.closed) return;
    if (this.queue.length) {
      // Still congested. Asked for coalescing: keep only the latest state, marked so the client knows
      // steps were skipped. Otherwise the queue waits (bounded by enqueue) for the transport to drain.
      if (this.coalesce) {
        const last = this.queue[this.queue.length - 1];
        this.queue = [{ ...last, coalesced: last.coalesced || this.queue.length > 1 }];
      }
      this.scheduleFlush();
    }
  }

  fail(err: DomainError): void {
    if (this.closed) return;
    this.sink.fail(err);
    this.close();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.queue = [];
    this.onClose(this);
  }
}

type Fold = StreamFold<unknown>;

/**
 * Every watcher of one (query, input) in one workspace shares one fold, advanced once per event by the
 * workspace feed: 1,000 subscribers on one verdict cost one evolve, one view and one serialization.
 */
export class WatchGroup {
  readonly members = new Set<Watcher>();
  /** Watchers still catching up privately (`since`): they keep the group alive without being members. */
  holds = 0;
  state: unknown;
  /** The global position the state reflects (every event up to here has been offered to the fold). */
  position = 0;
  viewJson = '';
  live = false;
  /**
   * Answered from the query's read model (a workspace-wide query with one, built): the first answer and
   * every update are position-bounded reads of its rows, so no fold of the whole log is ever held.
   */
  fromModel = false;
  private fold!: Fold;
  private readonly streams: Set<string> | null;
  /**
   * fromModel: the last event the feed offered; the positions of relevant events not answered yet, in
   * order (each gets its own answer, so every change is one update); a range the feed passed before the
   * group joined it, whose relevant events are answered first; and the answering loop.
   */
  private seen = 0;
  private unanswered: number[] = [];
  private backfill: { after: number; until: number } | null = null;
  private answering = false;
  /** fromModel: the last answer read and the position it is exact at (the next update starts from it). */
  private value: unknown;
  private valuePosition = 0;

  constructor(readonly key: string, readonly query: QueryDefinition, readonly input: unknown, readonly feed: WorkspaceFeed) {
    const sources = query.sources(input);
    this.streams = sources === 'all' ? null : new Set(sources);
  }

  relevant(e: RecordedEvent): boolean {
    return (this.streams === null || this.streams.has(e.streamId)) && this.query.affects(this.input, e);
  }

  /**
   * Folds from the store up to the feed's position — or, for a workspace-wide query with a read model,
   * reads its answer there — then goes live in the same turn (no gap).
   */
  async build(): Promise<void> {
    if (this.streams === null && (await this.buildFromModel())) return;
    this.position = 0;
    this.fold = (await this.query.fold(this.input, this.feed.workspace)) as Fold;
    this.state = this.fold.initialState();
    for (;;) {
      const target = this.feed.position;
      for await (const e of readRange(this.feed.workspace, this.query, this.input, this.position, target)) this.state = this.fold.evolve(this.state, e);
      this.position = target;
      if (this.feed.position === target) break;
    }
    this.viewJson = this.json(this.query.view(this.state, this.input));
    this.live = true;
    this.feed.groups.set(this.key, this);
  }

  /** The view as JSON, refused past the response cap (a snapshot or update is a response too). */
  private json(value: unknown): string {
    return canonicalJsonWithin(value, this.feed.maxResponseBytes, `watch ${this.query.name}`);
  }

  /** The answer at the feed's position from the read model; false when it has none built (then fold). */
  private async buildFromModel(): Promise<boolean> {
    const target = this.feed.position;
    const answer = await readModelAnswer(this.query, this.feed.workspace, this.input, target);
    if (!answer) return false;
    this.fromModel = true;
    this.position = this.seen = target;
    this.value = answer.value;
    this.valuePosition = target;
    this.viewJson = this.json(answer.value);
    this.live = true;
    // Joined in the same turn as the check below: events the feed passed while the rows were read were
    // offered to other groups, not this one: their relevant ones are read back and answered first.
    this.feed.groups.set(this.key, this);
    if (this.feed.position > target) {
      this.seen = this.feed.position;
      this.backfill = { after: target, until: this.feed.position };
      this.answer();
    }
    return true;
  }

  onEvent(e: RecordedEvent): void {
    if (this.fromModel) {
      this.seen = e.globalPosition;
      if (!this.relevant(e)) {
        // The answer cannot have changed: it holds at this position too (unless one is on its way).
        if (!this.answering) this.position = e.globalPosition;
        return;
      }
      this.unanswered.push(e.globalPosition);
      this.answer();
      return;
    }
    this.position = e.globalPosition;
    if (!this.relevant(e)) return;
    this.state = this.fold.evolve(this.state, e);
    const json = this.json(this.query.view(this.state, this.input));
    if (json === this.viewJson) return;
    this.viewJson = json;
    for (const m of this.members) m.enqueue(e.globalPosition, json);
  }

  /**
   * fromModel: answers each relevant event's position in order, one read at a time, so every change is
   * its own update at its exact position — as a fold would give (issue 34: changes that landed during a
   * read used to come as one coalesced update). A query whose model answers incrementally (audit)
   * advances the previous answer by the rows the new events added instead of reading it whole.
   */
  private answer(): void {
    if (this.answering) return;
    this.answering = true;
    void (async () => {
      try {
        if (this.backfill) {
          const { after, until } = this.backfill;
          this.backfill = null;
          const missed: number[] = [];
          for await (const e of readRange(this.feed.workspace, this.query, this.input, after, until)) missed.push(e.globalPosition);
          this.unanswered.unshift(...missed);
        }
        while (this.unanswered.length > 0 && !this.feed.closed) {
          const target = this.unanswered.shift()!;
          const answer = await answerAt(this.query, this.feed.workspace, this.input, this.value, this.valuePosition, target);
          this.position = target;
          this.value = answer.value;
          this.valuePosition = target;
          const json = this.json(answer.value);
          if (json === this.viewJson) continue;
          this.viewJson = json;
          for (const m of this.members) m.enqueue(target, json);
        }
        // Only irrelevant events landed during the last read: its answer holds up to the last one.
        if (this.unanswered.length === 0) this.position = this.seen;
      } catch (err) {
        if (this.feed.groups.get(this.key) === this) this.feed.groups.delete(this.key);
        this.fail(err instanceof DomainError ? err : new DomainError('watch_failed', `watch ${this.query.name}: ${(err as Error).message}`));
      } finally {
        this.answering = false;
      }
    })();
  }

  fail(err: DomainError): void {
    for (const m of [...this.members]) m.fail(err);
  }
}

/** One shared store subscription per workspace, fanned out to the watch groups. */
export class WorkspaceFeed {
  readonly groups = new Map<string, WatchGroup>();
  private readonly building = new Map<string, Promise<WatchGroup>>();
  position = 0;
  private sub: Subscription | null = null;
  private ready: Promise<void> | null = null;
  closed = false;

  /** The feed keeps its workspace open while it has watchers (the registry closes idle ones). */
  private readonly releaseWorkspace: () => void;

  constructor(readonly workspace: WorkspaceHandle, private readonly onIdle: (f: WorkspaceFeed) => void, readonly maxResponseBytes: number) {
    this.releaseWorkspace = retainWorkspace(workspace);
  }

  start(): Promise<void> {
    if (this.ready) return this.ready;
    const starting = (async () => {
      this.position = await this.workspace.store.headPosition();
      this.sub = this.workspace.store.subscribeAll({ after: this.position });
      void this.pump(this.sub);
    })();
    this.ready = starting;
    // The store was away (store_unavailable): the next watch starts the feed again, not this failure.
    starting.catch(() => {
      if (this.ready === starting) this.ready = null;
    });
    return starting;
  }

  private async pump(sub: Subscription): Promise<void> {
    try {
      for await (const e of sub) {
        this.position = e.globalPosition;
        for (const g of this.groups.values()) {
          try {
            g.onEvent(e);
          } catch (err) {
            g.fail(err instanceof DomainError ? err : new DomainError('watch_failed', `watch ${g.query.name}: ${(err as Error).message}`));
            this.groups.delete(g.key);
          }
        }
      }
    } catch (err) {
      if (!this.closed) for (const g of this.groups.values()) g.fail(new DomainError('watch_failed', `subscription ended: ${(err as Error).message}`));
    }
    if (!this.closed) this.close();
  }

  async group(query: QueryDefinition, input: unknown): Promise<WatchGroup> {
    await this.start();
    const key = `${query.name}\u0000${canonicalJson(input)}`;
    const existing = this.groups.get(key);
    if (existing) return existing;
    let pending = this.building.get(key);
    if (!pending) {
      const g = new WatchGroup(key, query, input, this);
      pending = g.build().then(
        () => {
          this.building.delete(key);
          this.groups.set(key, g);
          return g;
        },
        (err) => {
          this.building.delete(key);
          throw err;
        },
      );
      this.building.set(key, pending);
    }
    return pending;
  }

  release(g: WatchGroup): void {
    if (g.members.size > 0 || g.holds > 0) return;
    if (this.groups.get(g.key) === g) this.groups.delete(g.key);
    this.closeIfIdle();
  }

  closeIfIdle(): void {
    if (this.groups.size === 0 && this.building.size === 0) this.close();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.sub?.close();
    // Members still here mean the server is shutting down: tell them, so streaming responses end.
    for (const g of this.groups.values()) for (const m of [...g.members]) m.fail(new DomainError('watch_closed', 'the server is shutting down; resume with since'));
    this.groups.clear();
    this.onIdle(this);
    this.releaseWorkspace();
  }
}

export interface WatchStart {
  watcher: Watcher;
  /** The snapshot (absent when resuming with `since`: the missed updates follow instead). */
  snapshot?: { position: number; valueJson: string };
  position: number;
}

/**
 * The watch machinery shared by every transport. A watch is a snapshot (the view and the position it
 * reflects) then ordered updates; `since` replays exactly the changes after that position, folded
 * from the store, before joining the live group — nothing lost, nothing repeated.
 */
export class WatchHub {
  private readonly feeds = new Map<string, WorkspaceFeed>();
  private nextId = 1;
  /** Bytes of one snapshot or update (see LIMITS.maxResponseBytes). */
  readonly maxResponseBytes: number;

  constructor(options: { maxResponseBytes?: number } = {}) {
    this.maxResponseBytes = options.maxResponseBytes ?? LIMITS.maxResponseBytes;
  }

  feedCount(): number {
    return this.feeds.size;
  }

  private feedFor(ws: WorkspaceHandle): WorkspaceFeed {
    let feed = this.feeds.get(ws.id);
    if (!feed || feed.closed) {
      feed = new WorkspaceFeed(ws, (f) => {
        if (this.feeds.get(f.workspace.id) === f) this.feeds.delete(f.workspace.id);
      }, this.maxResponseBytes);
      this.feeds.set(ws.id, feed);
    }
    return feed;
  }

  async watch(ws: WorkspaceHandle, query: QueryDefinition, input: unknown, since: number | undefined, sink: WatchSink, options: { coalesce?: boolean } = {}): Promise<WatchStart> {
    const watcher = new Watcher(
      `w${this.nextId++}`,
      sink,
      (w) => {
        const g = w.group;
        if (g) {
          g.members.delete(w);
          g.feed.release(g);
        }
      },
      options.coalesce ?? false,
    );
    let feed: WorkspaceFeed;
    let group: WatchGroup;
    for (;;) {
      feed = this.feedFor(ws);
      try {
        group = await feed.group(query, input);
      } catch (err) {
        feed.closeIfIdle();
        throw err;
      }
      // The last watcher of this group may have left while we awaited, releasing it: take a live one.
      if (!feed.closed && feed.groups.get(group.key) === group) break;
    }
    if (since === undefined) {
      watcher.group = group;
      group.members.add(watcher);
      watcher.startAt(group.position);
      return { watcher, snapshot: { position: group.position, valueJson: group.viewJson }, position: group.position };
    }
    if (!Number.isSafeInteger(since) || since < 0 || since > group.position) {
      feed.release(group);
      throw new DomainError('invalid_since', `since: must be a position returned by this server (0…${group.position}), got ${String(since)}`);
    }
    await this.catchUp(feed, group, watcher, since);
    return { watcher, position: since };
  }

  /** Replays the changes after `since` to this watcher, then attaches it to the live group. */
  private async catchUp(feed: WorkspaceFeed, first: WatchGroup, watcher: Watcher, since: number): Promise<void> {
    let group = first;
    // Hold the group open while catching up, so the feed is not released under us.
    group.holds++;
    try {
      await this.replayInto(feed, group, watcher, since, (g) => {
        group.holds--;
        feed.release(group);
        group = g;
        group.holds++;
      });
      watcher.group = group;
      group.members.add(watcher);
    } finally {
      group.holds--;
      feed.release(group);
    }
  }

  private async replayInto(feed: WorkspaceFeed, start: WatchGroup, watcher: Watcher, since: number, switchGroup: (g: WatchGroup) => void): Promise<void> {
    let group = start;
    if (group.fromModel) {
      // The answer at `since` from the rows, then the answer at each relevant event after it up to the
      // group's position: exactly the updates a fold would give, never a fold of the log from 0.
      const base = await readModelAnswer(group.query, feed.workspace, group.input, since);
      if (base) {
        let value = base.value;
        let json = canonicalJsonWithin(value, feed.maxResponseBytes, `watch ${group.query.name}`);
        let pos = since;
        watcher.startAt(since);
        for (;;) {
          if (feed.closed) throw new DomainError('watch_failed', 'the workspace feed closed during catch-up');
          if (feed.groups.get(group.key) !== group) {
            group = await feed.group(group.query, group.input);
            switchGroup(group);
            continue;
          }
          const target = group.position;
          if (target <= pos) break; // joined in the same turn as this check (no await between): nothing slips by
          for await (const e of readRange(feed.workspace, group.query, group.input, pos, target)) {
            const answer = await answerAt(group.query, feed.workspace, group.input, value, pos, e.globalPosition);
            value = answer.value;
            pos = e.globalPosition;
            const next = canonicalJsonWithin(value, feed.maxResponseBytes, `watch ${group.query.name}`);
            if (next !== json) {
              json = next;
              watcher.enqueue(e.globalPosition, json);
            }
          }
          pos = target;
        }
        watcher.group = group;
        group.members.add(watcher);
        return;
      }
    }
    const fold = (await group.query.fold(group.input, feed.workspace)) as Fold;
    let state = fold.initialState();
    for await (const e of readRange(feed.workspace, group.query, group.input, 0, since)) state = fold.evolve(state, e);
    let json = canonicalJsonWithin(group.query.view(state, group.input), feed.maxResponseBytes, `watch ${group.query.name}`);
    let pos = since;
    watcher.startAt(since);
    // Each step serializes the whole view: a resume of a 750-node review held the event loop 1 s in one piece.
    const turns = new EventLoopTurns();
    for (;;) {
      const target = group.position;
      for await (const e of readRange(feed.workspace, group.query, group.input, pos, target)) {
        await turns.between();
        state = fold.evolve(state, e);
        const next = canonicalJsonWithin(group.query.view(state, group.input), feed.maxResponseBytes, `watch ${group.query.name}`);
        if (next !== json) {
          json = next;
          watcher.enqueue(e.globalPosition, json);
        }
      }
      pos = target;
      if (group.position === target && feed.groups.get(group.key) === group) break;
      if (feed.closed) throw new DomainError('watch_failed', 'the workspace feed closed during catch-up');
      if (feed.groups.get(group.key) !== group) {
        group = await feed.group(group.query, group.input);
        switchGroup(group);
      }
    }
  }

  close(): void {
    for (const f of [...this.feeds.values()]) f.close();
    this.feeds.clear();
  }
}

/** The read model's exact answer at `target`, advanced from the answer at `from` where the model can. */
async function answerAt(q: QueryDefinition, ws: WorkspaceHandle, input: unknown, previous: unknown, from: number, target: number): Promise<{ value: unknown }> {
  const answer = (await readModelAdvance(q, ws, input, previous, from, target)) ?? (await readModelAnswer(q, ws, input, target));
  if (!answer) throw new Error('its read model stopped answering (a newer version took over); subscribe again');
  return answer;
}

/** Events in (after, until] that can change the query's answer, in global order. */
export async function* readRange(ws: WorkspaceHandle, q: QueryDefinition, input: unknown, after: number, until: number): AsyncIterable<RecordedEvent> {
  if (until <= after) return;
  const sources = q.sources(input);
  if (sources === 'all') {
    for await (const e of ws.store.readAll({ after, until })) if (q.affects(input, e)) yield e;
    return;
  }
  const events: RecordedEvent[] = [];
  for (const s of sources) for await (const e of ws.store.readStream(s)) if (e.globalPosition > after && e.globalPosition <= until && q.affects(input, e)) events.push(e);
  if (sources.length > 1) events.sort((a, b) => a.globalPosition - b.globalPosition);
  yield* events;
}
