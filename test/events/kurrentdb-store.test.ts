import { newUuidV7 } from '../../src/events/ids';
import { KurrentDbConnection, KurrentDbEventStore, positionToNumber } from '../../src/stores/kurrentdb/kurrentdb-event-store';
import { eventStoreConformance } from './store-conformance';

const url = process.env.KURRENTDB_URL;

if (url) {
  const connection = new KurrentDbConnection(url);
  // A fresh workspace prefix per test (and per run): streams of earlier runs stay out of every read.
  const run = newUuidV7().slice(-12);
  let n = 0;
  eventStoreConformance('kurrentdb', async () => new KurrentDbEventStore({ connection, workspaceId: `kdb-${run}-${++n}` }));
  afterAll(() => connection.close());
} else {
  console.log('kurrentdb store: KURRENTDB_URL is not set, so the conformance suite is not run against KurrentDB (no server on this machine)');
  test('kurrentdb conformance is not run: KURRENTDB_URL is not set', () => {
    expect(process.env.KURRENTDB_URL).toBeUndefined();
  });
}

test('commit positions map to numbers exactly, and positions past 2^53 are refused instead of rounded', () => {
  expect(positionToNumber(0n)).toBe(0);
  expect(positionToNumber(123_456_789_012n)).toBe(123_456_789_012);
  expect(positionToNumber(BigInt(Number.MAX_SAFE_INTEGER))).toBe(Number.MAX_SAFE_INTEGER);
  expect(() => positionToNumber(BigInt(Number.MAX_SAFE_INTEGER) + 1n)).toThrow(expect.objectContaining({ code: 'position_overflow' }));
});
