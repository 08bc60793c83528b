import {
  ANY,
  BACKWARDS,
  END,
  EventStoreDBClient,
  FORWARDS,
  NO_STREAM,
  START,
  STREAM_EXISTS,
  StreamNotFoundError,
  WrongExpectedVersionError,
  jsonEvent,
  streamNameFilter,
  type AllStreamResolvedEvent,
  type AppendExpectedRevision,
  type Position,
  type ResolvedEvent,
} from '@eventstore/db-client';
import { DomainError } from '../../domain-error';
import type { EventMetadata, NewEvent, RecordedEvent } from '../../events/envelope';
import {
  AppendResult,
  DuplicateEventId,
  EventStore,
  ExpectedRevision,
  ReadAllOptions,
  ReadStreamOptions,
  SubscribeOptions,
  Subscription,
  WrongExpectedRevision,
  sameCommand,
  StoreClosed,
} from '../../events/store/port';
import { DecodedEvent } from '../postgres/postgres-event-store';

/**
 * KurrentDB (EventStoreDB) adapter over @eventstore/db-client (gRPC).
 *
 * Streams: `<workspaceId>/<streamId>` — workspace ids are [a-z0-9-], so the prefix `<id>/` of one
 * workspace is never a prefix of another's; `$all` subscriptions use a server-side prefix filter.
 *
 * Positions: the port's `globalPosition` is the event's COMMIT position in the transaction log (a
 * byte offset, bigint on the wire) converted to a number. Numbers are exact up to 2^53 bytes of log
 * (9 PB); beyond that the adapter refuses with `position_overflow` instead of rounding. Positions are
 * increasing but not consecutive (the conformance suite allows that for this adapter). Resuming
 * `after: p` reads `$all` from {commit: p, prepare: p} and drops events at or before p.
 *
 * Idempotency: event ids are the client's ids (`jsonEvent({ id })`), and commands append with an exact
 * expected revision, which makes a retry of the same ids durably idempotent on the server (with ANY it
 * would depend on the server's in-memory cache). The port additionally wants the ORIGINAL positions
 * and a `duplicate` flag, so the adapter looks the first id up in the target stream before appending.
 * Refusing an id already stored in ANOTHER stream needs a workspace-wide id index that KurrentDB does
 * not have: this adapter refuses it when the id was seen by this process (appended or read), not when
 * only another process saw it. UUIDv7 ids derived from idempotency keys make that case a client bug.
 */

const SAFE = BigInt(Number.MAX_SAFE_INTEGER);
/** Stream reads on some server versions carry no log position: it comes back as 2^64-1. */
const NO_POSITION = 2n ** 63n - 1n;

export function positionToNumber(commit: bigint): number {
  if (commit < 0n || commit > SAFE) throw new DomainError('position_overflow', `globalPosition: commit position ${commit} exceeds 2^53`);
  return Number(commit);
}

const encodeExpected = (e: ExpectedRevision): AppendExpectedRevision =>
  typeof e === 'number' ? BigInt(e) : e === 'no_stream' ? NO_STREAM : e === 'stream_exists' ? STREAM_EXISTS : ANY;

interface StoredMetadata {
  schemaVersion: number;
  meta: EventMetadata;
  $correlationId?: string;
  $causationId?: string;
}

/** One client per process, shared by every workspace. */
export class KurrentDbConnection {
  readonly client: EventStoreDBClient;

  constructor(connectionString: string) {
    this.client = EventStoreDBClient.connectionString(connectionString);
  }

  async close(): Promise<void> {
    await this.client.dispose();
  }
}

export interface KurrentDbStoreOptions {
  connection: KurrentDbConnection;
  workspaceId: string;
  /** Close the connection with the store. */
  ownsConnection?: boolean;
  /**
   * The catalogue's PostgreSQL database, where this workspace's read models live (src/readmodels):
   * KurrentDB itself has no tables. Absent: a SQLite file beside the workspace (one process only).
   */
  readModels?: { pool: import('pg').Pool; schema: string };
}

