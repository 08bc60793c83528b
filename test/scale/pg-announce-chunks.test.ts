import { newUuidV7 } from '../../src/events/ids';
import { ANNOUNCE_PAYLOAD_MAX, ANNOUNCED_ROWS_MAX } from '../../src/stores/postgres/schema';
import { noticePayloads, PostgresBackend } from '../../src/stores/postgres/backend';
import { PostgresEventStore } from '../../src/stores/postgres/postgres-event-store';
import { DATABASE_URL, dropSchema, levelSetEvent, uniqueSchema, whenPostgres } from './pg-support';
import { statementCounter } from './pg-statements';

/**
 * Announcements carry every row of a commit of up to ANNOUNCED_ROWS_MAX rows (schema v6, issue 35): a group commit too large for one
 * NOTIFY payload is announced in consecutive chunks of at most ANNOUNCE_PAYLOAD_MAX bytes, so another
 * server's subscriptions and decisions fold it without reading — whatever the commit's size.
 */
type Row = [number, string, string, number, string, number, string, string];
const row = (pos: number, stream: string, dataBytes: number): Row => [pos, newUuidV7(), stream, pos, 'ReviewLevelSet', 1, JSON.stringify({ level: 'light', pad: 'é'.repeat(dataBytes / 2) }), '{"principal":"user:alice"}'];

describe('noticePayloads (the after-commit announcement at synchronous_commit = on)', () => {
  it('splits a commit into consecutive chunks within the payload limit, each with its own range, streams and rows', () => {
    const rows = Array.from({ length: 40 }, (_, i) => row(101 + i, `s${i % 5}`, 1000));
    const payloads = noticePayloads({ w: 'ws', f: 101, l: 140, o: 'me', s: ['s0', 's1', 's2', 's3', 's4'], r: rows });
    expect(payloads.length).toBeGreaterThan(1);
    const notices = payloads.map((p) => JSON.parse(p));
    for (const p of payloads) expect(Buffer.byteLength(p)).toBeLessThanOrEqual(ANNOUNCE_PAYLOAD_MAX);
    expect(notices.flatMap((n) => n.r)).toEqual(rows);
    let next = 101;
    for (const n of notices) {
      expect([n.w, n.o, n.f, n.l]).toEqual(['ws', 'me', next, next + n.r.length - 1]);
      expect(n.s).toEqual([...new Set(n.r.map((r: Row) => r[2]))]);
      next = n.l + 1;
    }
    expect(next).toBe(141);
  });

  it('sizes each row against the chunk it starts, its stream included: long stream names still travel with their rows', () => {
    // Three rows per stream, each stream name 1,000 bytes: a row that opens a chunk brings its name along
    // (sized against the chunk before, 3 of these chunks went out without their rows).
    const rows = Array.from({ length: 30 }, (_, i) => row(1 + i, `${String(Math.floor(i / 3)).padStart(4, '0')}-${'s'.repeat(1000)}`, 200));
    const payloads = noticePayloads({ w: 'ws', f: 1, l: 30, o: 'me', s: [...new Set(rows.map((r) => r[2]))], r: rows });
    for (const p of payloads) {
      expect(Buffer.byteLength(p)).toBeLessThanOrEqual(ANNOUNCE_PAYLOAD_MAX);
      // The assembled text is JSON.stringify's, byte for byte, and every chunk kept its rows.
      expect(JSON.stringify(JSON.parse(p))).toBe(p);
      expect(JSON.parse(p).r).toBeDefined();
    }
    expect(payloads.flatMap((p) => JSON.parse(p).r)).toEqual(rows);
  });

  it('a row too large for a payload of its own is announced by range and stream only; the rows around it still travel', () => {
    const rows = [row(1, 'a', 200), row(2, 'big', 9000), row(3, 'a', 200)];
    const notices = noticePayloads({ w: 'ws', f: 1, l: 3, o: 'me', s: ['a', 'big'], r: rows }).map((p) => JSON.parse(p));
    expect(notices).toEqual([
      { w: 'ws', f: 1, l: 1, o: 'me', s: ['a'], r: [rows[0]] },
      { w: 'ws', f: 2, l: 2, o: 'me', s: ['big'] },
      { w: 'ws', f: 3, l: 3, o: 'me', s: ['a'], r: [rows[2]] },
    ]);
  });

  it('a notice without rows is sent as it is', () => {
    expect(noticePayloads({ w: 'ws', f: 1, l: 900, o: 'me' })).toEqual(['{"w":"ws","f":1,"l":900,"o":"me"}']);
  });
});

