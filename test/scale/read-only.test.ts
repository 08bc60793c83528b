import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { isReadOnlyError, unavailable } from '../../src/stores/postgres/connection-errors';
import { DomainError } from '../../src/domain-error';
import { newUuidV7 } from '../../src/events/ids';
import { startServer, type RunningServer } from '../../src/server/bootstrap';
import { adminQuery, ownDatabase, untilValue as until, whenPostgres } from './pg-support';

/**
 * PostgreSQL that answers but refuses writes: a failover that leaves a server connected to a standby (or
 * the old primary demoted), or `default_transaction_read_only` switched on (some hosted services do so
 * when the disk fills). Before, every command answered `internal` (not retryable, logged with a stack
 * each) and /health said `ok` throughout. Now a command is refused `store_unavailable` with
 * `retryAfterMs`, saying nothing was recorded; /health says `degraded` and why; reads are still answered;
 * once writable again commands are accepted and /health is back to `ok`.
 */


describe('a read-only refusal (SQLSTATE 25006) is classified', () => {
  test('as store_unavailable, retryable, saying nothing was recorded', () => {
    const err = Object.assign(new Error('cannot execute INSERT in a read-only transaction'), { code: '25006' });
    expect(isReadOnlyError(err)).toBe(true);
    const converted = unavailable(err) as DomainError;
    expect(converted).toBeInstanceOf(DomainError);
    expect(converted.code).toBe('store_unavailable');
    expect(converted.message).toMatch(/refuses writes .*nothing was recorded/);
    expect(isReadOnlyError(Object.assign(new Error('duplicate key'), { code: '23505' }))).toBe(false);
  });
});

whenPostgres('PostgreSQL refusing writes (a standby after failover, default_transaction_read_only)', () => {
  const db = ownDatabase('ro');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-read-only-'));
  let server: RunningServer;
  let owner: string;

  /** What a failover does to the server's connections: cut, and the new ones land where `readOnly` says. */
  const failover = async (readOnly: boolean) => {
    await adminQuery(`ALTER DATABASE "${db.name}" ${readOnly ? 'SET default_transaction_read_only = on' : 'RESET default_transaction_read_only'}`);
    await adminQuery(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${db.name}' AND pid <> pg_backend_pid()`);
  };

  beforeAll(async () => {
    await db.create();
    server = await startServer({ dataDir, port: 0, store: 'postgres', databaseUrl: db.url });
    owner = fs.readFileSync(path.join(dataDir, 'owner-token'), 'utf8').trim();
  }, 120_000);

  afterAll(async () => {
    await server?.close().catch(() => undefined);
    await db.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  type Health = { status: string; store?: { connection?: { status: string; reason?: string } } };
  const health = async () => (await (await fetch(`${server.url}/health`)).json()) as Health;

  async function rpc(method: string, params: Record<string, unknown>) {
    const res = await fetch(`${server.url}/rpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${owner}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { workspace_id: 'default', ...params } }),
    });
    return (await res.json()) as { result?: unknown; error?: { message: string; data?: { code: string; retryAfterMs?: number } } };
  }

  /** One addMember: 'ack', or the refusal's code and message. */
  async function send(key: string, principal: string): Promise<{ code: string; message?: string; retryAfterMs?: number }> {
    const body = await rpc('addMember', { idempotencyKey: key, principal, role: 'member' });
    if (body.result) return { code: 'ack' };
    return { code: body.error?.data?.code ?? 'none', message: body.error?.message, retryAfterMs: body.error?.data?.retryAfterMs };
  }

  test('commands are refused store_unavailable (never internal), /health says degraded and why, reads are answered, and writes come back with the primary', async () => {
    const sent: Array<{ key: string; principal: string }> = [];
    const fresh = () => {
      const s = { key: newUuidV7(), principal: `agent:ro-${sent.length + 1}` };
      sent.push(s);
      return s;
    };
    const first = fresh();
    expect((await send(first.key, first.principal)).code).toBe('ack');
    // The audit read model's tables exist before the failover (a first read creates them: a write).
    expect((await rpc('review_studio.audit', { limit: 5 })).error).toBeUndefined();

    await failover(true);
    // The first command after the cut may meet the terminated connection (also store_unavailable); then
    // the read-only refusal itself. No answer on the way is anything but these two.
    const refusal = await until('a read-only refusal', 60_000, async () => {
      const s = fresh();
      const r = await send(s.key, s.principal);
      expect(r.code).toBe('store_unavailable');
      expect(r.retryAfterMs).toBeGreaterThan(0);
      return /refuses writes/.test(r.message ?? '') ? r : undefined;
    });
    expect(refusal.message).toMatch(/nothing was recorded/);
    const degraded = await until('/health degraded naming read-only', 60_000, async () => {
      const h = await health();
      return /read-only/.test(h.store?.connection?.reason ?? '') ? h : undefined;
    });
    expect(degraded.status).toBe('degraded');
    expect(degraded.store!.connection!.status).toBe('degraded');
    // Reads still answered while writes are refused: a folded view, and a read model kept in PostgreSQL.
    expect((await rpc('review_studio.audit', { limit: 5 })).error).toBeUndefined();
    expect((await rpc('review_studio.reviewStatus', { repoId: 'r', prNumber: 1 })).error).toBeUndefined();

    await failover(false);
    await until('a command accepted again', 60_000, async () => {
      const s = fresh();
      const r = await send(s.key, s.principal);
      if (r.code !== 'ack') expect(r.code).toBe('store_unavailable');
      return r.code === 'ack' ? true : undefined;
    });
    await until('/health connection ok', 60_000, async () => ((await health()).store?.connection?.status === 'ok' ? true : undefined));
    // Every refused key retried until acknowledged: each stored exactly once.
    for (const s of sent) await until(`retry of ${s.key}`, 60_000, async () => ((await send(s.key, s.principal)).code === 'ack' ? true : undefined));
    const rows = await adminQuery<{ key: string; n: string }>(
      `SELECT metadata::jsonb->>'idempotencyKey' AS key, count(*) AS n FROM review_ledger.events WHERE workspace_id = 'default' AND type = 'MemberAdded' AND data::jsonb->>'principal' LIKE 'agent:ro-%' GROUP BY 1`,
      db.url,
    );
    const stored = new Map(rows.map((r) => [r.key, Number(r.n)]));
    for (const s of sent) expect({ key: s.key, stored: stored.get(s.key) }).toEqual({ key: s.key, stored: 1 });
    expect(stored.size).toBe(sent.length);
  }, 300_000);
});
