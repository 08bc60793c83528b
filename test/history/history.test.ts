import { checkHistory } from './checker';
import { whenPostgres } from '../scale/pg-support';

/**
 * The history checker, small (`npm run check:history` runs it for minutes): concurrent clients, keys
 * retried and raced with different payloads, resuming subscribers, a kill -9 and restart mid-run; then
 * every acknowledged command stored once with its payload, every refused one absent, every subscriber's
 * updates in order, complete and equal to the answer asOf their position, read models equal a rebuild.
 */
jest.setTimeout(300_000);

test('SQLite, one server killed -9 and restarted mid-run: the recorded history has no violation', async () => {
  const report = await checkHistory({ store: 'sqlite', servers: 1, clients: 4, subscribers: 3, durationMs: 8_000, kill: true, seed: 34 });
  expect(report.violations).toEqual([]);
  expect(report.killed).toBe(1);
  expect(report.commands.acknowledged).toBeGreaterThan(0);
  expect(report.commands.refused).toBeGreaterThan(0); // the raced keys' losers
  expect(report.keys.racedDifferent).toBeGreaterThan(0);
  expect(report.subscribers.updates).toBeGreaterThan(0);
  expect(report.readModelsEqualRebuild).toBe(true);
});

test('SQLite, another process holding the write lock for 1–7 s again and again: no violation, the server stays up', async () => {
  const report = await checkHistory({ store: 'sqlite', servers: 1, clients: 4, subscribers: 2, durationMs: 14_000, kill: false, faults: true, seed: 38 });
  expect(report.violations).toEqual([]);
  expect(report.faults.length).toBeGreaterThanOrEqual(1);
  expect(report.commands.acknowledged).toBeGreaterThan(0);
  expect(report.readModelsEqualRebuild).toBe(true);
});

test('the checker catches a deliberately injected bug (the digest comparison skipped)', async () => {
  const report = await checkHistory({ store: 'sqlite', servers: 1, clients: 4, subscribers: 1, durationMs: 4_000, kill: false, inject: 'skip-digest-check', seed: 35 });
  expect(report.violationCount).toBeGreaterThan(0);
  expect(report.violations.some((v) => /sent at once with 3 payloads: [23] acknowledged|is stored 0 times/.test(v))).toBe(true);
});

whenPostgres('history on PostgreSQL', () => {
  test('PostgreSQL, two servers, one killed -9 and restarted mid-run: no violation', async () => {
    const report = await checkHistory({ store: 'postgres', servers: 2, clients: 4, subscribers: 3, durationMs: 8_000, kill: true, seed: 36 });
    expect(report.violations).toEqual([]);
    expect(report.killed).toBe(1);
    expect(report.commands.acknowledged).toBeGreaterThan(0);
    expect(report.readModelsEqualRebuild).toBe(true);
  });

  test('PostgreSQL, two servers through TCP proxies: outages, partitions, terminated backends and a kill -9 — no violation, no server exits', async () => {
    const report = await checkHistory({ store: 'postgres', servers: 2, clients: 4, subscribers: 2, durationMs: 14_000, kill: true, faults: true, seed: 37 });
    expect(report.violations).toEqual([]);
    expect(report.faults.length).toBeGreaterThanOrEqual(2);
    expect(report.commands.acknowledged).toBeGreaterThan(0);
    expect(report.commands.lostThenRetried + report.commands.acknowledged).toBeGreaterThan(0);
    expect(report.readModelsEqualRebuild).toBe(true);
  });
});
