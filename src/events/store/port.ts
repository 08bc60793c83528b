import { DomainError } from '../../domain-error';
import type { NewEvent, RecordedEvent } from '../envelope';

/**
 * Expected revision of the target stream at append time:
 * - a number: the stream's last revision must be exactly this (0-based);
 * - 'no_stream': the stream must not exist yet;
 * - 'stream_exists': the stream must have at least one event;
 * - 'any': no check (commands never use it: only an exact revision makes id-based retries durable
 *   on KurrentDB).
 */
export type ExpectedRevision = number | 'no_stream' | 'stream_exists' | 'any';

export interface AppendResult {
  streamId: string;
  /** Revision of the last event now in the stream (the next append expects this). */
  nextExpectedRevision: number;
  firstPosition: number;
  lastPosition: number;
  /** True when every event id was already stored by an earlier identical append: nothing written. */
  duplicate: boolean;
}

export interface AppendOptions {
  /**
   * Another stream that must still be at exactly this revision when the append is written (-1: the stream
   * does not exist), checked under the write lock like the expected revision: otherwise nothing is written
   * and the append is refused with GuardMoved. The kernel guards a command's append on the workspace stream
   * revision its caller's token was checked against, so a revocation committed on any server before the
   * append is never outrun by a stale check (issue 35: no read per command for the token check).
   * An earlier append of the same group commit to the guarded stream counts as a move.
   */
  guard?: { streamId: string; revision: number };
}

export interface ReadStreamOptions {
  direction?: 'forward' | 'backward';
  /** Inclusive start revision (forward: from here up; backward: from here down). */
  fromRevision?: number;
  maxCount?: number;
  /** See ReadAllOptions.lean. */
  lean?: boolean;
}

export interface ReadAllOptions {
  /** Exclusive: yields events whose global position is strictly greater. 0 (default) = from the start. */
  after?: number;
  maxCount?: number;
  /** Inclusive upper bound on the global position ("as of"). */
  until?: number;
  /**
   * A hint for folds that read neither the events' ids nor their metadata: a store may leave both out of
   * the read and fetch them only if asked (the SQLite store: one query per event then). Same events, same
   * order; ignored where it saves nothing.
   */
  lean?: boolean;
}

export interface Subscription extends AsyncIterable<RecordedEvent> {
  /** Stops delivery and releases everything the subscription holds. */
  close(): void;
  /** Position of the last event delivered (or the starting `after`). */
  readonly position: number;
}

export interface SubscribeOptions {
  /** Exclusive resume point: delivers every event after this position, first catching up, then live. */
  after?: number;
}

/**
 * The event store port. One instance is the log of one workspace; adapters (sqlite, postgres,
 * kurrentdb) all pass test/events/store-conformance.ts.
 */
export interface StoreFreshness {
  stamp: number;
  /**
   * The stamp of one stream: changes whenever events of THIS stream may have been added that this process
   * did not append itself (another server's append to it, announced or seen in an append's answer, or
   * anything `stamp` changes for that this process cannot place). Absent: `stamp` stands for every stream.
   */
  stampOf?(streamId: string): number;
  ownRevision(streamId: string): number;
  /** This process's own appended events of the stream from `fromRevision` up to its own revision, when it still holds them all (else undefined: read). */
  ownTail?(streamId: string, fromRevision: number): RecordedEvent[] | undefined;
}

/** How long `exclusive` waits for another process's section to end before refusing (store_unavailable). */
export const EXCLUSIVE_WAIT_MS = 120_000;
/** Between attempts to take an exclusive section another process holds. */
export const EXCLUSIVE_POLL_MS = 50;

