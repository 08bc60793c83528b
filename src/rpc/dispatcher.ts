import { DomainError, validationError } from '../domain-error';
import { checkAccess, type CommandEnvelope } from '../commands/kernel';
import { canonicalJson } from '../events/canonical-json';
import { TENANT_EDGE, type Ledger } from '../ledger';
import { answerQuery } from '../readmodels/queries/run-query';
import { accessGuardFor } from '../workspaces/access-guard';
import { authenticate, type Caller } from '../security/tokens';
import { INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR, RpcError, toRpcError } from './errors';
import { assertResponseWithin, assertWithinLimits, canonicalJsonWithin, DISCOVER_COST, LIMITS, requestCost, responseTooLarge } from './limits';
import { assertKnownFields, assertNoReservedKeys } from '../commands/payload-keys';
import { methodTable, type MethodSpec } from './methods';
import { openRpcBytes, openRpcJson } from './openrpc';
import type { ProgressHub, ProgressSink } from '../job-progress/hub';
import type { WatchHub, WatchSink } from './watch';
import { didYouMean } from '../errors/suggest';
// Workspace-wide queries (audit, …) answer from checkpointed read models: installs the answerer into runQuery.

/** What a transport knows about the caller and the connection a request arrived on. */
export interface CallContext {
  bearer?: string;
  /** Present on transports that can carry subscriptions (WebSocket). */
  connection?: RpcConnection;
  /**
   * Aborted when the client went away (its HTTP request or WebSocket closed): the reads and queries left
   * in its batch are not run, and a running `reviewDiff` stops its git call. Commands still run: a client
   * that sent a write meant it, and its idempotency key makes a retry safe.
   */
  signal?: AbortSignal;
  /** The frame's workspace releases (authenticate's `holds`): set by `handle`, run once it is answered. */
  holds?: Array<() => void>;
}

/** A long-lived connection: it owns its subscriptions and releases them when it closes. */
export interface RpcConnection {
  /** Every live subscription of the connection (query watches and progress), by subscription id. */
  readonly watchers: Map<string, { close(): void }>;
  sink(): WatchSink;
  progressSink(): ProgressSink;
  /** Closes the connection because its token no longer authenticates (revoked, member removed). */
  end?(reason: DomainError): void;
  /** A request on the connection authenticated: it is no longer closed as unauthenticated. */
  authenticated?(): void;
}

export interface DispatchResult {
  /** The response frame, or null when every request was a notification (or `parts` holds it). */
  response: string | null;
  /**
   * The response as byte ranges to write in order, for a lone `rpc.discover`: the ~140 KB catalogue is
   * the same shared buffer every time instead of a fresh copy per answer (a flood of them was the
   * memory a client could make the server churn through).
   */
  parts?: Buffer[];
  /** To run once the response has been written (starts subscription delivery). */
  after: Array<() => void>;
}

/** Param names that belong to the call envelope, never to a command or query payload. */
const ENVELOPE_KEYS = new Set(['workspace_id', 'idempotencyKey', 'correlationId', 'since', 'coalesce', 'asOf']);

type Id = string | number | null;

/** A well-formed `rpc.discover` call (not a notification): answered from the cached catalogue bytes. */
function isDiscoverRequest(v: unknown): v is { id: string | number } {
  const r = v as { jsonrpc?: unknown; id?: unknown; method?: unknown } | null;
  return !!r && typeof r === 'object' && !Array.isArray(r) && r.jsonrpc === '2.0' && r.method === 'rpc.discover' && (typeof r.id === 'string' || (typeof r.id === 'number' && Number.isFinite(r.id)));
}

/**
 * JSON-RPC 2.0 for every transport: parse, batch, validate the frame, resolve the method from the
 * generated table, authenticate against the workspace (refused before any store opens), authorize by
 * role, run. Command responses embed the kernel's exact bytes, so an idempotent replay over RPC is
 * byte-identical too.
 */
export class RpcDispatcher {
  /** Bytes of one response, batch or not (config.maxResponseBytes: one setting for every transport). */
  readonly maxResponseBytes: number;

  constructor(readonly ledger: Ledger, readonly hub: WatchHub, readonly progress?: ProgressHub) {
    this.maxResponseBytes = ledger.config.maxResponseBytes ?? LIMITS.maxResponseBytes;
  }

