import Database from 'better-sqlite3';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { verifyStore, verifyThreadsFrom, writeCheckpoint } from '../../src/audit/checkpointer';
import { generateAuditKey } from '../../src/audit/keys';
import { chainHash, genesisHash } from '../../src/events/chain';
import { SqliteEventStore } from '../../src/stores/sqlite/sqlite-event-store';
import { ev } from './support';

// `audit verify` on SQLite checks logs of ≥ 20,000 events in worker threads over ranges, then stitches
// the ranges. These cases put the tampering where that could go wrong — inside a range, and on the
// boundary between two — and expect the same verdict as the one-thread streaming pass.
const N = 24_000; // two ranges of 12,000 with two threads
const BOUNDARY = 12_000;

let dir: string;
let file: string;
const key = generateAuditKey().key;
beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-pverify-'));
  file = path.join(dir, 'ws', 'workspace.db');
  const store = new SqliteEventStore({ file, workspaceId: 'pv', synchronous: 'OFF' });
  for (let i = 0; i < N; i += 200) await store.append(`s-${(i / 200) % 7}`, 'any', Array.from({ length: 200 }, (_, k) => ev('pv', i + k)));
  await writeCheckpoint(store, key, new Date('2026-03-01T00:00:00Z'));
  await store.close();
}, 120_000);
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A copy of the pristine log, changed by `tamper` straight in the file, then verified both ways. */
async function verifyBoth(tamper: (db: Database.Database) => void) {
  const copy = path.join(dir, `copy-${Math.random().toString(36).slice(2)}`, 'workspace.db');
  fs.mkdirSync(path.dirname(copy));
  fs.copyFileSync(file, copy);
  const db = new Database(copy);
  tamper(db);
  db.close();
  const store = new SqliteEventStore({ file: copy, workspaceId: 'pv' });
  try {
    const parallel = await verifyStore(store, key.publicKey, { threads: 2 });
    const sequential = await verifyStore(store, key.publicKey, { threads: 1 });
    // What the fast pass alone concluded (null: it declined and the streaming pass decided).
    return { parallel, sequential, clean: await store.chainScan(new Set(), genesisHash('pv'), 2) };
  } finally {
    await store.close();
  }
}

const row = (db: Database.Database, p: number) =>
  db.prepare('SELECT * FROM events WHERE global_position = ?').get(p) as { event_id: string; stream_id: string; stream_revision: number; type: string; schema_version: number; data: string; metadata: string; hash: Buffer };

describe('audit verify in worker threads over ranges (SQLite)', () => {
  test('an untouched log: the fast pass applies and gives the same report as the streaming pass', async () => {
    const { parallel, sequential, clean } = await verifyBoth(() => undefined);
    expect(clean).toMatchObject({ count: N, last: N });
    expect(parallel).toEqual(sequential);
    expect(parallel).toMatchObject({ ok: true, events: N, headPosition: N, verifiedCheckpoint: { seq: 0, position: N } });
  });

  test('an edit inside a range: the fast pass declines, and the streaming pass names the position', async () => {
    const { parallel, sequential, clean } = await verifyBoth((db) => db.prepare("UPDATE events SET data = replace(data, 'reason', 'REASON') WHERE global_position = 17777").run());
    expect(clean).toBeNull();
    expect(parallel).toEqual(sequential);
    expect(parallel.problems[0]).toMatchObject({ kind: 'edited', position: 17777 });
  });

  test('the last event of the first range edited and re-hashed: the second range, which starts from the hash stored at the boundary, sees the broken link', async () => {
    const { parallel, sequential, clean } = await verifyBoth((db) => {
      const r = row(db, BOUNDARY);
      const data = r.data.replace('reason', 'REASON');
      const hash = chainHash(row(db, BOUNDARY - 1).hash.toString('hex'), { position: BOUNDARY, streamId: r.stream_id, streamRevision: r.stream_revision, type: r.type, schemaVersion: r.schema_version, data, metadata: r.metadata, eventId: r.event_id });
      db.prepare('UPDATE events SET data = ?, hash = ? WHERE global_position = ?').run(data, Buffer.from(hash, 'hex'), BOUNDARY);
    });
    expect(clean).toBeNull();
    expect(parallel).toEqual(sequential);
    // Reported where the link breaks (the next event), naming the re-hashed one: see diagnose() in src/audit/verify.ts.
    expect(parallel.problems[0]).toMatchObject({ kind: 'edited', position: BOUNDARY + 1 });
    expect(parallel.problems[0].message).toContain(`or event ${BOUNDARY} was rewritten and re-hashed in place`);
  });

  test('the first event of the second range deleted, and two events swapped across the boundary', async () => {
    const del = await verifyBoth((db) => db.prepare('DELETE FROM events WHERE global_position = ?').run(BOUNDARY + 1));
    expect(del.clean).toBeNull();
    expect(del.parallel).toEqual(del.sequential);
    expect(del.parallel.problems[0]).toMatchObject({ kind: 'deleted', position: BOUNDARY + 1 });

    const swap = await verifyBoth((db) => {
      const a = row(db, BOUNDARY);
      const b = row(db, BOUNDARY + 1);
      const set = db.prepare('UPDATE events SET event_id = ?, stream_id = ?, stream_revision = ?, type = ?, schema_version = ?, data = ?, metadata = ?, hash = ? WHERE global_position = ?');
      db.transaction(() => {
        db.prepare("UPDATE events SET event_id = 'tmp-a', stream_id = 'tmp', stream_revision = -1 WHERE global_position = ?").run(BOUNDARY);
        set.run(a.event_id, a.stream_id, a.stream_revision, a.type, a.schema_version, a.data, a.metadata, a.hash, BOUNDARY + 1);
      })();
      set.run(b.event_id, b.stream_id, b.stream_revision, b.type, b.schema_version, b.data, b.metadata, b.hash, BOUNDARY);
    });
    expect(swap.clean).toBeNull();
    expect(swap.parallel).toEqual(swap.sequential);
    expect(swap.parallel.problems[0]).toMatchObject({ kind: 'reordered', position: BOUNDARY });
  });

  test('a truncated tail: the fast pass verifies what is there, and the signed checkpoint past the end reports the cut', async () => {
    const { parallel, sequential } = await verifyBoth((db) => db.prepare('DELETE FROM events WHERE global_position > ?').run(N - 100));
    expect(parallel).toEqual(sequential);
    expect(parallel.problems[0]).toMatchObject({ kind: 'truncated', position: N - 99 });
  });

  test('REVIEW_LEDGER_VERIFY_THREADS: 1 keeps the streaming pass only; a bad value is refused by name', async () => {
    expect(verifyThreadsFrom({ REVIEW_LEDGER_VERIFY_THREADS: '1' })).toBe(1);
    expect(verifyThreadsFrom({})).toBe(Math.min(4, os.availableParallelism()));
    expect(() => verifyThreadsFrom({ REVIEW_LEDGER_VERIFY_THREADS: 'two' })).toThrow(/REVIEW_LEDGER_VERIFY_THREADS: must be a positive integer/);
  });
});
