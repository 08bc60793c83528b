import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { DomainError, validationError } from '../domain-error';
import { checkAccess } from '../commands/kernel';
import type { Ledger } from '../ledger';
import { accessGuardFor } from '../workspaces/access-guard';
import { authenticate, bearerFrom } from '../security/tokens';
import { parseSince } from './dispatcher';
import { httpStatusOf, toRpcError } from './errors';
import { assertWithinLimits, LIMITS } from './limits';
import { assertNoReservedKeys } from '../commands/payload-keys';
import { queryForPath, watchName } from './methods';
import type { WatchHub, WatchUpdate } from './watch';
import type { ProgressHub } from '../job-progress/hub';
import { WATCH_PROGRESS } from './methods';

export const SSE_HIGH_WATER_BYTES = 256 * 1024;
const HEARTBEAT_MS = 15_000;

const sseFrame = (event: string, position: number, data: string): string => `id: ${position}\nevent: ${event}\ndata: ${data}\n\n`;

/**
 * `GET /workspaces/:id/watch/:query` as Server-Sent Events, for clients that cannot speak WebSocket.
 * Query input: `?input=<JSON>` and/or plain `key=value` parameters (parsed as numbers or booleans where the
 * query's schema says so);
 * resume with `?since=<position>` or the browser's automatic `Last-Event-ID` header.
 */
export async function serveSse(ledger: Ledger, hub: WatchHub, workspaceId: string, queryName: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
  try {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const bearer = bearerFrom(req.headers.authorization) ?? url.searchParams.get('access_token') ?? undefined;
    const caller = await authenticate(ledger, workspaceId, bearer);
    const query = queryForPath(queryName);
    if (!query) throw new DomainError('unknown_query', `query: "${queryName.slice(0, 100)}" is not a watchable query`);
    checkAccess({ name: watchName(query.name), access: { minRole: query.access.minRole } }, caller.principal, caller.role);
    const input = inputFrom(url, query.input);
    assertWithinLimits(input);
    const parsed = query.input.safeParse(input);
    if (!parsed.success) throw validationError(parsed.error.issues);
    const since = parseSince(url.searchParams.get('since') ?? req.headers['last-event-id']);
    const coalesce = url.searchParams.get('coalesce');
    if (coalesce !== null && coalesce !== 'true' && coalesce !== 'false') throw new DomainError('invalid_payload', `coalesce: must be true or false, got ${JSON.stringify(coalesce.slice(0, 40))}`, { field: 'coalesce' });
    accessGuardFor(ledger).admit(caller.workspace, caller.principal, LIMITS.maxSubscriptionsPerPrincipal, watchName(query.name));
    const started = await hub.watch(caller.workspace, query, parsed.data, since, {
      send: (u: WatchUpdate) => res.write(sseFrame('update', u.position, `{"position":${u.position},"value":${u.valueJson}${u.coalesced ? ',"coalesced":true' : ''}}`)),
      congested: () => res.writableLength > SSE_HIGH_WATER_BYTES,
      onDrain: (cb) => (res.writableLength > SSE_HIGH_WATER_BYTES ? res.once('drain', cb) : setImmediate(cb)),
      fail: (err) => res.end(`event: error\ndata: ${JSON.stringify(toRpcError(err))}\n\n`),
    }, { coalesce: coalesce === 'true' });
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache, no-transform', connection: 'keep-alive', 'x-accel-buffering': 'no' });
    if (started.snapshot) res.write(sseFrame('snapshot', started.snapshot.position, `{"position":${started.snapshot.position},"value":${started.snapshot.valueJson}}`));
    else res.write(sseFrame('resumed', started.position, `{"position":${started.position}}`));
    const heartbeat = setInterval(() => res.write(': keep-alive\n\n'), HEARTBEAT_MS);
    const stop = () => {
      clearInterval(heartbeat);
      started.watcher.close();
    };
    // A revoked token, a removed member or a demotion ends the stream: `event: error` with the reason.
    accessGuardFor(ledger).hold(caller.workspace, { principal: caller.principal, tokenId: caller.tokenId, minRole: query.access.minRole, isOpen: () => !started.watcher.closed, end: (reason) => started.watcher.fail(reason) });
    req.on('close', stop);
    res.on('close', stop);
    started.watcher.start();
  } catch (err) {
    res.writeHead(httpStatusOf(err), { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: toRpcError(err) }));
  }
}

