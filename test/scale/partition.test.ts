import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { newUuidV7 } from '../../src/events/ids';
import { DEFAULT_POSTGRES_BOUNDS, loadOperatorConfig } from '../../src/operator-config';
import { startServer, type RunningServer } from '../../src/server/bootstrap';
import { PostgresCatalogue } from '../../src/workspaces/postgres-catalogue';
import { TcpProxy } from '../support/tcp-proxy';
import { adminQuery, DATABASE_URL, dropSchema, ownDatabase, uniqueSchema, untilValue as until, whenPostgres } from './pg-support';

/**
 * A network partition between a server and PostgreSQL: connections stay open, nothing arrives, nothing is
 * reset (a firewall dropping packets, a frozen host). Before, a command sent into it waited for as long
 * as the partition lasted (TCP gives up after minutes), /health never answered (the catalogue blocked the
 * server's thread), and every later command queued behind the first. Now a call is bounded by
 * `postgres.queryTimeoutMs`, the heads probe finds the database away and calls are refused at once
 * (store_unavailable, retryable) until it is back, /health answers `degraded`. Nothing here waits on a
 * clock: each step is polled until it holds, and a step that never holds fails by Jest's timeout.
 */


const proxied = (url: string, proxy: TcpProxy): string => {
  const u = new URL(url);
  u.hostname = '127.0.0.1';
  u.port = String(proxy.port);
  return u.toString();
};

