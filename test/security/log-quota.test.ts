import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { newUuidV7 } from '../../src/events/ids';
import { DEFAULT_LOG_QUOTA_BYTES, loadOperatorConfig } from '../../src/operator-config';
import { startServer, type RunningServer } from '../../src/server/bootstrap';
import { SqliteEventStore } from '../../src/stores/sqlite/sqlite-event-store';
import { fillUntilQuota } from '../support/log-quota-scenario';

/**
 * One member filling a workspace's log fills the disk every tenant's log shares (SQLite: one data dir).
 * Before: nothing stopped it — 1 MiB requests in a loop grew the log without bound. Now past
 * `logQuotaBytes` the workspace's member-level commands are refused (`log_quota_exceeded`, naming the
 * quota and what the log takes), while reads and admin-level commands (revoking the abuser's token,
 * removing the member) still work.
 */

describe('logQuotaBytes in the operator config', () => {
  test('defaults to 4 GiB, takes a value, refuses one below 1 MiB naming the field', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-logquota-config-'));
    try {
      expect(loadOperatorConfig(dir, {}, {}).logQuotaBytes).toBe(DEFAULT_LOG_QUOTA_BYTES);
      expect(DEFAULT_LOG_QUOTA_BYTES).toBe(4 * 1024 ** 3);
      const file = path.join(dir, 'config.json');
      fs.writeFileSync(file, JSON.stringify({ logQuotaBytes: 2 * 1024 * 1024 }));
      expect(loadOperatorConfig(dir, { configFile: file }, {}).logQuotaBytes).toBe(2 * 1024 * 1024);
      fs.writeFileSync(file, JSON.stringify({ logQuotaBytes: 1000 }));
      expect(() => loadOperatorConfig(dir, { configFile: file }, {})).toThrow(/logQuotaBytes/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a workspace whose log reaches logQuotaBytes', () => {
  const QUOTA = 2 * 1024 * 1024;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-logquota-'));
  let server: RunningServer;
  let owner: string;

  beforeAll(async () => {
    const configFile = path.join(dataDir, 'operator.json');
    fs.writeFileSync(configFile, JSON.stringify({ logQuotaBytes: QUOTA }));
    server = await startServer({ dataDir, port: 0, operator: loadOperatorConfig(dataDir, { configFile }, {}) });
    owner = fs.readFileSync(path.join(dataDir, 'owner-token'), 'utf8').trim();
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  const logBytes = () => ['workspace.db', 'workspace.db-wal'].reduce((n, f) => n + (fs.statSync(path.join(dataDir, 'default', f), { throwIfNoEntry: false })?.size ?? 0), 0);

  test('member-level commands are refused once it is reached; reads and admin commands go on', async () => {
    // 40 KB findings until the quota stops them (bounded: 2 MiB / 40 KB is ~50, WAL pages included).
    const { accepted } = await fillUntilQuota(server.url, owner, QUOTA);
    expect(accepted).toBeGreaterThan(10);
    expect(logBytes()).toBeGreaterThanOrEqual(QUOTA);
  }, 120_000);
});

describe('SqliteEventStore.logBytes', () => {
  // Two stat calls per tenant command were 7 % of a server's CPU: below the limit the store answers from
  // its last exact figure plus what it appended since; wherever the answer may reach the limit, it is exact.
  test('exact at or near the limit, an estimate that counts this connection’s appends below it', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-logbytes-'));
    const file = path.join(dir, 'w.db');
    const onDisk = () => [file, `${file}-wal`].reduce((n, f) => n + (fs.statSync(f, { throwIfNoEntry: false })?.size ?? 0), 0);
    const store = new SqliteEventStore({ file, workspaceId: 'w', synchronous: 'NORMAL' });
    const other = new SqliteEventStore({ file, workspaceId: 'w', synchronous: 'NORMAL' });
    const event = (chars: number) => ({ eventId: newUuidV7(), type: 'MemberAdded', schemaVersion: 1, data: { pad: 'x'.repeat(chars) }, metadata: { principal: 'p', workspaceId: 'w', correlationId: 'c', causationId: null, occurredAt: '2026-01-01T00:00:00.000Z' } });
    try {
      await store.append('s', 'any', [event(10)]);
      const exact = store.logBytes();
      expect(exact).toBe(onDisk());
      // 200 KB appended: counted at once below the limit, though the file may not have grown by as much yet.
      await store.append('s', 'any', [event(200_000)]);
      const estimate = store.logBytes(Number.MAX_SAFE_INTEGER);
      expect(estimate).toBeGreaterThanOrEqual(exact + 200_000);
      // Where the estimate reaches the limit, the answer is the files' size, read now.
      expect(store.logBytes(estimate)).toBe(onDisk());
      // Another connection's append (a CLI, a second server) is in the answer once the last exact figure is a second old.
      await other.append('t', 'any', [event(300_000)]);
      await new Promise((r) => setTimeout(r, 1100));
      expect(store.logBytes(Number.MAX_SAFE_INTEGER)).toBe(onDisk());
    } finally {
      await store.close();
      await other.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
