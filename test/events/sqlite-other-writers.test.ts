import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { newUuidV7 } from '../../src/events/ids';
import type { NewEvent, RecordedEvent } from '../../src/events/envelope';
import { SqliteEventStore } from '../../src/stores/sqlite/sqlite-event-store';
import { take } from '../support/take';

const ROOT = path.resolve(__dirname, '../..');

const event = (n: number): NewEvent => ({
  eventId: newUuidV7(),
  type: 'ReviewLevelSet',
  schemaVersion: 1,
  data: { level: n % 2 ? 'light' : 'thorough' },
  metadata: { principal: 'user:cli', workspaceId: 'ws', correlationId: 'c', causationId: null, occurredAt: '2026-12-04T00:00:00Z' },
});

describe('SQLite: appends of other connections to the same file reach this one\'s subscribers while it is idle', () => {
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-other-writers-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('another connection in this process (a second server on the data dir)', async () => {
    const file = path.join(dir, 'workspace.db');
    const served = new SqliteEventStore({ file, workspaceId: 'ws' });
    const cli = new SqliteEventStore({ file, workspaceId: 'ws' });
    const sub = served.subscribeAll({ after: 0 });
    const it = sub[Symbol.asyncIterator]();
    const first = take(it, 3);
    for (let i = 0; i < 3; i++) await cli.append(`s-${i}`, 'no_stream', [event(i)]);
    // The served store never appends here: only the other connection's commits can wake it.
    expect((await first).map((e) => e.streamId)).toEqual(['s-0', 's-1', 's-2']);
    sub.close();
    await cli.close();
    await served.close();
  });

  test('another process (the CLI writing to a served data dir)', async () => {
    const file = path.join(dir, 'workspace.db');
    const served = new SqliteEventStore({ file, workspaceId: 'ws' });
    const sub = served.subscribeAll({ after: 0 });
    const it = sub[Symbol.asyncIterator]();
    const got = take(it, 2);
    const script = `
      const { SqliteEventStore } = require('./src/stores/sqlite/sqlite-event-store');
      const store = new SqliteEventStore({ file: process.argv[1], workspaceId: 'ws' });
      const ev = (id) => ({ eventId: id, type: 'ReviewLevelSet', schemaVersion: 1, data: { level: 'light' }, metadata: { principal: 'user:cli', workspaceId: 'ws', correlationId: 'c', causationId: null, occurredAt: '2026-12-04T00:00:00Z' } });
      store.append('cli', 'no_stream', [ev(process.argv[2]), ev(process.argv[3])]).then(() => store.close());`;
    const r = spawnSync(process.execPath, ['-r', './tools/ts-register.js', '-e', script, file, newUuidV7(), newUuidV7()], { cwd: ROOT, encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect((await got).map((e) => [e.streamId, e.streamRevision])).toEqual([['cli', 0], ['cli', 1]]);
    sub.close();
    await served.close();
  });

  test('own appends taken from memory (recentPage) never hide another connection\'s between them', async () => {
    const file = path.join(dir, 'workspace.db');
    const served = new SqliteEventStore({ file, workspaceId: 'ws' });
    const other = new SqliteEventStore({ file, workspaceId: 'ws' });
    const sub = served.subscribeAll({ after: 0 });
    const it = sub[Symbol.asyncIterator]();
    const expected: string[] = [];
    // Own, own, other, own (the served store's transaction finds the other commit), other alone, own, own:
    // whichever way each page is answered, the subscriber gets every event once, in log order.
    const steps: Array<[SqliteEventStore, string]> = [[served, 'a'], [served, 'b'], [other, 'x'], [served, 'c'], [other, 'y'], [served, 'd'], [served, 'e']];
    const got: RecordedEvent[] = [];
    for (const [store, stream] of steps) {
      await store.append(stream, 'no_stream', [event(expected.length)]);
      expected.push(stream);
      // Read as the steps go (the subscriber sits at the head between them), then once more at the end.
      got.push(...(await take(it, 1)));
    }
    expect(got.map((e) => e.streamId)).toEqual(expected);
    expect(got.map((e) => e.globalPosition)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    // And a subscriber starting behind reads the same log.
    const late = served.subscribeAll({ after: 1 });
    expect((await take(late[Symbol.asyncIterator](), 6)).map((e) => e.streamId)).toEqual(expected.slice(1));
    late.close();
    sub.close();
    await other.close();
    await served.close();
  });

  test('a subscriber far behind gets every event in order past what memory keeps (1,024 events, 4 Mi characters)', async () => {
    const served = new SqliteEventStore({ file: path.join(dir, 'workspace.db'), workspaceId: 'ws' });
    const big = (n: number): NewEvent => ({ ...event(n), data: { level: 'light', note: 'x'.repeat(50_000) } });
    // 1,100 small events (over the count), then 100 of ~50k characters (over the character budget), in appends of 10.
    for (let i = 0; i < 110; i++) await served.append(`small-${i}`, 'no_stream', Array.from({ length: 10 }, (_, k) => event(i * 10 + k)));
    for (let i = 0; i < 10; i++) await served.append(`big-${i}`, 'no_stream', Array.from({ length: 10 }, (_, k) => big(i * 10 + k)));
    // What memory holds stays within both bounds (a tenant's large events cannot make it hold more).
    const kept = [...((served as unknown as { recent: Map<number, { data: string; metadata: string }> }).recent.values())];
    expect(kept.length).toBeLessThanOrEqual(1024);
    expect(kept.reduce((n, r) => n + r.data.length + r.metadata.length, 0)).toBeLessThanOrEqual(4 * 1024 * 1024);
    expect(kept.length).toBeGreaterThan(0);
    const sub = served.subscribeAll({ after: 0 });
    const got = await take(sub[Symbol.asyncIterator](), 1200);
    expect(got.map((e) => e.globalPosition)).toEqual(Array.from({ length: 1200 }, (_, i) => i + 1));
    expect(got.slice(1100).every((e) => (e.data as { note: string }).note.length === 50_000)).toBe(true);
    sub.close();
    await served.close();
  });

  test('the latest appended rows kept per stream stay within 8 Mi characters in all; every stream still reads whole and appends at its revision', async () => {
    const served = new SqliteEventStore({ file: path.join(dir, 'workspace.db'), workspaceId: 'ws' });
    const big = (n: number): NewEvent => ({ ...event(n), data: { level: 'light', note: 'x'.repeat(50_000) } });
    // 200 streams, each one append of 10 rows of ~50k characters (each row under the 64 Ki row limit): ~100 M characters.
    for (let i = 0; i < 200; i++) await served.append(`s-${i}`, 'no_stream', Array.from({ length: 10 }, (_, k) => big(i * 10 + k)));
    const tails = [...((served as unknown as { tails: Map<string, Array<{ data: string; metadata: string }>> }).tails.values())];
    expect(tails.length).toBeGreaterThan(0);
    expect(tails.flat().reduce((n, r) => n + r.data.length + r.metadata.length, 0)).toBeLessThanOrEqual(8 * 1024 * 1024);
    // The last append's rows are kept (the cached fold reads them next); an evicted stream reads from the file.
    expect((served as unknown as { tails: Map<string, unknown> }).tails.has('s-199')).toBe(true);
    for (const s of ['s-0', 's-199']) {
      const read: RecordedEvent[] = [];
      for await (const e of served.readStream(s)) read.push(e);
      expect(read.map((e) => e.streamRevision)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      expect((await served.append(s, 9, [event(0)])).nextExpectedRevision).toBe(10);
    }
    await served.close();
  });
});
