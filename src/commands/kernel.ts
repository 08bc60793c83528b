import { z } from 'zod';
import { DomainError, validationError } from '../domain-error';
import { eventDefinition, validateEventData } from '../events/catalogue';
import { canonicalJson, digestOf } from '../events/canonical-json';
import type { EventMetadata, NewEvent, Principal, RecordedEvent } from '../events/envelope';
import { encodedJsonOf, isHuman, principalSchema, withEncodedJson } from '../events/envelope';
import { assertIdempotencyKey, deriveEventId } from '../events/ids';
import { GuardMoved, MAX_EVENT_BYTES, type AppendResult } from '../events/store/port';
import { noopKeysOf, NoopRecord } from './noop-keys';
import { Role, roleAtLeast } from '../events/roles';
import { assertNoReservedKeys, parseKnownFields } from './payload-keys';
import type { WorkspaceHandle } from '../workspaces/registry';
import { foldAppended, loadStream } from '../workspaces/load-stream';
import { frozenView, type DecideContext, type Frozen, type PendingEvent, type StreamFold } from '../events/kernel-types';
import { ACCESS_GUARD_SERVICE, jobStopped, revocationOf } from '../workspaces/access-guard';
import { workspaceFold } from '../workspaces/workspace-state';
import { LedgerServices, Slot } from '../slots';
import { LazyAbort } from '../lazy-abort';

/** The I/O a command may do BEFORE the pure decision (read other streams, run git, compute). */
export interface CommandEnv {
  workspace: WorkspaceHandle;
  principal: Principal;
  role: Role;
  now: Date;
  /** Extra services registered by the application (repos, indexes, …), by name. */
  services: LedgerServices;
  /**
   * Aborted (with the reason) once the token that started the command stops granting it — revoked, its
   * member removed or demoted: long `prepare` steps (indexing, computing) stop at their next step.
   */
  signal?: AbortSignal;
}

export interface AccessRule {
  /** Minimum workspace role (SPEC §16). */
  minRole: Role;
  /** Human-only acts: contract decisions, visual approvals, publishing. */
  humanOnly?: boolean;
}

export interface CommandDefinition<I = any, S = any, P = I> {
  /** Method name, e.g. "addReviewNode" (also the RPC method and the MCP tool source). */
  name: string;
  description: string;
  /** The payload schema (without `workspace_id` / `idempotencyKey`, which the kernel handles). */
  input: z.ZodType<I>;
  access: AccessRule;
  stream(input: I): string;
  fold: StreamFold<S>;
  /** Optional async preparation at the edge (I/O): enriches the validated input before deciding. */
  prepare?(input: I, env: CommandEnv): Promise<P>;
  /**
   * `prepare` read the stream state (as a decision's load) and is cheap and free of effects outside the
   * process: after a revision conflict it runs again on the state that won before re-deciding, so a round
   * another server moved meanwhile is prepared for instead of refused.
   */
  prepareAgainOnConflict?: boolean;
  /**
   * Pure authorization that depends on state (who may act on whom), run against the current state BEFORE
   * an idempotent replay answers: a replayed key never returns what the caller could not get now.
   * Commands with one repeat the same check in `decide` (which sees the state the append is made on).
   */
  authorize?(state: Frozen<S>, input: I, ctx: DecideContext): void;
  /** Pure: given the stream state and the (prepared) input, the events to append, or a DomainError. */
  decide(state: Frozen<S>, input: P, ctx: DecideContext): PendingEvent[];
  /**
   * The response body, a pure function of the recorded events (so replays are byte-identical). When
   * nothing was recorded it also sees the prepared input (what the no-op looked at); that answer is
   * stored with the key, so its replays are byte-identical too.
   */
  result?(events: RecordedEvent[], prepared?: P): unknown;
  /** Idempotent follow-up appends to other streams (e.g. a suppression fact in the workspace stream). */
  followUps?(events: RecordedEvent[]): Array<{ stream: string; events: PendingEvent[] }>;
}

/** The edge an act came through, recorded in its events' metadata (the audit shows it). */
export type Via = 'rpc' | 'mcp' | 'cli' | 'webhook' | 'server' | 'web';