interface KnownId {
  streamId: string;
  revision: number;
}

/** Ids remembered per store (for cross-stream duplicate refusal and findEvent without a scan). */
const MAX_KNOWN_IDS = 200_000;
const PAGE = 500;

export class KurrentDbEventStore implements EventStore {
  readonly adapter = 'kurrentdb';
  // LISTEN/NOTIFY (PostgreSQL) or a server-side subscription (KurrentDB) wakes subscribers on every process's appends.
  readonly wakesOnEveryWriter = true;
  readonly workspaceId: string;
  private readonly client: EventStoreDBClient;
  private readonly prefix: string;
  private readonly knownIds = new Map<string, KnownId>();
  /** Per stream, the revision up to which its ids are in `knownIds`. */
  private readonly indexedUpTo = new Map<string, number>();
  private readonly subscriptions = new Set<Subscription>();
  private closed = false;

  readonly readModels?: { pool: import('pg').Pool; schema: string };

  constructor(private readonly options: KurrentDbStoreOptions) {
    this.workspaceId = options.workspaceId;
    this.readModels = options.readModels;
    this.client = options.connection.client;
    this.prefix = `${options.workspaceId}/`;
  }

  static open(connectionString: string, workspaceId: string): KurrentDbEventStore {
    return new KurrentDbEventStore({ connection: new KurrentDbConnection(connectionString), workspaceId, ownsConnection: true });
  }

  private streamName(streamId: string): string {
    return this.prefix + streamId;
  }

  private remember(eventId: string, streamId: string, revision: number): void {
    if (this.knownIds.size >= MAX_KNOWN_IDS) this.knownIds.delete(this.knownIds.keys().next().value as string);
    this.knownIds.set(eventId, { streamId, revision });
  }

  private decode(resolved: ResolvedEvent | AllStreamResolvedEvent): RecordedEvent | null {
    const e = resolved.event;
    if (!e || !e.streamId.startsWith(this.prefix) || !e.isJson) return null;
    const stored = e.metadata as unknown as StoredMetadata;
    const commit = resolved.commitPosition ?? e.position?.commit;
    const globalPosition = commit !== undefined && commit < NO_POSITION ? positionToNumber(commit) : -1;
    const streamId = e.streamId.slice(this.prefix.length);
    this.remember(e.id, streamId, Number(e.revision));
    return new DecodedEvent(e.id, streamId, Number(e.revision), globalPosition, e.type, stored.schemaVersion, e.data, stored.meta);
  }

  async append(streamId: string, expected: ExpectedRevision, events: NewEvent[]): Promise<AppendResult> {
    if (this.closed) throw new StoreClosed();
    if (events.length === 0) throw new Error('append needs at least one event');
    const original = await this.findOriginal(streamId, events);
    if (original) return original;
    for (const e of events) {
      const known = this.knownIds.get(e.eventId);
      if (known) throw new DuplicateEventId(e.eventId);
    }
    if (new Set(events.map((e) => e.eventId)).size !== events.length) throw new DuplicateEventId(events[0].eventId);
    const data = events.map((e) =>
      jsonEvent({
        id: e.eventId,
        type: e.type,
        data: e.data as never,
        metadata: { schemaVersion: e.schemaVersion, meta: e.metadata, $correlationId: e.metadata.correlationId, $causationId: e.metadata.causationId ?? undefined } satisfies StoredMetadata,
      }),
    );
    let next: number;
    try {
      const result = await this.client.appendToStream(this.streamName(streamId), data, { expectedRevision: encodeExpected(expected) });
      next = Number(result.nextExpectedRevision);
    } catch (err) {
      if (err instanceof WrongExpectedVersionError) {
        const actual = typeof err.actualVersion === 'bigint' ? Number(err.actualVersion) : -1;
        throw new WrongExpectedRevision(streamId, expected, actual);
      }
      throw unavailable(err);
    }
    const first = next - events.length + 1;
    events.forEach((e, i) => this.remember(e.eventId, streamId, first + i));
    // Read the events back for their log positions (the append result carries only the last one).
    const stored = await this.readRange(streamId, first, events.length);
    return {
      streamId,
      nextExpectedRevision: next,
      firstPosition: stored[0]?.globalPosition ?? -1,
      lastPosition: stored[stored.length - 1]?.globalPosition ?? -1,
      duplicate: false,
    };
  }