export interface EventStore {
  readonly adapter: 'sqlite' | 'postgres' | 'kurrentdb' | string;
  readonly workspaceId: string;
  /**
   * Bytes the workspace's log takes now, for the operator's `logQuotaBytes` (SQLite: its file and WAL on
   * disk, exact whenever it may be at or past `limit`; PostgreSQL: its events' data and metadata, summed in
   * the background, other servers' appends within a second). Undefined while not known yet; absent where
   * the store cannot say cheaply (KurrentDB: not enforced).
   */
  logBytes?(limit?: number): number | undefined;
  /** Its subscriptions are woken by appends of every process (not only this one's), so nobody needs to poll. */
  readonly wakesOnEveryWriter?: boolean;
  /**
   * An append that returns `duplicate: false` stored exactly the events it was given, at the returned
   * positions (the store decides idempotency itself and reports duplicates): the kernel answers from them
   * without reading them back. Absent (KurrentDB, which may deduplicate ids on its own): read back.
   */
  readonly appendsAreExact?: boolean;
  /**
   * The append itself answers for a used idempotency key, atomically with the write: ids already stored
   * come back as `duplicate` (same caller, command and payload digest — port.ts sameCommand) or
   * duplicate_event_id (anything else), and an id a no-op command spent (claimNoopKey) as
   * duplicate_event_id. The kernel then sends a new key no look-up before deciding (where `prepare` is
   * cheap: see CommandExecutor.execute); the append is the check. Absent: the kernel looks the key up first.
   */
  readonly appendChecksKeys?: boolean;
  /**
   * What this process knows about the log without reading it, for readers that keep folded state (the
   * fold cache): `stamp` changes whenever events may have been added that this process did not append
   * itself (another server's append announced, an append refused for a revision it did not know, the
   * notification channel lost); `ownRevision` is the last revision this process appended to a stream
   * (-1 when none). A state folded up to revision r at stamp s is current while the stamp is still s and
   * the stream's own revision is ≤ r. Undefined when the adapter cannot tell (then every load reads).
   */
  freshness?(): StoreFreshness | undefined;
  /**
   * The append takes a guard (AppendOptions.guard) and checks it under the write lock, atomically with the
   * write. Absent: guards are not supported, and callers must not pass one (the kernel reads instead).
   */
  readonly appendGuards?: boolean;
  append(streamId: string, expected: ExpectedRevision, events: NewEvent[], options?: AppendOptions): Promise<AppendResult>;
  readStream(streamId: string, options?: ReadStreamOptions): AsyncIterable<RecordedEvent>;
  readAll(options?: ReadAllOptions): AsyncIterable<RecordedEvent>;
  subscribeAll(options?: SubscribeOptions): Subscription;
  /**
   * True when no event has this id and no no-op command holds it as its key: a new command's key, which
   * needs no replay. One round trip where the adapter has both in one database (PostgreSQL); absent
   * elsewhere (the kernel then looks both up).
   */
  keyUnused?(key: string): Promise<boolean>;
  /** The stored event with this id, or null. `streamHint` lets adapters without an id index look there. */
  findEvent(eventId: string, streamHint?: string): Promise<RecordedEvent | null>;
  /** Revision of the last event of the stream, or -1 when the stream does not exist. */
  streamRevision(streamId: string): Promise<number>;
  /** Position of the last event in the log (0 when empty). */
  headPosition(): Promise<number>;
  close(): Promise<void>;
  /**
   * Idempotency keys of commands that wrote nothing, kept in the log's own database so that claiming one
   * and appending events under it exclude each other atomically (SPEC §3): the first to take a key wins,
   * on every server sharing the store. An adapter without them (KurrentDB) leaves the kernel a side table.
   */
  /**
   * Runs `fn` while no other process sharing this store runs one of this workspace's exclusive sections
   * (of the same `name` on PostgreSQL; of any name on SQLite, whose lock is one file): what must not
   * interleave with another server's is a check of the world outside the log followed by an act on it —
   * publishing looks on GitHub for an earlier post of the same review and posts only when it finds none.
   * A process that dies holding it releases it (a database session, a file lock). Waits up to
   * EXCLUSIVE_WAIT_MS, then refuses with the retryable store_unavailable. Absent (KurrentDB): callers keep
   * only this process's sections apart.
   */
  exclusive?<T>(name: string, fn: () => Promise<T>): Promise<T>;
  claimNoopKey?(key: string, record: NoopRecord): Promise<NoopRecord | 'event'>;
  findNoopKey?(key: string): Promise<NoopRecord | null>;
}

/** What the key of a command that changed nothing answers: its caller, command, payload digest and response. */
export interface NoopRecord {
  /** Who used the key: a key answers only its original caller (as for keys of written events). */
  principal: string;
  command: string;
  digest: string;
  /** The response bytes given the first time: a replay with the same payload returns exactly these. */
  json: string;
}

/**
 * Whether an append that meets event ids already stored is a retry of the SAME command (same caller,
 * command and payload digest, as the kernel writes them into every event's metadata) — only then is it
 * an idempotent duplicate. Two different payloads sent at once under one key derive the same event ids;
 * without this check the loser was told "recorded" for the winner's events (issue 34).
 */
export function sameCommand(stored: Partial<Record<'principal' | 'command' | 'commandDigest', unknown>>, incoming: Partial<Record<'principal' | 'command' | 'commandDigest', unknown>>): boolean {
  return stored.principal === incoming.principal && stored.command === incoming.command && stored.commandDigest === incoming.commandDigest;
}

export class WrongExpectedRevision extends DomainError {
  constructor(readonly streamId: string, readonly expected: ExpectedRevision, readonly actual: number) {
    super('wrong_expected_revision', `stream "${streamId}": expected revision ${String(expected)}, actual ${actual}`, { streamId, expected, actual });
  }
}

/** An append refused because its guard stream is no longer at the guarded revision (AppendOptions.guard). */
export class GuardMoved extends DomainError {
  constructor(readonly streamId: string, readonly guarded: number, readonly actual: number) {
    super('guard_moved', `stream "${streamId}": the append was guarded on revision ${guarded}, it is at ${actual}`, { streamId, guarded, actual });
  }
}

/** The guard check itself, for adapters that hold the guarded stream's revision under their write lock. */
export function checkGuard(guard: AppendOptions['guard'], actual: number): void {
  if (guard && guard.revision !== actual) throw new GuardMoved(guard.streamId, guard.revision, actual);
}

export class DuplicateEventId extends DomainError {
  constructor(readonly eventId: string) {
    super('duplicate_event_id', `eventId: ${eventId} is already stored with different content or in another position`, { eventId });
  }
}

/**
 * A call on a store that was closed (the server shutting down, an idle workspace closed): retryable
 * `store_unavailable`, never `internal` — nothing was recorded, and the same call sent again (here once
 * restarted, or to another server) is answered normally.
 */
export class StoreClosed extends DomainError {
  constructor() {
    super('store_unavailable', 'store is closed (the server is shutting down, or the workspace was closed): nothing was recorded; send it again');
  }
}

export const MAX_EVENT_BYTES = 1024 * 1024;

export function checkExpected(streamId: string, expected: ExpectedRevision, actual: number): void {
  const ok =
    expected === 'any' ||
    (expected === 'no_stream' && actual === -1) ||
    (expected === 'stream_exists' && actual >= 0) ||
    (typeof expected === 'number' && expected === actual);
  if (!ok) throw new WrongExpectedRevision(streamId, expected, actual);
}

/** Collects an async iterable (for small reads and tests). */
export async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}