export interface CommandEnvelope {
  idempotencyKey: unknown;
  principal: Principal;
  role: Role;
  /** The bearer token that authenticated the caller; absent for the local operator and the server. */
  tokenId?: string;
  via?: Via;
  correlationId?: string;
  causationId?: string | null;
  /**
   * The workspace stream revision `tokenId` was checked against, when that check may have skipped the read
   * (authenticate's `guarded` mode: the store's freshness stood in for it). The kernel then stands behind
   * that check at the moment the command takes effect: its append is guarded on this revision
   * (AppendOptions.guard), and where it takes effect without an append (a no-op's spent key) or answers
   * without one (a replay, a refusal), it first reads the workspace stream and compares. A moved stream
   * fails the command with GuardMoved and nothing stored; the edge checks the token again and re-runs it.
   * Set only by an edge that authenticated the token of this very workspace, on a store with appendGuards.
   */
  accessCheckedAt?: number;
}

export interface CommandResponse {
  streamId: string;
  eventIds: string[];
  firstPosition: number | null;
  lastPosition: number | null;
  streamRevision: number;
  result: unknown;
}

export interface CommandOutcome {
  response: CommandResponse;
  /** The exact bytes of the response: identical on every idempotent replay. */
  json: string;
  /** True when nothing was written because the key had already been used with this payload. */
  replayed: boolean;
}

const MAX_CONFLICT_RETRIES = 20;

/** A command run under a token check that may have skipped its read (CommandEnvelope.accessCheckedAt). */
interface AccessGuard {
  /** The guard its append carries: the workspace stream at the checked revision. */
  append: { streamId: string; revision: number };
  /** The command took effect under the check (a guarded append landed, or a read confirmed it): no read after. */
  held: boolean;
}

/** Per-workspace chains of work per stream: commands on one stream run one after another in a process. */
const STREAM_LOCKS = new Slot<Map<string, Promise<unknown>>>('commands.streamLocks');

/**
 * Runs commands: validate → idempotency check → prepare → load (cached fold) → decide → append with the
 * exact expected revision. A revision conflict re-reads and re-decides (bounded), so concurrent
 * reviewers never lose writes; a duplicate key returns the original response bytes and writes nothing.
 */
export class CommandExecutor {
  constructor(
    private readonly clock: () => Date = () => new Date(),
    private readonly services: LedgerServices = new LedgerServices(),
  ) {}

  /**
   * `prepare` is where a command does its long I/O (indexing, computing a review). Started with a token,
   * it runs with a signal the access guard aborts once that token stops granting the command (revoked,
   * member removed, demoted), and its result is refused if the token stopped granting it meanwhile —
   * checked again after it returns, so a revocation the guard has not seen yet counts too.
   */
  private async prepareGuarded<I, S, P>(def: CommandDefinition<I, S, P>, input: I, env: CommandEnv, tokenId: string | undefined): Promise<P> {
    if (!tokenId) return def.prepare!(input, env);
    // Made on first use (LazyAbort): most prepares are short and never read the signal.
    const stop = new LazyAbort();
    let running = true;
    const guard = this.services.get(ACCESS_GUARD_SERVICE);
    guard?.hold(env.workspace, { principal: env.principal, tokenId, minRole: def.access.minRole, isOpen: () => running, end: (reason) => stop.abort(jobStopped(def.name, reason)) });
    try {
      const prepared = await def.prepare!(input, {
        ...env,
        get signal() {
          return stop.signal;
        },
      });
      if (stop.isAborted) throw stop.reason;
      // A revocation recorded or announced meanwhile is read (freshness: the store's own appends and other
      // servers' announcements); one not yet announced is as late as one that lands just after this check.
      const { state } = await loadStream(workspaceFold, env.workspace, 'workspace', { forDecision: true });
      const reason = revocationOf(state, { principal: env.principal, tokenId, minRole: def.access.minRole }, this.clock());
      if (reason) throw jobStopped(def.name, reason);
      return prepared;
    } finally {
      running = false;
    }
  }

  async execute<I, S, P>(def: CommandDefinition<I, S, P>, workspace: WorkspaceHandle, envelope: CommandEnvelope, payload: unknown): Promise<CommandOutcome> {
    const at = envelope.accessCheckedAt;
    if (at === undefined || envelope.tokenId === undefined || workspace.store.appendGuards !== true) return this.executeAs(def, workspace, envelope, payload, null);
    const access: AccessGuard = { append: { streamId: 'workspace', revision: at }, held: false };
    let outcome: CommandOutcome;
    try {
      outcome = await this.executeAs(def, workspace, envelope, payload, access);
    } catch (err) {
      // A refusal on the state (or of the key) is an answer too: given only while the check still stands.
      if (err instanceof DomainError && err.code !== 'guard_moved' && err.code !== 'store_unavailable' && !access.held) await this.confirmAccess(workspace, at);
      throw err;
    }
    if (!access.held) await this.confirmAccess(workspace, at);
    return outcome;
  }

