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
  metadata: { principal: 'user:test', workspaceId: 'ws', correlationId: 'c', causationId: null, occurredAt: '2026-12-06T00:00:00Z' },
});

/** Work of a reader that folds slowly: at least 20 µs of wall time per event (more under load). */
function slowFold(): void {
  const until = performance.now() + 0.02;
  while (performance.now() < until);
}

/**
 * A long read lets the event loop run between pages. SQLite reads are synchronous and async iteration
 * only queues microtasks, so a reader of a whole log held every other request until it was done (a
 * viewer's `replay` of 150k events kept /health waiting 1.2 s). Measured by what the test relies on, not
 * by time: a callback queued on the event loop before the read runs before the read ends. Slow folds
 * make every page take longer than the store's turn (10 ms), under any load.
 */
describe('SQLite store: long reads yield to the event loop between pages', () => {
  let dir: string;
  let store: SqliteEventStore;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-read-turns-'));
    store = new SqliteEventStore({ file: path.join(dir, 'workspace.db'), workspaceId: 'ws', synchronous: 'NORMAL' });
    for (let b = 0; b < 3; b++) await store.append('s-long', b === 0 ? 'no_stream' : b * 1000 - 1, Array.from({ length: 1000 }, (_, i) => event(b * 1000 + i)));
    await store.append('s-other', 'no_stream', [event(0)]);
  });
  afterAll(async () => {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function turnsDuring(read: AsyncIterable<unknown>): Promise<{ events: number; ranBeforeEnd: boolean }> {
    let ran = false;
    setImmediate(() => (ran = true));
    let events = 0;
    for await (const _ of read) {
      slowFold();
      events++;
    }
    return { events, ranBeforeEnd: ran };
  }

  test('readAll over 3,001 events (four pages)', async () => {
    expect(await turnsDuring(store.readAll())).toEqual({ events: 3001, ranBeforeEnd: true });
  });

  test('readStream of a 3,000-event stream (three pages), forward and backward', async () => {
    // A fresh store on the same file: its cached stream tails would answer without paging.
    const reader = new SqliteEventStore({ file: path.join(dir, 'workspace.db'), workspaceId: 'ws', synchronous: 'NORMAL' });
    try {
      expect(await turnsDuring(reader.readStream('s-long'))).toEqual({ events: 3000, ranBeforeEnd: true });
      expect(await turnsDuring(reader.readStream('s-long', { direction: 'backward' }))).toEqual({ events: 3000, ranBeforeEnd: true });
    } finally {
      await reader.close();
    }
  });

  test('a short read takes no turn: it answers within the same turn of the loop', async () => {
    let ran = false;
    setImmediate(() => (ran = true));
    const got: unknown[] = [];
    for await (const e of store.readStream('s-other')) got.push(e);
    expect([got.length, ran]).toEqual([1, false]);
  });
});