  /** One frame (a call or a batch); the workspaces it opens stay open until it is answered. */
  async handle(text: string, ctx: CallContext): Promise<DispatchResult> {
    const holds: Array<() => void> = [];
    // Set on the transport's own per-frame context, not spread into a copy: its `signal` may be a getter
    // that makes an AbortController on first use (the HTTP transport's), which a spread would call for
    // every request. (A copy made with Object.create(ctx) kept the getter but cost the no-op call ~15 µs
    // more server CPU in bench:rpc: V8 turns each fresh per-request prototype into a prototype map.)
    ctx.holds = holds;
    try {
      return await this.handleFrame(text, ctx);
    } finally {
      for (const release of holds) release();
    }
  }

  private async handleFrame(text: string, ctx: CallContext): Promise<DispatchResult> {
    const after: Array<() => void> = [];
    let frame: unknown;
    try {
      frame = JSON.parse(text);
    } catch {
      return { response: errorFrame(null, new RpcError(PARSE_ERROR, 'parse_error', 'Parse error: the frame is not valid JSON')), after };
    }
    if (isDiscoverRequest(frame)) {
      return { response: null, parts: [Buffer.from(`{"jsonrpc":"2.0","id":${JSON.stringify(frame.id)},"result":`), openRpcBytes(), Buffer.from('}')], after };
    }
    // rpc.discover costs a whole batch, so a batch holding it holds nothing else: `[discover]` is answered
    // from the same shared bytes (built per call it was three fresh ~140 KB copies: the flood's memory).
    if (Array.isArray(frame) && frame.length === 1 && isDiscoverRequest(frame[0])) {
      return { response: null, parts: [Buffer.from(`[{"jsonrpc":"2.0","id":${JSON.stringify(frame[0].id)},"result":`), openRpcBytes(), Buffer.from('}]')], after };
    }
    if (Array.isArray(frame)) {
      if (frame.length === 0) return { response: errorFrame(null, new RpcError(INVALID_REQUEST, 'invalid_request', 'Invalid Request: empty batch')), after };
      if (frame.length > LIMITS.maxBatch) return { response: errorFrame(null, new DomainError('payload_too_large', `batch: ${frame.length} requests exceed ${LIMITS.maxBatch}`)), after };
      const cost = frame.reduce((sum: number, req) => sum + requestCost(req), 0);
      if (cost > LIMITS.maxBatchCost) {
        return { response: errorFrame(null, new DomainError('batch_too_costly', `batch: costs ${cost} units, more than ${LIMITS.maxBatchCost} (rpc.discover costs ${DISCOVER_COST}, any other request 1)`)), after };
      }
      const out: string[] = [];
      // The batch's answer is one response: its entries share the cap. An entry that would pass it is
      // answered with response_too_large in its place (and so is every one after it that would).
      let bytes = 2;
      for (let i = 0; i < frame.length; i++) {
        // Yield between entries: one batch must not hold the event loop for every other client.
        if (i > 0) await new Promise<void>((resolve) => setImmediate(resolve));
        const req = frame[i];
        let r = await this.one(req, ctx, after, this.maxResponseBytes - bytes);
        if (r === null) continue;
        if (bytes + Buffer.byteLength(r) + 1 > this.maxResponseBytes) r = errorFrame(idOf(req), responseTooLarge(`batch entry ${i}`, this.maxResponseBytes));
        bytes += Buffer.byteLength(r) + 1;
        out.push(r);
      }
      return { response: out.length ? `[${out.join(',')}]` : null, after };
    }
    return { response: await this.one(frame, ctx, after), after };
  }

  private async one(req: unknown, ctx: CallContext, after: Array<() => void>, maxBytes = this.maxResponseBytes): Promise<string | null> {
    if (!req || typeof req !== 'object' || Array.isArray(req)) return errorFrame(null, new RpcError(INVALID_REQUEST, 'invalid_request', 'Invalid Request: expected an object'));
    const r = req as { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: unknown };
    const idValid = r.id === undefined || r.id === null || typeof r.id === 'string' || (typeof r.id === 'number' && Number.isFinite(r.id));
    const id: Id = idValid && r.id !== undefined ? (r.id as Id) : null;
    if (r.jsonrpc !== '2.0' || typeof r.method !== 'string' || !idValid) {
      return errorFrame(id, new RpcError(INVALID_REQUEST, 'invalid_request', 'Invalid Request: needs jsonrpc "2.0", a string method and a string/number/null id'));
    }
    const notification = r.id === undefined;
    try {
      const json = await this.call(r.method, r.params, ctx, after, Math.max(0, maxBytes - 64));
      return notification ? null : `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${json}}`;
    } catch (err) {
      if (!(err instanceof RpcError) && !(err instanceof DomainError) && (err as { name?: string })?.name !== 'ZodError') console.error(`rpc ${r.method.slice(0, 100)}:`, err);
      return notification ? null : errorFrame(id, err);
    }
  }