  /** The workspace stream, read (not taken from freshness), is still at the revision the token was checked against. */
  private async confirmAccess(workspace: WorkspaceHandle, at: number): Promise<void> {
    const { revision } = await loadStream(workspaceFold, workspace, 'workspace');
    if (revision !== at) throw new GuardMoved('workspace', at, revision);
  }

  private async executeAs<I, S, P>(def: CommandDefinition<I, S, P>, workspace: WorkspaceHandle, envelope: CommandEnvelope, payload: unknown, access: AccessGuard | null): Promise<CommandOutcome> {
    const now = this.clock();
    // Access first: a caller who may not run the command learns nothing about its payload or key.
    const principal = principalSchema.parse(envelope.principal);
    checkAccess(def, principal, envelope.role);
    const key = assertIdempotencyKey(envelope.idempotencyKey, now);
    assertNoReservedKeys(payload);
    const parsed = parseKnownFields(def.input, payload);
    if (!parsed.success) throw validationError(parsed.error.issues);
    const input = parsed.data;
    const commandDigest = digestOf({ command: def.name, input });
    const streamId = def.stream(input);

    const ctx: DecideContext = { principal, role: envelope.role, now: now.toISOString(), workspaceId: workspace.id };
    // Authorize first: a replay answers only a caller who may do this now (and, below, only its original caller).
    if (def.authorize) def.authorize(frozenView((await loadStream(def.fold, workspace, streamId, { forDecision: true })).state), input, ctx);
    // Where the append answers for a used key itself (EventStore.appendChecksKeys) and `prepare` is cheap and
    // free of outside effects, a key is not looked up first: a used one is met at the append (duplicate, or
    // duplicate_event_id: replayed or refused below as after a race) or at the no-op claim, and a refusal
    // on the way there (a decision on the state that changed since, a revoked token) is answered as the
    // look-up would have answered it — the stored answer, or idempotency_key_reused. A new key costs nothing.
    const checkedAtAppend = workspace.store.appendChecksKeys === true && (!def.prepare || def.prepareAgainOnConflict === true);
    if (checkedAtAppend) {
      try {
        return await this.decideAndAppend(def, workspace, envelope, input, key, commandDigest, streamId, principal, ctx, now, access);
      } catch (err) {
        if (!(err instanceof DomainError) || err.code === 'store_unavailable' || err.code === 'idempotency_key_reused' || err.code === 'guard_moved') throw err;
        const used = await this.usedKeyAnswer(def, workspace, key, commandDigest, streamId, principal);
        if (used) return used;
        throw err;
      }
    }
    // A new key (one round trip where the store can tell) needs neither lookup below.
    if (!(await workspace.store.keyUnused?.(key))) {
      const used = await this.usedKeyAnswer(def, workspace, key, commandDigest, streamId, principal);
      if (used) return used;
    }
    return this.decideAndAppend(def, workspace, envelope, input, key, commandDigest, streamId, principal, ctx, now, access);
  }

  /** What a key already used answers: its stored events' or its no-op's answer, or idempotency_key_reused; null for a new key. */
  private async usedKeyAnswer(def: CommandDefinition<any, any, any>, workspace: WorkspaceHandle, key: string, commandDigest: string, streamId: string, principal: Principal): Promise<CommandOutcome | null> {
    const replay = await this.replay(def, workspace, key, commandDigest, streamId, principal);
    if (replay) return replay;
    const noop = await noopKeysOf(workspace).find(key);
    return noop ? this.replayNoop(def, key, commandDigest, principal, noop) : null;
  }