whenPostgres('postgres announcements of large commits', () => {
  const schema = uniqueSchema('rl_chunk');
  const counter = statementCounter(schema);
  let n = 0;
  beforeAll(() => counter.install());
  afterAll(async () => {
    counter.restore();
    await dropSchema(schema);
  });

  const ev = (workspaceId: string, i: number) => levelSetEvent(workspaceId, { note: `${i} ${'x'.repeat(900)}` });

  // In-commit (append_commit, synchronous_commit off) and after the commit (JS, synchronous_commit on).
  for (const synchronousCommit of [false, true]) {
    it(`synchronous_commit ${synchronousCommit ? 'on' : 'off'}: one commit of 60 events of ~1 KB over 6 streams reaches another server's subscription and decisions with no read`, async () => {
      const a = await PostgresBackend.open({ connectionString: DATABASE_URL, schema, poolSize: 4, synchronousCommit });
      const b = await PostgresBackend.open({ connectionString: DATABASE_URL, schema, poolSize: 4, synchronousCommit });
      const id = `chunk-${++n}`;
      try {
        await b.ensureListening();
        const sa = await PostgresEventStore.open({ backend: a, workspaceId: id });
        const sb = await PostgresEventStore.open({ backend: b, workspaceId: id });
        // b's subscription has caught up (read its first page) before a's commit.
        const sub = sb.subscribeAll({ after: 0 });
        const got: Array<{ position: number; stream: string; note: string }> = [];
        let caughtUp!: () => void;
        const warm = new Promise<void>((r) => (caughtUp = r));
        const reading = (async () => {
          for await (const e of sub) {
            if (e.streamId === 'warm-up') {
              caughtUp();
              continue;
            }
            got.push({ position: e.globalPosition, stream: e.streamId, note: (e.data as { note: string }).note });
            if (got.length === 60) break;
          }
        })();
        await sb.append('warm-up', 'no_stream', [ev(id, -1)]);
        await warm;
        const events = Array.from({ length: 60 }, (_, i) => ev(id, i));
        const reads = await counter.during(async () => {
          // Concurrent appends to six streams: one group commit (or a few), each far over one payload.
          await Promise.all(Array.from({ length: 6 }, (_, s) => sa.append(`s${s}`, 'no_stream', events.slice(s * 10, s * 10 + 10))));
          await reading;
        }, true);
        sub.close();
        // Every event, in order, with its data, and the subscription read no page for it.
        expect(got.map((g) => g.position)).toEqual(Array.from({ length: 60 }, (_, i) => i + 2));
        expect(new Set(got.map((g) => g.note))).toEqual(new Set(events.map((e) => (e.data as { note: string }).note)));
        expect(Object.keys(reads).filter((k) => k !== 'append' && k !== 'notify_all')).toEqual([]);
        // b folds every stream from the rows it was sent: its own tail holds revision 9 of each.
        for (let s = 0; s < 6; s++) expect(sb.freshness()!.ownRevision(`s${s}`)).toBe(9);
        // A bulk commit (more than ANNOUNCED_ROWS_MAX rows) is announced by its range and streams: b reads
        // it — every event, in order — instead of PostgreSQL building and sending its rows.
        const bulk = Array.from({ length: ANNOUNCED_ROWS_MAX + 1 }, (_, i) => ev(id, 100 + i));
        const positions: number[] = [];
        const sub2 = sb.subscribeAll({ after: 61 });
        const bulkReads = await counter.during(async () => {
          const reading2 = (async () => {
            for await (const e of sub2) {
              positions.push(e.globalPosition);
              if (positions.length === bulk.length) break;
            }
          })();
          await sa.append('bulk', 'no_stream', bulk);
          await reading2;
        }, true);
        sub2.close();
        expect(positions).toEqual(bulk.map((_, i) => 62 + i));
        expect(bulkReads.all).toBeGreaterThanOrEqual(1);
        await sa.close();
        await sb.close();
      } finally {
        await a.close();
        await b.close();
      }
    });
  }
});