  /** Runs one method; returns the result as JSON text. */
  async call(method: string, rawParams: unknown, ctx: CallContext, after: Array<() => void> = [], maxBytes = this.maxResponseBytes): Promise<string> {
    const json = await this.callUncapped(method, rawParams, ctx, after, maxBytes);
    assertResponseWithin(json, maxBytes, method.slice(0, 100), this.maxResponseBytes);
    return json;
  }

  private async callUncapped(method: string, rawParams: unknown, ctx: CallContext, after: Array<() => void>, maxBytes: number): Promise<string> {
    if (method === 'rpc.discover') return openRpcJson();
    if (rawParams !== undefined && (rawParams === null || typeof rawParams !== 'object' || Array.isArray(rawParams))) {
      throw new RpcError(INVALID_PARAMS, 'invalid_params', 'params: must be an object of named parameters');
    }
    const params = (rawParams ?? {}) as Record<string, unknown>;
    assertWithinLimits(params);
    assertNoReservedKeys(params);
    if (method === 'unwatch' || method === 'rpc.unsubscribe') return this.unwatch(params, ctx);
    const spec = methodTable().get(method);
    if (!spec) throw new RpcError(METHOD_NOT_FOUND, 'method_not_found', `method: "${method.slice(0, 100)}" does not exist${didYouMean(method, [...methodTable().keys()])} (see rpc.discover)`);
    const guarded = spec.kind === 'command' && this.ledger.guardsAccessAtAppend(spec.command!.name);
    const caller = await authenticate(this.ledger, params.workspace_id, ctx.bearer, ctx.holds, { guarded });
    ctx.connection?.authenticated?.();
    const payload = payloadOf(params);
    // A command's access and payload are checked once, on the entry path (Ledger.run → its entry step or the kernel).
    if (spec.kind !== 'command') {
      checkAccess({ name: spec.name, access: spec.access }, caller.principal, caller.role);
      if (ctx.signal?.aborted) throw requestCancelled(spec.name);
      assertKnownFields(spec.params, payload);
    }
    switch (spec.kind) {
      case 'command':
        return this.command(spec, caller, params, payload, () => authenticate(this.ledger, params.workspace_id, ctx.bearer, ctx.holds, { guarded: false }));
      case 'query':
        return this.query(spec, caller, params, payload, maxBytes);
      case 'watch':
        return this.watch(spec, caller, params, payload, ctx, after);
      case 'read':
        return this.read(spec, caller, params, payload, maxBytes, ctx.signal);
      case 'progress':
        return this.watchProgress(spec, caller, params, payload, ctx);
    }
  }

  /**
   * `watchProgress`: the caller's workspace's index/compute progress (ephemeral, never in the log, so no
   * position and no `since`). The snapshot lists running jobs and the last few that ended.
   */
  private watchProgress(spec: MethodSpec, caller: Caller, params: Record<string, unknown>, payload: Record<string, unknown>, ctx: CallContext): string {
    const conn = ctx.connection;
    if (!conn) throw new DomainError('transport_unsupported', `${spec.name}: subscriptions need the WebSocket transport (/rpc) or SSE (GET /workspaces/:id/watch/progress)`);
    if (!this.progress) throw new DomainError('watch_closed', `${spec.name}: progress is not available on this server`);
    if (params.since !== undefined) throw new DomainError('invalid_since', 'since: progress is not recorded in the log, so it cannot be resumed; subscribe again for the current state');
    const parsed = spec.params.safeParse(payload);
    if (!parsed.success) throw validationError(parsed.error.issues);
    if (conn.watchers.size >= LIMITS.maxSubscriptionsPerConnection) throw new DomainError('too_many_subscriptions', `${spec.name}: a connection may hold ${LIMITS.maxSubscriptionsPerConnection} subscriptions`);
    accessGuardFor(this.ledger).admit(caller.workspace, caller.principal, LIMITS.maxSubscriptionsPerPrincipal, spec.name);
    // Scoped by the authenticated workspace: a token of another workspace was refused by authenticate.
    const { subscription, snapshot } = this.progress.subscribe(caller.workspace.id, conn.progressSink());
    conn.watchers.set(subscription.id, subscription);
    this.guard(caller, spec, conn, subscription.id, () => !subscription.closed, () => subscription.close());
    return JSON.stringify({ subscription: subscription.id, jobs: snapshot });
  }