  private async decideAndAppend<I, S, P>(
    def: CommandDefinition<I, S, P>,
    workspace: WorkspaceHandle,
    envelope: CommandEnvelope,
    input: I,
    key: string,
    commandDigest: string,
    streamId: string,
    principal: Principal,
    ctx: DecideContext,
    now: Date,
    access: AccessGuard | null,
  ): Promise<CommandOutcome> {
    const env: CommandEnv = { workspace, principal, role: envelope.role, now, services: this.services };
    // Under a guarded token check the prepare is a cheap one (Ledger.guardsAccessAtAppend) and the append's
    // guard refuses anything a revocation during it would: no job guard, no second workspace load.
    const prepareNow = () => (def.prepare ? (access && def.prepareAgainOnConflict === true ? def.prepare(input, env) : this.prepareGuarded(def, input, env, envelope.tokenId)) : Promise.resolve(input as unknown as P));
    let prepared = await prepareNow();

    // Commands on one stream are serialized inside a process (decide on the latest state, no wasted
    // decisions); across processes the expected revision arbitrates and a conflict re-decides.
    let stored: RecordedEvent[] | null = null;
    const outcome = await this.serialized(workspace, streamId, async () => {
      for (let attempt = 0; ; attempt++) {
        const { state, revision } = await loadStream(def.fold, workspace, streamId, { forDecision: true });
        const pending = def.decide(frozenView(state), prepared, ctx);
        if (pending.length === 0) {
          // Nothing to write, but the key is spent: a later use with another payload must be refused.
          const out = this.respond({ streamId, eventIds: [], firstPosition: null, lastPosition: null, streamRevision: revision, result: def.result ? def.result([], prepared) : null }, false);
          // Spending the key is this command's one effect: only under a token check that still stands.
          if (access && !access.held) {
            await this.confirmAccess(workspace, access.append.revision);
            access.held = true;
          }
          const first = await noopKeysOf(workspace).claim(key, { principal, command: def.name, digest: commandDigest, json: out.json });
          if (first === 'event') {
            // A concurrent request with this key appended events first: answer as it did, or refuse.
            const again = await this.replay(def, workspace, key, commandDigest, streamId, principal);
            if (again) return again;
            throw new Error(`idempotency key ${key} is held by events that cannot be read`);
          }
          const mine = first.json === out.json && first.digest === commandDigest && first.command === def.name && first.principal === principal;
          return mine ? out : this.replayNoop(def, key, commandDigest, principal, first);
        }
        const metadata: EventMetadata = {
          principal,
          workspaceId: workspace.id,
          correlationId: envelope.correlationId ?? key,
          causationId: envelope.causationId ?? null,
          occurredAt: now.toISOString(),
          idempotencyKey: key,
          commandDigest,
          command: def.name,
          batchSize: pending.length,
          role: envelope.role,
          ...(envelope.tokenId ? { tokenId: envelope.tokenId } : {}),
          ...(envelope.via ? { via: envelope.via } : {}),
        };
        const events = pending.map((p, i) => toNewEvent(p, deriveEventId(key, i), metadata));
        try {
          const appended = await workspace.store.append(streamId, revision < 0 ? 'no_stream' : revision, events, access ? { guard: access.append } : undefined);
          // The store found this key's events already stored by the same caller, command and payload (a
          // concurrent twin won): answer with what it stored — replay checks that once more.
          if (appended.duplicate) {
            const again = await this.replay(def, workspace, key, commandDigest, streamId, principal);
            if (again) return again;
            throw new Error(`appended events of ${key} not found`);
          }
          if (access) access.held = true;
          stored = recordedFrom(workspace, streamId, events, appended);
          if (stored) foldAppended(def.fold, workspace, streamId, revision, stored);
        } catch (err) {
          const code = (err as DomainError).code;
          if (code === 'duplicate_event_id' || code === 'wrong_expected_revision') {
            // Another request with the same key may have won the race — with events or as a no-op: answer
            // as it did when it was the same caller and payload, refuse (idempotency_key_reused) otherwise.
            const again = await this.replay(def, workspace, key, commandDigest, streamId, principal);
            if (again) return again;
            const noop = await noopKeysOf(workspace).find(key);
            if (noop) return this.replayNoop(def, key, commandDigest, principal, noop);
          }
          if (code === 'wrong_expected_revision' && attempt < MAX_CONFLICT_RETRIES) {
            // Jittered backoff: symmetric writers in lockstep would otherwise collide round after round.
            await new Promise((r) => setTimeout(r, Math.random() * Math.min(100, 2 ** attempt)));
            if (def.prepareAgainOnConflict) prepared = await prepareNow();
            continue;
          }
          throw err;
        }
        return null;
      }
    });
    if (outcome) return outcome;
    const recorded = stored ?? (await this.readBatch(workspace, key, streamId));
    if (!recorded) throw new Error(`appended events of ${key} not found`);
    // What is answered is what is stored: an adapter that deduplicates ids on its own (KurrentDB) could
    // have kept a concurrent twin's events under this key; then this caller's command was not recorded.
    this.assertOwnBatch(def, recorded, key, commandDigest, principal);
    await this.runFollowUps(def, workspace, recorded);
    return this.respond(responseOf(def, streamId, recorded), false);
  }

