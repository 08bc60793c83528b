import type { RecordedEvent } from '../../src/events/envelope';
import { PostgresEventStore } from '../../src/stores/postgres/postgres-event-store';
import { DATABASE_URL, dropSchema, levelSetEvent, uniqueSchema, whenPostgres } from './pg-support';
import { take } from '../support/take';

type Row = [number, string, string, number, string, number, string, string];
const chars = (rows: Iterable<Row>): number => {
  let n = 0;
  for (const r of rows) n += r[6].length + r[7].length;
  return n;
};

/**
 * What a PostgreSQL store keeps of the rows it wrote (for its subscriptions and its decisions' tails) is
 * bounded by count and by characters, and a large event is not kept at all: a tenant filing events of up
 * to 1 MiB cannot make every server hold gigabytes. Readers past what is kept read, and miss nothing.
 */
whenPostgres('postgres: rows kept in memory', () => {
  const schema = uniqueSchema('rl_kept');
  afterAll(() => dropSchema(schema));

  test('recent rows stay within 2,560 and 4 Mi characters, tails within 8 Mi, no kept row over 64 Ki; a subscriber from the start gets every event', async () => {
    const store = await PostgresEventStore.open({ workspaceId: 'w1', connectionString: DATABASE_URL, schema });
    try {
      // 2,700 small events (over the count), 200 of ~50k characters (over the character budgets), 3 of 100k (over the row limit).
      for (let i = 0; i < 270; i++) await store.append(`small-${i % 90}`, 'any', Array.from({ length: 10 }, (_, k) => levelSetEvent('w1', { n: i * 10 + k })));
      for (let i = 0; i < 20; i++) await store.append(`big-${i}`, 'any', Array.from({ length: 10 }, () => levelSetEvent('w1', { note: 'x'.repeat(50_000) })));
      for (let i = 0; i < 3; i++) await store.append('huge', 'any', [levelSetEvent('w1', { note: 'y'.repeat(100_000) })]);
      const inner = store as unknown as { recent: Map<number, Row>; tails: Map<string, Row[]> };
      expect(inner.recent.size).toBeGreaterThan(0);
      expect(inner.recent.size).toBeLessThanOrEqual(2560);
      expect(chars(inner.recent.values())).toBeLessThanOrEqual(4 * 1024 * 1024);
      const tails = [...inner.tails.values()];
      expect(chars(tails.flat())).toBeLessThanOrEqual(8 * 1024 * 1024);
      expect(tails.every((t) => t.length <= 32)).toBe(true);
      expect([...inner.recent.values(), ...tails.flat()].every((r) => r[6].length + r[7].length <= 64 * 1024)).toBe(true);
      expect(inner.tails.has('huge')).toBe(false);

      const sub = store.subscribeAll({ after: 0 });
      const got = await take(sub[Symbol.asyncIterator](), 2903);
      sub.close();
      expect(got.map((e) => e.globalPosition)).toEqual(Array.from({ length: 2903 }, (_, i) => i + 1));
      expect(got.slice(2700, 2900).every((e) => (e.data as { note: string }).note.length === 50_000)).toBe(true);
      expect(got.slice(2900).every((e) => e.streamId === 'huge' && (e.data as { note: string }).note.length === 100_000)).toBe(true);
      // A decision on the huge stream reads it (its rows were not kept) and sees all three.
      const read: RecordedEvent[] = [];
      for await (const e of store.readStream('huge')) read.push(e);
      expect(read.map((e) => e.streamRevision)).toEqual([0, 1, 2]);
    } finally {
      await store.close();
    }
  });
});