  /** The earlier identical append of these ids to this stream, answered as the original was. */
  private async findOriginal(streamId: string, events: NewEvent[]): Promise<AppendResult | null> {
    const first = await this.locate(events[0].eventId, streamId);
    if (!first) return null;
    if (first.streamId !== streamId) throw new DuplicateEventId(events[0].eventId);
    const stored = await this.readRange(streamId, first.revision, events.length);
    // Same ids from another caller or payload (one key sent at once with two payloads): a clash, not a retry.
    if (stored[0] && !sameCommand(stored[0].metadata, events[0].metadata)) throw new DuplicateEventId(events[0].eventId);
    for (let i = 0; i < events.length; i++) {
      if (stored[i]?.eventId !== events[i].eventId) throw new DuplicateEventId(events[i].eventId);
    }
    return {
      streamId,
      nextExpectedRevision: stored[stored.length - 1].streamRevision,
      firstPosition: stored[0].globalPosition,
      lastPosition: stored[stored.length - 1].globalPosition,
      duplicate: true,
    };
  }

  /** Where an id is stored: the in-process index, else the hinted stream's ids past what we indexed. */
  private async locate(eventId: string, streamHint?: string): Promise<KnownId | null> {
    const known = this.knownIds.get(eventId);
    if (known) return known;
    if (streamHint === undefined) return this.scanAllFor(eventId);
    const from = (this.indexedUpTo.get(streamHint) ?? -1) + 1;
    let upTo = from - 1;
    for await (const e of this.readStream(streamHint, { fromRevision: from })) upTo = e.streamRevision;
    this.indexedUpTo.set(streamHint, upTo);
    return this.knownIds.get(eventId) ?? null;
  }

  private async scanAllFor(eventId: string): Promise<KnownId | null> {
    for await (const _ of this.readAll()) if (this.knownIds.has(eventId)) break;
    return this.knownIds.get(eventId) ?? null;
  }

  private async readRange(streamId: string, fromRevision: number, count: number): Promise<RecordedEvent[]> {
    const out: RecordedEvent[] = [];
    for await (const e of this.readStream(streamId, { fromRevision, maxCount: count })) out.push(e);
    return out;
  }

  async *readStream(streamId: string, options: ReadStreamOptions = {}): AsyncIterable<RecordedEvent> {
    const backward = options.direction === 'backward';
    const fromRevision = options.fromRevision === undefined ? (backward ? END : START) : BigInt(options.fromRevision);
    if (options.maxCount === 0) return;
    try {
      const read = this.client.readStream(this.streamName(streamId), { direction: backward ? BACKWARDS : FORWARDS, fromRevision, maxCount: options.maxCount ?? Number.MAX_SAFE_INTEGER });
      for await (const resolved of read) {
        const e = this.decode(resolved);
        if (e) yield e;
      }
    } catch (err) {
      if (err instanceof StreamNotFoundError) return;
      throw unavailable(err);
    }
  }

  /**
   * `$all` in commit order, this workspace only. The client's readAll has no server-side filter, so
   * other workspaces' (and system) events are skipped here; subscriptions filter on the server.
   */
  async *readAll(options: ReadAllOptions = {}): AsyncIterable<RecordedEvent> {
    let after = options.after ?? 0;
    const until = options.until ?? Number.MAX_SAFE_INTEGER;
    let remaining = options.maxCount ?? Number.MAX_SAFE_INTEGER;
    let from: Position | typeof START = after > 0 ? { commit: BigInt(after), prepare: BigInt(after) } : START;
    while (remaining > 0) {
      let seen = 0;
      let last: Position | undefined;
      try {
        for await (const resolved of this.client.readAll({ direction: FORWARDS, fromPosition: from, maxCount: PAGE })) {
          seen++;
          last = resolved.event?.position ?? last;
          const e = this.decode(resolved);
          if (!e || e.globalPosition <= after) continue;
          if (e.globalPosition > until) return;
          after = e.globalPosition;
          yield e;
          if (--remaining === 0) return;
        }
      } catch (err) {
        throw unavailable(err);
      }
      if (seen < PAGE || !last) return;
      // The next page starts at the last event read; it is read again and dropped by `after`.
      from = last;
    }
  }

