import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DomainError } from '../../src/domain-error';
import { newUuidV7 } from '../../src/events/ids';
import type { NewEvent } from '../../src/events/envelope';
import { startServer } from '../../src/server/bootstrap';
import { SqliteEventStore } from '../../src/stores/sqlite/sqlite-event-store';
import { sqliteStoreFactory } from '../../src/workspaces/registry';

/**
 * A damaged SQLite file (a bad disk, a bad copy, a restore gone wrong). Before: reads answered `internal`
 * (logged with a stack each), /health said `ok`, and nothing told the operator which workspace or what to
 * do. Now every call that meets the damage answers `store_damaged` naming the workspace and what to do,
 * the server says so once in its log, and /health is `degraded` (a count: it needs no token, so it names no
 * workspace). Other workspaces
 * (their own files) are untouched.
 */

const PAGE = 4096;

const event = (i: number): NewEvent => ({
  eventId: newUuidV7(),
  type: 'ReviewLevelSet',
  schemaVersion: 1,
  data: { level: 'light', note: `event ${i} ${'x'.repeat(200)}` },
  metadata: { principal: 'user:alice', workspaceId: 'ws', correlationId: 'c', causationId: null, occurredAt: '2026-01-01T00:00:00.000Z' },
});

/** A log of `n` events in `dir/workspace.db`, closed (its WAL folded back into the file). */
async function writeLog(dir: string, workspaceId: string, n: number): Promise<void> {
  const store = new SqliteEventStore({ file: path.join(dir, 'workspace.db'), workspaceId });
  for (let i = 0; i < n; i += 100) await store.append(`s-${i}`, 'any', Array.from({ length: 100 }, (_, k) => event(i + k)));
  await store.close();
}

/** Overwrites page `page` (0-based) of `file` with 0xFF bytes: not a b-tree page SQLite can read. */
function damagePage(file: string, page: number): void {
  const fd = fs.openSync(file, 'r+');
  try {
    expect(fs.fstatSync(fd).size).toBeGreaterThan((page + 1) * PAGE);
    fs.writeSync(fd, Buffer.alloc(PAGE, 0xff), 0, PAGE, page * PAGE);
  } finally {
    fs.closeSync(fd);
  }
}

type RpcAnswer = { result?: { position?: number; value?: { rows?: unknown[] } }; error?: { message: string; data?: { code: string } } };

/** One JSON-RPC call on workspace `default` with `token`. */
async function rpcAs(url: string, token: string, method: string, params: Record<string, unknown>): Promise<RpcAnswer> {
  const res = await fetch(`${url}/rpc`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { workspace_id: 'default', ...params } }),
  });
  return (await res.json()) as RpcAnswer;
}

async function drain(iter: AsyncIterable<unknown>): Promise<unknown> {
  try {
    for await (const _ of iter) void _;
    return undefined;
  } catch (err) {
    return err;
  }
}

