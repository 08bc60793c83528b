import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { newUuidV7 } from '../../src/events/ids';
import { startServer, type RunningServer } from '../../src/server/bootstrap';
import { loadOperatorConfig } from '../../src/operator-config';
import { TcpProxy } from '../support/tcp-proxy';
import { DATABASE_URL, ownDatabase, whenPostgres } from './pg-support';

/**
 * A server (re)started while PostgreSQL is away — a fleet restarted during a database restart or
 * failover — used to exit at once ("cannot open PostgreSQL store (connect ECONNRESET …)"); the history
 * checker's fault run found it when its kill -9 victim restarted inside an outage. Now `serve` keeps trying
 * for `postgres.startWaitMs` and comes up with the database; what no retry can fix is refused at once.
 */

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

whenPostgres('starting while PostgreSQL is away', () => {
  const db = ownDatabase('start');
  const target = new URL(DATABASE_URL);
  /** The test database's URL through the proxy. */
  const proxiedUrl = () => {
    const u = new URL(db.url);
    u.hostname = '127.0.0.1';
    u.port = String(proxy.port);
    return u.toString();
  };
  const dirs: string[] = [];
  const dataDir = () => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-start-outage-'));
    dirs.push(d);
    return d;
  };
  let proxy: TcpProxy;
  const stderr: string[] = [];
  let restoreWrite: (() => void) | null = null;

  beforeAll(async () => {
    await db.create();
    proxy = await TcpProxy.start({ host: target.hostname, port: Number(target.port || 5432) });
    const write = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      stderr.push(String(chunk));
      return (write as (...a: unknown[]) => boolean)(chunk, ...rest);
    }) as typeof process.stderr.write;
    restoreWrite = () => (process.stderr.write = write);
  }, 60_000);

  afterAll(async () => {
    restoreWrite?.();
    await proxy?.close();
    await db.drop();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  }, 60_000);

  test('started during an outage, the server waits, says so, and comes up serving when the database is back', async () => {
    await proxy.cut();
    const dir = dataDir();
    let server: RunningServer | null = null;
    const starting = startServer({ dataDir: dir, port: 0, store: 'postgres', databaseUrl: proxiedUrl() }).then((s) => (server = s));
    starting.catch(() => undefined);
    // Until it has said it is waiting (it keeps trying: a bound for a loaded machine, not a target).
    for (let i = 0; i < 600 && !stderr.some((l) => /cannot open PostgreSQL store .*retrying in \d+ ms/.test(l)); i++) await sleep(50);
    expect(stderr.some((l) => /cannot open PostgreSQL store .*retrying in \d+ ms .*postgres\.startWaitMs/.test(l))).toBe(true);
    expect(server).toBeNull();
    await proxy.restore();
    const s = (await starting) as RunningServer;
    try {
      const health = (await (await fetch(`${s.url}/health`)).json()) as { status: string };
      expect(health.status).toBe('ok');
      const owner = fs.readFileSync(path.join(dir, 'owner-token'), 'utf8').trim();
      const res = await fetch(`${s.url}/rpc`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${owner}` },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'addMember', params: { workspace_id: 'default', idempotencyKey: newUuidV7(), principal: 'user:after-outage', role: 'member' } }),
      });
      const body = (await res.json()) as { result?: { eventIds: string[] }; error?: unknown };
      expect(body.error).toBeUndefined();
      expect(body.result!.eventIds).toHaveLength(1);
    } finally {
      await s.close();
    }
  }, 120_000);

  test('with postgres.startWaitMs 0 a server started during an outage exits at its first failure', async () => {
    const dir = dataDir();
    const configFile = path.join(dir, 'config.json');
    fs.writeFileSync(configFile, JSON.stringify({ postgres: { startWaitMs: 0 } }));
    await proxy.cut();
    const before = stderr.length;
    try {
      await expect(startServer({ dataDir: dir, port: 0, store: 'postgres', databaseUrl: proxiedUrl(), operator: loadOperatorConfig(dir, { configFile }, {}) })).rejects.toThrow(/cannot open PostgreSQL store \(.*ECONNRESET/);
      expect(stderr.slice(before).some((l) => /retrying in/.test(l))).toBe(false);
    } finally {
      await proxy.restore();
    }
  }, 60_000);

  test('a database that does not exist is refused at once, with what to check — no retry can create it', async () => {
    const missing = new URL(db.url);
    missing.pathname = `/${db.name}_missing`;
    const before = stderr.length;
    await expect(startServer({ dataDir: dataDir(), port: 0, store: 'postgres', databaseUrl: missing.toString() })).rejects.toThrow(/cannot open PostgreSQL store \(database ".*_missing" does not exist\); not a connection failure/);
    expect(stderr.slice(before).some((l) => /retrying in/.test(l))).toBe(false);
  }, 60_000);
});