describe('postgres.queryTimeoutMs and startWaitMs in the operator config', () => {
  test('default to 10 s and 60 s, take a value, refuse one out of range naming the field', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-pg-config-'));
    try {
      expect(loadOperatorConfig(dir, {}, {}).postgres).toEqual({ queryTimeoutMs: 10_000, startWaitMs: 60_000 });
      expect(DEFAULT_POSTGRES_BOUNDS.queryTimeoutMs).toBe(10_000);
      const file = path.join(dir, 'config.json');
      fs.writeFileSync(file, JSON.stringify({ postgres: { queryTimeoutMs: 2500 } }));
      expect(loadOperatorConfig(dir, { configFile: file }, {}).postgres).toEqual({ queryTimeoutMs: 2500, startWaitMs: 60_000 });
      fs.writeFileSync(file, JSON.stringify({ postgres: { queryTimeoutMs: 50 } }));
      expect(() => loadOperatorConfig(dir, { configFile: file }, {})).toThrow(/postgres\.queryTimeoutMs/);
      fs.writeFileSync(file, JSON.stringify({ postgres: { startWaitMs: 0 } }));
      expect(loadOperatorConfig(dir, { configFile: file }, {}).postgres).toEqual({ queryTimeoutMs: 10_000, startWaitMs: 0 });
      fs.writeFileSync(file, JSON.stringify({ postgres: { startWaitMs: -1 } }));
      expect(() => loadOperatorConfig(dir, { configFile: file }, {})).toThrow(/postgres\.startWaitMs/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

whenPostgres('a network partition between the server and PostgreSQL', () => {
  const db = ownDatabase('part');
  const directUrl = db.url;
  const target = new URL(DATABASE_URL);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-partition-'));
  let proxy: TcpProxy;
  let server: RunningServer;
  let owner: string;

  beforeAll(async () => {
    await db.create();
    proxy = await TcpProxy.start({ host: target.hostname, port: Number(target.port || 5432) });
    const configFile = path.join(dataDir, 'operator.json');
    fs.writeFileSync(configFile, JSON.stringify({ postgres: { queryTimeoutMs: 1000 } }));
    server = await startServer({ dataDir, port: 0, store: 'postgres', databaseUrl: proxied(directUrl, proxy), operator: loadOperatorConfig(dataDir, { configFile }, {}) });
    owner = fs.readFileSync(path.join(dataDir, 'owner-token'), 'utf8').trim();
  }, 120_000);

  afterAll(async () => {
    await proxy?.restore();
    await server?.close().catch(() => undefined);
    await proxy?.close();
    await db.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  const health = async () => (await (await fetch(`${server.url}/health`)).json()) as { status: string; reason?: string };

  /** One addMember; returns 'ack' or the refusal's code (store_unavailable must say when to retry). */
  async function send(key: string, principal: string, workspace = 'default'): Promise<string> {
    const res = await fetch(`${server.url}/rpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${owner}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'addMember', params: { workspace_id: workspace, idempotencyKey: key, principal, role: 'member' } }),
    });
    const body = (await res.json()) as { result?: unknown; error?: { message: string; data?: { code: string; retryAfterMs?: number } } };
    if (body.result) return 'ack';
    const code = body.error?.data?.code ?? `http ${res.status}`;
    if (code === 'store_unavailable') expect(body.error!.data!.retryAfterMs).toBeGreaterThan(0);
    return code;
  }

  test('a command sent into it is answered store_unavailable, /health answers degraded, later commands are refused without waiting, and after it every retried key is stored exactly once', async () => {
    const sent: Array<{ key: string; principal: string }> = [];
    const fresh = () => {
      const s = { key: newUuidV7(), principal: `agent:partition-${sent.length + 1}` };
      sent.push(s);
      return s;
    };
    expect(await send(fresh().key, sent[0].principal)).toBe('ack');

    await proxy.hold();
    // In flight when the partition begins: its answer would come only when TCP gives up. It is refused.
    const inFlight = fresh();
    expect(await send(inFlight.key, inFlight.principal)).toBe('store_unavailable');
    // /health answers during the partition (before: the catalogue held the server's thread) and says why.
    const degraded = await until('/health degraded', 60_000, async () => {
      const h = await health();
      return h.status === 'degraded' ? h : undefined;
    });
    expect(degraded.reason).toMatch(/PostgreSQL|catalogue/);
    // Found away: a command, and a lookup of a workspace this server never saw (the catalogue), are refused.
    const during = fresh();
    expect(await send(during.key, during.principal)).toBe('store_unavailable');
    expect(await send(newUuidV7(), 'agent:nobody', 'never-seen-workspace')).toBe('store_unavailable');
    expect((await proxy.stats()).open).toBeGreaterThan(0); // a partition: nothing was reset

    await proxy.restore();
    await until('a command accepted after the partition', 60_000, async () => {
      const s = fresh();
      return (await send(s.key, s.principal)) === 'ack' ? true : undefined;
    });
    await until('/health ok', 60_000, async () => ((await health()).status === 'ok' ? true : undefined));
    // Every key retried until acknowledged (a refused one may have landed: the retry answers as it did).
    for (const s of sent) await until(`retry of ${s.key}`, 60_000, async () => ((await send(s.key, s.principal)) === 'ack' ? true : undefined));
    const rows = await adminQuery<{ key: string; n: string }>(`SELECT metadata::jsonb->>'idempotencyKey' AS key, count(*) AS n FROM review_ledger.events WHERE workspace_id = 'default' AND type = 'MemberAdded' AND data::jsonb->>'principal' LIKE 'agent:partition-%' GROUP BY 1`, directUrl);
    const stored = new Map(rows.map((r) => [r.key, Number(r.n)]));
    for (const s of sent) expect({ key: s.key, stored: stored.get(s.key) }).toEqual({ key: s.key, stored: 1 });
    expect(stored.size).toBe(sent.length);
  }, 300_000);

  test('a catalogue call that gave up during it never hands its late answer to a later call', async () => {
    const schema = uniqueSchema('rl_part_cat');
    const own = await TcpProxy.start({ host: target.hostname, port: Number(target.port || 5432) });
    const catalogue = new PostgresCatalogue(proxied(DATABASE_URL, own), schema, true, { timeoutMs: 500 });
    try {
      expect(catalogue.register('alpha', 'Alpha', '2026-01-01T00:00:00.000Z')).toBe(true);
      expect(catalogue.register('beta', 'Beta', '2026-01-02T00:00:00.000Z')).toBe(true);
      await own.hold();
      expect(() => catalogue.get('zeta')).toThrow(/did not answer within 500 ms/);
      // Until the worker has a connection again, calls refuse at once.
      expect(() => catalogue.list()).toThrow(/unreachable, reconnecting/);
      await own.restore();
      const list = await until('the catalogue back', 60_000, async () => {
        try {
          return catalogue.list();
        } catch {
          return undefined;
        }
      });
      expect(list.map((w) => w.workspaceId)).toEqual(['alpha', 'beta']);
      expect(catalogue.get('beta')?.workspaceId).toBe('beta');
      expect(catalogue.get('zeta')).toBeUndefined();
      expect(catalogue.get('alpha')?.name).toBe('Alpha');
    } finally {
      await own.restore();
      await catalogue.close();
      await own.close();
      await dropSchema(schema);
    }
  }, 120_000);
});