  /**
   * `recheck`: the token checked again on a read of the workspace stream. A command run on a check that
   * skipped the read (caller.accessCheckedAt) fails with guard_moved, storing nothing, when the workspace's
   * tokens or members changed before it took effect: then the token is checked on a read (a revoked one is
   * refused here) and the command runs once more, with the same key, under that check as every command
   * ran before guards (no accessCheckedAt: nothing to be moved again).
   */
  private async command(spec: MethodSpec, caller: Caller, params: Record<string, unknown>, payload: Record<string, unknown>, recheck: () => Promise<Caller>): Promise<string> {
    for (;;) {
      const envelope: CommandEnvelope = {
        idempotencyKey: params.idempotencyKey,
        principal: caller.principal,
        role: caller.role,
        tokenId: caller.tokenId,
        via: 'rpc',
        correlationId: typeof params.correlationId === 'string' ? params.correlationId.slice(0, 200) : undefined,
        ...(caller.accessCheckedAt !== undefined ? { accessCheckedAt: caller.accessCheckedAt } : {}),
      };
      try {
        // The one entry path (Ledger.run) as a tenant: bounded by the operator's rules (repo root, workspace quota).
        return (await this.ledger.run(spec.command!.name, caller.workspace, envelope, payload, TENANT_EDGE)).json;
      } catch (err) {
        if (!(err instanceof DomainError) || err.code !== 'guard_moved' || caller.accessCheckedAt === undefined) throw err;
        caller = await recheck();
      }
    }
  }

  private async query(spec: MethodSpec, caller: Caller, params: Record<string, unknown>, payload: Record<string, unknown>, maxBytes: number): Promise<string> {
    const parsed = spec.query!.input.safeParse(payload);
    if (!parsed.success) throw validationError(parsed.error.issues);
    const answer = await answerQuery(spec.query!, caller.workspace, parsed.data, asOfParam(params));
    return canonicalJsonWithin(answer, maxBytes, spec.name, this.maxResponseBytes);
  }