  private async serialized<T>(workspace: WorkspaceHandle, streamId: string, fn: () => Promise<T>): Promise<T> {
    const locks = workspace.cache.getOrSet(STREAM_LOCKS, () => new Map());
    const prev = locks.get(streamId) ?? Promise.resolve();
    const run = prev.then(fn, fn);
    const tail = run.catch(() => undefined);
    locks.set(streamId, tail);
    tail.then(() => {
      if (locks!.get(streamId) === tail) locks!.delete(streamId);
    });
    return run;
  }

  /** Folds a stream (from the per-workspace cache, reading only events past the cached revision). */
  load<S>(fold: StreamFold<S>, workspace: WorkspaceHandle, streamId: string): Promise<{ state: S; revision: number }> {
    return loadStream(fold, workspace, streamId);
  }

  private async replay(def: CommandDefinition<any, any, any>, workspace: WorkspaceHandle, key: string, digest: string, streamId: string, principal: Principal): Promise<CommandOutcome | null> {
    const recorded = await this.readBatch(workspace, key, streamId);
    if (!recorded) return null;
    this.assertOwnBatch(def, recorded, key, digest, principal);
    // A crash between the primary append and its follow-ups is repaired here: follow-ups are idempotent.
    await this.runFollowUps(def, workspace, recorded);
    return this.respond(responseOf(def, recorded[0].streamId, recorded), true);
  }

  /** The stored batch of `key` was written by this caller, command and payload, or the key is refused. */
  private assertOwnBatch(def: CommandDefinition<any, any, any>, recorded: RecordedEvent[], key: string, digest: string, principal: Principal): void {
    const meta = recorded[0].metadata;
    // Bound to the calling principal: someone else presenting a used key learns nothing of the original
    // response (not even whether the payload matched).
    if (meta.principal !== principal) {
      throw new DomainError('idempotency_key_reused', `idempotencyKey: ${key} was already used by another principal; generate a new key`, { idempotencyKey: key });
    }
    if (meta.commandDigest !== digest || meta.command !== def.name) {
      throw new DomainError('idempotency_key_reused', `idempotencyKey: ${key} was already used for a different ${meta.command === def.name ? 'payload' : `command (${meta.command})`}`, { idempotencyKey: key });
    }
  }

  /** A key first used by a command that changed nothing: the same caller and payload get the same bytes, anything else is refused. */
  private replayNoop(def: CommandDefinition<any, any, any>, key: string, digest: string, principal: Principal, noop: NoopRecord): CommandOutcome {
    if (noop.principal !== principal) {
      throw new DomainError('idempotency_key_reused', `idempotencyKey: ${key} was already used by another principal; generate a new key`, { idempotencyKey: key });
    }
    if (noop.digest !== digest || noop.command !== def.name) {
      throw new DomainError('idempotency_key_reused', `idempotencyKey: ${key} was already used for a different ${noop.command === def.name ? 'payload' : `command (${noop.command})`}`, { idempotencyKey: key });
    }
    return { response: JSON.parse(noop.json) as CommandResponse, json: noop.json, replayed: true };
  }

  private async readBatch(workspace: WorkspaceHandle, key: string, streamId: string): Promise<RecordedEvent[] | null> {
    const first = await workspace.store.findEvent(key, streamId);
    if (!first) return null;
    const n = first.metadata.batchSize ?? 1;
    const out = [first];
    for (let i = 1; i < n; i++) {
      const e = await workspace.store.findEvent(deriveEventId(key, i), first.streamId);
      if (!e) throw new Error(`event ${i} of command ${key} missing`);
      out.push(e);
    }
    return out;
  }