/** `progress`, `watchProgress`: the SSE path of watchProgress (not a query of the log). */
export const isProgressPath = (name: string): boolean => name === 'progress' || name === WATCH_PROGRESS.name;

/**
 * `GET /workspaces/:id/watch/progress`: the workspace's index/compute progress as Server-Sent Events —
 * `snapshot` (`{jobs}`), then one `progress` event per (coalesced) update. No ids: progress is not in
 * the log, so there is nothing to resume; a reconnect gets a fresh snapshot.
 */
export async function serveProgressSse(ledger: Ledger, progress: ProgressHub, workspaceId: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
  try {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const bearer = bearerFrom(req.headers.authorization) ?? url.searchParams.get('access_token') ?? undefined;
    const caller = await authenticate(ledger, workspaceId, bearer);
    checkAccess(WATCH_PROGRESS, caller.principal, caller.role);
    accessGuardFor(ledger).admit(caller.workspace, caller.principal, LIMITS.maxSubscriptionsPerPrincipal, WATCH_PROGRESS.name);
    const { subscription, snapshot } = progress.subscribe(caller.workspace.id, {
      send: (_id, u) => res.write(`event: progress\ndata: ${JSON.stringify(u)}\n\n`),
      congested: () => res.writableLength > SSE_HIGH_WATER_BYTES,
      onDrain: (cb) => (res.writableLength > SSE_HIGH_WATER_BYTES ? res.once('drain', cb) : setImmediate(cb)),
      ended: () => {
        stop();
        res.end(`event: error\ndata: ${JSON.stringify(toRpcError(new DomainError('watch_closed', 'the server is shutting down: subscribe again')))}\n\n`);
      },
    });
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache, no-transform', connection: 'keep-alive', 'x-accel-buffering': 'no' });
    res.write(`event: snapshot\ndata: ${JSON.stringify({ subscription: subscription.id, jobs: snapshot })}\n\n`);
    const heartbeat = setInterval(() => res.write(': keep-alive\n\n'), HEARTBEAT_MS);
    const stop = () => {
      clearInterval(heartbeat);
      subscription.close();
    };
    accessGuardFor(ledger).hold(caller.workspace, {
      principal: caller.principal,
      tokenId: caller.tokenId,
      minRole: WATCH_PROGRESS.access.minRole,
      isOpen: () => !subscription.closed,
      end: (reason) => {
        stop();
        res.end(`event: error\ndata: ${JSON.stringify(toRpcError(reason))}\n\n`);
      },
    });
    req.on('close', stop);
    res.on('close', stop);
  } catch (err) {
    res.writeHead(httpStatusOf(err), { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: toRpcError(err) }));
  }
}

/** JSON-Schema types of each top-level input field, to parse `?prNumber=7` as a number but `?repoId=123` as a string. */
function fieldTypes(schema: z.ZodType): Record<string, string[]> {
  try {
    const props = ((z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as { properties?: Record<string, { type?: string | string[] }> }).properties ?? {});
    return Object.fromEntries(Object.entries(props).map(([k, v]) => [k, v.type === undefined ? [] : Array.isArray(v.type) ? v.type : [v.type]]));
  } catch {
    return {};
  }
}

function inputFrom(url: URL, schema: z.ZodType): Record<string, unknown> {
  const types = fieldTypes(schema);
  const out: Record<string, unknown> = Object.create(null);
  const raw = url.searchParams.get('input');
  if (raw) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      throw new DomainError('invalid_payload', 'input: must be a JSON object');
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new DomainError('invalid_payload', 'input: must be a JSON object');
    assertNoReservedKeys(parsed, 'input');
    Object.assign(out, parsed);
  }
  for (const [k, v] of url.searchParams) {
    if (k === 'input' || k === 'since' || k === 'coalesce' || k === 'access_token' || k === 'workspace_id') continue;
    const t = types[k] ?? [];
    if ((t.includes('integer') || t.includes('number')) && /^-?\d+(\.\d+)?$/.test(v)) out[k] = Number(v);
    else if (t.includes('boolean') && (v === 'true' || v === 'false')) out[k] = v === 'true';
    else out[k] = v;
  }
  return out;
}