  subscribeAll(options: SubscribeOptions = {}): Subscription {
    const sub = new KurrentSubscription(this, options.after ?? 0, () => this.subscriptions.delete(sub));
    this.subscriptions.add(sub);
    return sub;
  }

  /** The server-side filtered catch-up subscription a KurrentSubscription consumes. */
  openFilteredSubscription(after: number) {
    return this.client.subscribeToAll({
      fromPosition: after > 0 ? { commit: BigInt(after), prepare: BigInt(after) } : START,
      filter: streamNameFilter({ prefixes: [this.prefix] }),
    });
  }

  decodeForSubscription(resolved: AllStreamResolvedEvent): RecordedEvent | null {
    return this.decode(resolved);
  }

  async findEvent(eventId: string, streamHint?: string): Promise<RecordedEvent | null> {
    const where = await this.locate(eventId, streamHint);
    if (!where) return null;
    const [e] = await this.readRange(where.streamId, where.revision, 1);
    return e && e.eventId === eventId ? e : null;
  }

  async streamRevision(streamId: string): Promise<number> {
    for await (const e of this.readStream(streamId, { direction: 'backward', maxCount: 1 })) return e.streamRevision;
    return -1;
  }

  /** Walks `$all` backwards to this workspace's latest event (cost grows with other tenants' traffic). */
  async headPosition(): Promise<number> {
    let from: Position | typeof END = END;
    for (;;) {
      let seen = 0;
      let last: Position | undefined;
      try {
        for await (const resolved of this.client.readAll({ direction: BACKWARDS, fromPosition: from, maxCount: PAGE })) {
          seen++;
          last = resolved.event?.position ?? last;
          const e = this.decode(resolved);
          if (e) return e.globalPosition;
        }
      } catch (err) {
        throw unavailable(err);
      }
      if (seen < PAGE || !last) return 0;
      from = last;
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const s of [...this.subscriptions]) s.close();
    if (this.options.ownsConnection) await this.options.connection.close();
  }
}

/**
 * `subscribeToAll` with the workspace prefix filter, adapted to the port: a pull-based async iterable
 * (the gRPC stream applies back-pressure, so a slow consumer holds no unbounded buffer here), resuming
 * strictly after `after`.
 */
class KurrentSubscription implements Subscription {
  private pos: number;
  private closed = false;
  private stream: ReturnType<KurrentDbEventStore['openFilteredSubscription']> | null = null;

  constructor(private readonly store: KurrentDbEventStore, after: number, private readonly onClose: () => void) {
    this.pos = after;
  }

  get position(): number {
    return this.pos;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    const s = this.stream;
    this.stream = null;
    s?.unsubscribe().catch(() => undefined);
    s?.destroy();
    this.onClose();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<RecordedEvent> {
    if (this.closed) return;
    this.stream = this.store.openFilteredSubscription(this.pos);
    try {
      for await (const resolved of this.stream) {
        if (this.closed) return;
        const e = this.store.decodeForSubscription(resolved);
        if (!e || e.globalPosition <= this.pos) continue;
        this.pos = e.globalPosition;
        yield e;
      }
    } catch (err) {
      if (!this.closed) throw unavailable(err);
    } finally {
      this.close();
    }
  }
}

function unavailable(err: unknown): unknown {
  if (err instanceof DomainError) return err;
  const type = (err as { type?: string }).type;
  if (type === 'unavailable' || type === 'deadline-exceeded' || type === 'not-leader') {
    return new DomainError('store_unavailable', `kurrentdb: ${(err as Error).message}`);
  }
  return err;
}