  private async runFollowUps(def: CommandDefinition<any, any, any>, workspace: WorkspaceHandle, recorded: RecordedEvent[]): Promise<void> {
    if (!def.followUps) return;
    const key = recorded[0].metadata.idempotencyKey ?? recorded[0].eventId;
    let n = recorded.length;
    for (const { stream, events } of def.followUps(recorded)) {
      const news = events.map((p) => toNewEvent(p, deriveEventId(key, n++), { ...recorded[0].metadata, batchSize: undefined, causationId: recorded[0].eventId }));
      // Fixed ids make this append idempotent; 'any' is safe here because the ids are the dedupe key.
      await workspace.store.append(stream, 'any', news);
    }
  }

  private respond(response: CommandResponse, replayed: boolean): CommandOutcome {
    return { response, json: canonicalJson(response), replayed };
  }
}

/**
 * The batch as the store recorded it, without reading it back, when the store says an appended batch is
 * exactly what it was given (EventStore.appendsAreExact); null otherwise (read back). Data and metadata
 * go through JSON as the store's copy did, so the answer has the bytes a replay will have.
 */
function recordedFrom(workspace: WorkspaceHandle, streamId: string, events: NewEvent[], appended: AppendResult): RecordedEvent[] | null {
  if (!workspace.store.appendsAreExact || appended.lastPosition - appended.firstPosition !== events.length - 1) return null;
  const firstRevision = appended.nextExpectedRevision - events.length + 1;
  return events.map((e, i) => ({
    eventId: e.eventId,
    type: e.type,
    schemaVersion: e.schemaVersion,
    ...parsedCopies(e),
    streamId,
    streamRevision: firstRevision + i,
    globalPosition: appended.firstPosition + i,
  }));
}

function responseOf(def: CommandDefinition<any, any, any>, streamId: string, recorded: RecordedEvent[]): CommandResponse {
  return {
    streamId,
    eventIds: recorded.map((e) => e.eventId),
    firstPosition: recorded[0].globalPosition,
    lastPosition: recorded[recorded.length - 1].globalPosition,
    streamRevision: recorded[recorded.length - 1].streamRevision,
    result: def.result ? def.result(recorded) : null,
  };
}

/** Data and metadata as the store's copy has them (through JSON), from the text the store wrote. */
function parsedCopies(e: NewEvent): { data: unknown; metadata: EventMetadata } {
  const json = encodedJsonOf(e);
  return { data: JSON.parse(json.data), metadata: flatJsonCopy(e.metadata) ?? (JSON.parse(json.metadata) as EventMetadata) };
}

/**
 * A copy of a flat record whose values JSON keeps as they are (strings, finite numbers, booleans, null):
 * what JSON.parse of its JSON.stringify gives, key order included, without the round trip. Undefined
 * for anything else (then the caller parses).
 */
function flatJsonCopy<T extends object>(value: T): T | undefined {
  const out: Record<string, unknown> = {};
  for (const k in value) {
    if (!Object.prototype.hasOwnProperty.call(value, k)) return undefined;
    const v = (value as Record<string, unknown>)[k];
    if (typeof v === 'string' || typeof v === 'boolean' || v === null || (typeof v === 'number' && Number.isFinite(v) && !Object.is(v, -0))) out[k] = v;
    else return undefined;
  }
  return out as T;
}

function toNewEvent(p: PendingEvent, eventId: string, metadata: EventMetadata): NewEvent {
  const def = eventDefinition(p.type);
  const data = validateEventData(p.type, p.data);
  // Serialized once: the size check, the store's row and the answer's copy all use this text.
  const json = { data: JSON.stringify(data), metadata: JSON.stringify(metadata) };
  const size = Buffer.byteLength(json.data) + Buffer.byteLength(json.metadata);
  if (size > MAX_EVENT_BYTES) throw new DomainError('payload_too_large', `${p.type}: event is ${size} bytes, the limit is ${MAX_EVENT_BYTES}`);
  return withEncodedJson({ eventId, type: p.type, schemaVersion: def.schemaVersion, data, metadata }, json);
}

export function checkAccess(def: Pick<CommandDefinition, 'name' | 'access'>, principal: Principal, role: Role): void {
  if (!roleAtLeast(role, def.access.minRole)) {
    throw new DomainError('forbidden', `${def.name}: needs role ${def.access.minRole} or above, caller has ${role}`);
  }
  if (def.access.humanOnly && !isHuman(principal)) {
    throw new DomainError('forbidden', `${def.name}: only a human principal (user:…) may do this; ${principal} is not one`);
  }
}