describe('a damaged SQLite event store', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-damage-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('a read that meets a damaged page answers store_damaged naming the workspace and what to do, and says so once', async () => {
    await writeLog(dir, 'alpha', 2000);
    damagePage(path.join(dir, 'workspace.db'), 40);
    const told: string[] = [];
    const store = new SqliteEventStore({ file: path.join(dir, 'workspace.db'), workspaceId: 'alpha', onDamaged: (ws, reason) => told.push(`${ws}: ${reason}`) });
    try {
      const first = await drain(store.readAll());
      expect(first).toBeInstanceOf(DomainError);
      expect((first as DomainError).code).toBe('store_damaged');
      expect((first as Error).message).toMatch(/workspace "alpha" is damaged \(SQLITE_CORRUPT.*restore its workspace\.db from a backup/i);
      expect(((await drain(store.readAll())) as DomainError).code).toBe('store_damaged');
      expect(told).toEqual([expect.stringMatching(/^alpha: SQLITE_CORRUPT/)]);
    } finally {
      await store.close();
    }
  });

  test('a file whose header is not SQLite\'s is refused at open with store_damaged, and the factory reports it for /health', async () => {
    await writeLog(dir, 'beta', 200);
    const file = path.join(dir, 'workspace.db');
    const fd = fs.openSync(file, 'r+');
    fs.writeSync(fd, Buffer.alloc(100, 0x41), 0, 100, 0);
    fs.closeSync(fd);
    const factory = sqliteStoreFactory();
    expect(factory.health?.()).toBeUndefined();
    const err = await factory('beta', dir).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((err as DomainError).code).toBe('store_damaged');
    expect(factory.health?.()).toMatchObject({ status: 'degraded', reason: expect.stringMatching(/^the event store of 1 workspace\(s\) is damaged/) });
    expect(factory.health?.()?.reason).not.toContain('beta');
  });

  test('files that hold only what the log gives again (read models, consumer positions) are moved aside and rebuilt; the catalogue is refused, named', async () => {
    const dataDir = dir;
    let server = await startServer({ dataDir, port: 0 });
    const owner = fs.readFileSync(path.join(dataDir, 'owner-token'), 'utf8').trim();
    const rpc = (method: string, params: Record<string, unknown>) => rpcAs(server.url, owner, method, params);
    let before: Awaited<ReturnType<typeof rpc>>;
    try {
      for (let i = 0; i < 50; i++) expect((await rpc('addMember', { idempotencyKey: newUuidV7(), principal: `agent:r-${i}`, role: 'member' })).error).toBeUndefined();
      before = await rpc('review_studio.audit', { limit: 1000 });
      expect(before.error).toBeUndefined();
      expect(before.result!.position).toBeGreaterThan(50);
    } finally {
      await server.close();
    }
    const ws = path.join(dataDir, 'default');
    const derived = ['consumers.db', 'readmodels.db', 'readmodels.audit.db'];
    for (const f of derived) {
      expect(fs.existsSync(path.join(ws, f))).toBe(true);
      const fd = fs.openSync(path.join(ws, f), 'r+');
      fs.writeSync(fd, Buffer.alloc(100, 0x41), 0, 100, 0);
      fs.closeSync(fd);
    }
    server = await startServer({ dataDir, port: 0 });
    try {
      const after = await rpc('review_studio.audit', { limit: 1000 });
      expect(after.error).toBeUndefined();
      // Rebuilt from the log: the same answer, at the same position.
      expect({ position: after.result!.position, rows: after.result!.value!.rows }).toEqual({ position: before.result!.position, rows: before.result!.value!.rows });
      expect((await rpc('addMember', { idempotencyKey: newUuidV7(), principal: 'agent:after', role: 'member' })).error).toBeUndefined();
      const aside = fs.readdirSync(ws).filter((f) => f.includes('.damaged-'));
      for (const f of derived) expect(aside.some((a) => a.startsWith(`${f}.damaged-`))).toBe(true);
    } finally {
      await server.close();
    }
    const fd = fs.openSync(path.join(dataDir, 'catalog.db'), 'r+');
    fs.writeSync(fd, Buffer.alloc(100, 0x41), 0, 100, 0);
    fs.closeSync(fd);
    const refused = await startServer({ dataDir, port: 0 }).then(
      async (s) => {
        await s.close();
        return undefined;
      },
      (e: unknown) => e,
    );
    expect((refused as DomainError).code).toBe('store_damaged');
    expect((refused as Error).message).toMatch(/workspace catalogue .*catalog\.db is damaged/);
  }, 120_000);

  test('through the server: the call answers store_damaged (not internal) naming the workspace, and /health is degraded without naming it', async () => {
    const dataDir = dir;
    let server = await startServer({ dataDir, port: 0 });
    const owner = fs.readFileSync(path.join(dataDir, 'owner-token'), 'utf8').trim();
    const rpc = (method: string, params: Record<string, unknown>) => rpcAs(server.url, owner, method, params);
    for (let i = 0; i < 300; i++) expect((await rpc('addMember', { idempotencyKey: newUuidV7(), principal: `agent:d-${i}`, role: 'member' })).error).toBeUndefined();
    await server.close();
    damagePage(path.join(dataDir, 'default', 'workspace.db'), 3);
    server = await startServer({ dataDir, port: 0 });
    try {
      const answer = await rpc('review_studio.audit', { limit: 5 });
      expect(answer.error?.data?.code).toBe('store_damaged');
      const health = (await (await fetch(`${server.url}/health`)).json()) as { status: string; reason?: string };
      expect(health.status).toBe('degraded');
      expect(health.reason).toMatch(/the event store of 1 workspace\(s\) is damaged/);
      expect(JSON.stringify(health)).not.toContain('default');
    } finally {
      await server.close();
    }
  }, 120_000);
});
