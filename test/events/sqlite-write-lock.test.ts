import Database from 'better-sqlite3';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { newUuidV7 } from '../../src/events/ids';
import type { NewEvent } from '../../src/events/envelope';
import { SqliteEventStore } from '../../src/stores/sqlite/sqlite-event-store';

const event = (n: number): NewEvent => ({
  eventId: newUuidV7(),
  type: 'ReviewLevelSet',
  schemaVersion: 1,
  data: { level: n % 2 ? 'light' : 'thorough' },
  metadata: { principal: 'user:cli', workspaceId: 'ws', correlationId: 'c', causationId: null, occurredAt: '2026-12-04T00:00:00Z' },
});

/**
 * Another process holding the log's write lock (an operator's sqlite3 shell, a tool): SQLite's busy
 * handler waits on the calling thread. Before, each append held the server's only thread for the whole
 * busy timeout (5 s: /health and every other workspace waited) and then failed `internal`. Now an
 * attempt waits at most 200 ms, the group commit is retried from a timer, and past 5 s it is refused
 * with the retryable store_unavailable naming the lock. Another connection in this process stands in for
 * the other process (SQLite's locks are per connection). Nothing here measures time: the order of events
 * says whether the thread was free.
 */
describe('SQLite: another holder of the write lock', () => {
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-write-lock-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('an append waits without holding the thread, lands once the lock is released, and a lock held on is refused store_unavailable', async () => {
    const file = path.join(dir, 'workspace.db');
    const store = new SqliteEventStore({ file, workspaceId: 'ws' });
    await store.append('s', 'no_stream', [event(0)]);
    const other = new Database(file);
    try {
      other.exec('BEGIN IMMEDIATE');
      const order: string[] = [];
      const waiting = store.append('s', 0, [event(1)]).then(
        (r) => order.push(`append ${r.nextExpectedRevision}`),
        (err) => order.push(`append refused ${(err as { code?: string }).code}`),
      );
      // A timer due while the append waits: it runs while the lock is still held (the thread is free).
      await new Promise<void>((resolve) => setTimeout(() => (order.push('timer'), resolve()), 50));
      other.exec('ROLLBACK');
      await waiting;
      expect(order).toEqual(['timer', 'append 1']);

      // Held on past the wait: refused as the store being away, the lock named, nothing written.
      other.exec('BEGIN IMMEDIATE');
      const refused = await store.append('s', 1, [event(2)]).then(
        () => null,
        (err: { code?: string; message: string }) => err,
      );
      expect(refused).toMatchObject({ code: 'store_unavailable' });
      expect(refused!.message).toMatch(/SQLITE_BUSY: another process has held the log's write lock/);
      // The next one, still held: refused after one attempt, without another full wait (not timed here:
      // it is answered while the lock is held).
      await expect(store.append('s', 1, [event(3)])).rejects.toMatchObject({ code: 'store_unavailable' });
      other.exec('ROLLBACK');
      // Released: the next append lands, at the revision after the last that did.
      expect((await store.append('s', 1, [event(4)])).nextExpectedRevision).toBe(2);
      expect(await store.streamRevision('s')).toBe(2);
    } finally {
      other.close();
      await store.close();
    }
  }, 60_000);
});