  private async read(spec: MethodSpec, caller: Caller, params: Record<string, unknown>, payload: Record<string, unknown>, maxBytes: number, signal?: AbortSignal): Promise<string> {
    const parsed = spec.read!.input.safeParse(payload);
    if (!parsed.success) throw validationError(parsed.error.issues);
    const head = await caller.workspace.store.headPosition();
    const asOf = asOfParam(params);
    const pinned = spec.read!.pinnedPosition?.(parsed.data);
    if (pinned !== undefined && (pinned > head || (asOf !== undefined && Math.min(asOf, head) !== pinned))) {
      throw new DomainError('invalid_cursor', `cursor: it continues a ${spec.name} answered at position ${pinned}${asOf !== undefined ? `, this request asks for asOf ${asOf}` : `, past this log's head ${head}`}`, { field: 'cursor' });
    }
    const position = pinned ?? (asOf === undefined ? head : Math.min(asOf, head));
    return canonicalJsonWithin({ position, value: await spec.read!.run(caller.workspace, parsed.data, position, signal) }, maxBytes, spec.name, this.maxResponseBytes);
  }

  private async watch(spec: MethodSpec, caller: Caller, params: Record<string, unknown>, payload: Record<string, unknown>, ctx: CallContext, after: Array<() => void>): Promise<string> {
    const conn = ctx.connection;
    if (!conn) throw new DomainError('transport_unsupported', `${spec.name}: subscriptions need the WebSocket transport (/rpc) or SSE (GET /workspaces/:id/watch/${spec.query!.name})`);
    if (conn.watchers.size >= LIMITS.maxSubscriptionsPerConnection) throw new DomainError('too_many_subscriptions', `${spec.name}: a connection may hold ${LIMITS.maxSubscriptionsPerConnection} subscriptions`);
    const parsed = spec.query!.input.safeParse(payload);
    if (!parsed.success) throw validationError(parsed.error.issues);
    const since = parseSince(params.since);
    accessGuardFor(this.ledger).admit(caller.workspace, caller.principal, LIMITS.maxSubscriptionsPerPrincipal, spec.name);
    if (params.coalesce !== undefined && typeof params.coalesce !== 'boolean') throw new DomainError('invalid_payload', `coalesce: must be a boolean, got ${JSON.stringify(params.coalesce)?.slice(0, 40)}`, { field: 'coalesce' });
    const started = await this.hub.watch(caller.workspace, spec.query!, parsed.data, since, conn.sink(), { coalesce: params.coalesce === true });
    const w = started.watcher;
    conn.watchers.set(w.id, w);
    this.guard(caller, spec, conn, w.id, () => !w.closed, () => w.close());
    after.push(() => w.start());
    const result = started.snapshot
      ? `{"position":${started.snapshot.position},"snapshot":${started.snapshot.valueJson},"subscription":${JSON.stringify(w.id)}}`
      : `{"position":${started.position},"resumed":true,"subscription":${JSON.stringify(w.id)}}`;
    return result;
  }

  /**
   * Ends the subscription once its token stops granting the method (revoked, member removed, demoted):
   * a `watch.error` naming the subscription and the reason, then — when the token no longer authenticates
   * at all — the connection closes with that reason.
   */
  private guard(caller: Caller, spec: MethodSpec, conn: RpcConnection, id: string, isOpen: () => boolean, close: () => void): void {
    accessGuardFor(this.ledger).hold(caller.workspace, {
      principal: caller.principal,
      tokenId: caller.tokenId,
      minRole: spec.access.minRole,
      isOpen,
      end: (reason) => {
        conn.watchers.delete(id);
        close();
        conn.sink().fail(new DomainError(reason.code, `subscription ${id}: ${reason.message}`, { ...reason.details, subscription: id }));
        // After the guard's pass, so every subscription of the connection has sent its watch.error first.
        if (reason.status === 'unauthorized') setImmediate(() => conn.end?.(reason));
      },
    });
  }

  private unwatch(params: Record<string, unknown>, ctx: CallContext): string {
    const id = params.subscription;
    if (typeof id !== 'string') throw new DomainError('invalid_payload', 'subscription: required, the id a watch* call returned');
    const w = ctx.connection?.watchers.get(id);
    if (!w) return 'false';
    ctx.connection!.watchers.delete(id);
    w.close();
    return 'true';
  }
}

function asOfParam(params: Record<string, unknown>): number | undefined {
  if (params.asOf === undefined) return undefined;
  if (typeof params.asOf !== 'number' || !Number.isSafeInteger(params.asOf) || params.asOf < 0) throw new DomainError('invalid_payload', 'asOf: must be a non-negative integer position');
  return params.asOf;
}

export function parseSince(value: unknown): number | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  const n = typeof value === 'string' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) throw new DomainError('invalid_since', `since: must be a non-negative integer position, got ${JSON.stringify(value)?.slice(0, 40)}`);
  return n;
}

function payloadOf(params: Record<string, unknown>): Record<string, unknown> {
  // Own keys only ever (reserved keys were refused above): a prototype cannot supply a field.
  const out: Record<string, unknown> = Object.create(null);
  for (const [k, v] of Object.entries(params)) if (!ENVELOPE_KEYS.has(k)) out[k] = v;
  return out;
}

/** The id of a batch entry, for an error in its place (null when it has none usable). */
function idOf(req: unknown): Id {
  const id = (req as { id?: unknown } | null)?.id;
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : null;
}

function errorFrame(id: Id, err: unknown): string {
  return JSON.stringify({ jsonrpc: '2.0', id, error: toRpcError(err) });
}

/** The client of a request went away before it ran: nobody reads the answer (CallContext.signal). */
export const requestCancelled = (method: string): DomainError =>
  new DomainError('request_cancelled', `${method}: not run, the client closed its connection before it was answered`);
