import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ChainAppend, ChainMaterial, chainHash, genesisHash } from '../../src/events/chain';
import { SqliteEventStore } from '../../src/events/store/sqlite';
import { verifyStore } from '../../src/audit/checkpointer';
import { ev } from './support';

/** A small deterministic PRNG (mulberry32): the same cases on every run. */
function prng(seed: number): (n: number) => number {
  let a = seed >>> 0;
  return (n) => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
  };
}

// ASCII, Latin-1 (one-byte in V8, two in UTF-8), CJK, a surrogate pair, a lone surrogate, frames past
// the 4,096-entry prefix table.
const PIECES = ['', 'a', 'é', '日本', '\ud83d\ude00', '\ud800', 'x'.repeat(5000), 'ü'.repeat(3000), 'plain-ascii', ':', '12:'];

describe('ChainMaterial: the batch-encoded chain material hashes to exactly chainHash', () => {
  test('random batches (non-ASCII, lone surrogates, long fields, positions up to 2^53) and re-hashing after a rollback', () => {
    const rnd = prng(20);
    const pick = <T>(a: readonly T[]): T => a[rnd(a.length)];
    const text = () => Array.from({ length: rnd(4) }, () => pick(PIECES)).join('') + rnd(1000);
    const m = new ChainMaterial();
    let checked = 0;
    for (let round = 0; round < 400; round++) {
      const appends: ChainAppend[] = Array.from({ length: 1 + rnd(6) }, () => {
        const k = 1 + rnd(3);
        return {
          streamId: text(),
          events: Array.from({ length: k }, () => ({ eventId: text(), type: text(), schemaVersion: pick([0, 1, 12, 123456]) })),
          encoded: Array.from({ length: k }, () => ({ data: JSON.stringify(text()), metadata: text() })),
        };
      });
      const slots = m.prepare(appends);
      expect(slots).not.toBeNull();
      let prev = genesisHash(`w${round}`);
      let position = pick([0, 7, 99, 12345, 2 ** 40, 2 ** 53 - 30]);
      appends.forEach((a, j) => {
        const revision = pick([0, 9, 10, 99999, 2 ** 52]);
        a.events.forEach((e, i) => {
          position++;
          const fields = { position, streamId: a.streamId, streamRevision: revision + i, type: e.type, schemaVersion: e.schemaVersion, data: a.encoded[i].data, metadata: a.encoded[i].metadata, eventId: e.eventId };
          const want = chainHash(prev, fields);
          expect(m.hash(slots![j], i, prev, position, revision + i)).toBe(want);
          prev = want;
          checked++;
        });
      });
      // A refused append's savepoint rollback gives the next ones other positions: hashing an event
      // again with another position and revision (its header rewritten) still matches.
      const j = rnd(appends.length);
      const a = appends[j];
      const again = { position: 5, streamId: a.streamId, streamRevision: 3, type: a.events[0].type, schemaVersion: a.events[0].schemaVersion, data: a.encoded[0].data, metadata: a.encoded[0].metadata, eventId: a.events[0].eventId };
      expect(m.hash(slots![j], 0, prev, 5, 3)).toBe(chainHash(prev, again));
    }
    expect(checked).toBeGreaterThan(1000);
  });

  test('slots of an earlier batch and fields that are not strings are refused, so the caller hashes with chainHash', () => {
    const m = new ChainMaterial();
    const one = (streamId: string): ChainAppend => ({ streamId, events: [{ eventId: 'e', type: 't', schemaVersion: 1 }], encoded: [{ data: '{}', metadata: '{}' }] });
    const first = m.prepare([one('a')])!;
    m.prepare([one('b')]);
    expect(m.hash(first[0], 0, genesisHash('w'), 1, 0)).toBeNull();
    expect(m.prepare([{ ...one('a'), events: [{ eventId: 7 as unknown as string, type: 't', schemaVersion: 1 }] }])).toBeNull();
  });
});

describe('ChainMaterial in the SQLite store: group commits hash exactly as chainHash', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-chain-material-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('one group commit with non-ASCII stream ids, multi-event appends and refusals in between', async () => {
    const store = new SqliteEventStore({ file: path.join(dir, 'w.db'), workspaceId: 'material' });
    try {
      await store.append('strøm-0', 'no_stream', [ev(store.workspaceId, 0)]);
      const outcomes = await Promise.allSettled(
        Array.from({ length: 30 }, (_, i) =>
          i % 7 === 3
            ? store.append('strøm-0', 5, [ev(store.workspaceId, i)]) // wrong expected revision: refused
            : store.append(i % 2 ? `s-${i}` : `strøm-${i}-日本`, 'any', Array.from({ length: 1 + (i % 3) }, (_, k) => ev(store.workspaceId, 100 * i + k))),
        ),
      );
      expect(outcomes.filter((o) => o.status === 'rejected')).toHaveLength(4);
      const rows = await store.readChainPage(0, 1000);
      expect(rows.length).toBe(1 + outcomes.reduce((n, o, i) => n + (o.status === 'fulfilled' ? 1 + (i % 3) : 0), 0));
      rows.forEach((r, i) => expect(r.hash).toBe(chainHash(i === 0 ? genesisHash(store.workspaceId) : rows[i - 1].hash!, r)));
      expect(await verifyStore(store)).toMatchObject({ ok: true, events: rows.length });
    } finally {
      await store.close();
    }
  });
});
