import { generateKeyPairSync } from 'node:crypto';
import { chainHash } from '../../src/events/chain';
import { AuditableStore, readCheckpointList, verifyStore, writeCheckpoint } from '../../src/audit/checkpointer';
import { Checkpoint, CheckpointBody, checkpointDigest, keyIdOf, publicKeyDer, signBody } from '../../src/audit/checkpoint';
import { AuditKey, generateAuditKey } from '../../src/audit/keys';
import type { VerifyReport } from '../../src/audit/verify';
import { Backdoor, ev } from './support';

const N = 30;
const NOW = new Date('2026-03-01T12:00:00.000Z');

/**
 * The tamper suite both chained adapters run: each case writes a real log through the store, signs a
 * checkpoint at its head, changes the tables directly (as someone with write access to the database
 * would), and expects `verify` to name the kind of change and its first position.
 */
export function tamperSuite(name: string, backdoor: () => Promise<Backdoor>): void {
  describe(`tamper evidence: ${name}`, () => {
    let door: Backdoor;
    let key: AuditKey;

    /** N events over three streams in batches of 1–3, then a checkpoint at the head. */
    beforeEach(async () => {
      door = await backdoor();
      key = generateAuditKey().key;
      const store = await door.open();
      const revs = new Map<string, number>();
      for (let i = 0; i < N; ) {
        const stream = `s-${i % 3}`;
        const size = Math.min(1 + (i % 3), N - i);
        const batch = Array.from({ length: size }, (_, k) => ev(door.workspaceId, i + k));
        await store.append(stream, revs.get(stream) ?? 'no_stream', batch);
        revs.set(stream, (revs.get(stream) ?? -1) + size);
        i += size;
      }
      expect(await writeCheckpoint(store, key, NOW)).toMatchObject({ kind: 'genesis', position: N });
      await store.close();
    });
    afterEach(async () => {
      await door.close();
    });

    const verify = async (trusted = key.publicKey): Promise<VerifyReport> => {
      const store = await door.open();
      try {
        return await verifyStore(store, trusted);
      } finally {
        await store.close();
      }
    };

    test('an untouched log verifies through its signed checkpoint', async () => {
      const r = await verify();
      expect(r).toMatchObject({ ok: true, events: N, headPosition: N, problems: [], verifiedCheckpoint: { seq: 0, position: N } });
    });

    test('editing one event\'s data is found at that position', async () => {
      const row = await door.row(12);
      await door.setData(12, row.data.replace('reason 11', 'reason XI'));
      const r = await verify();
      expect(r.ok).toBe(false);
      expect(r.problems[0]).toMatchObject({ position: 12, kind: 'edited' });
    });

    test('editing one event and re-hashing it is found where its link breaks: the next event still hashes over the old hash', async () => {
      // The hash an event links to is not stored with it (it is the previous row's), so this reads like
      // an edit of event 8: reported there, and the message names event 7 as the other reading.
      const row = await door.row(7);
      const data = row.data.replace('reason 6', 'reason VI');
      await door.setData(7, data);
      await door.setHash(7, chainHash((await door.row(6)).hash!, { ...row, data }));
      const r = await verify();
      expect(r.problems[0]).toMatchObject({ position: 8, kind: 'edited' });
      expect(r.problems[0].message).toContain('or event 7 was rewritten and re-hashed in place');
    });

    test('rewriting the whole chain after an edit is caught by the signed checkpoint', async () => {
      const row = await door.row(5);
      await door.setData(5, row.data.replace('reason 4', 'reason IV'));
      let prev = (await door.row(4)).hash!;
      for (let p = 5; p <= N; p++) {
        const r = await door.row(p);
        const hash = chainHash(prev, r);
        await door.setHash(p, hash);
        prev = hash;
      }
      const r = await verify();
      expect(r.ok).toBe(false);
      expect(r.problems[0]).toMatchObject({ position: 1, kind: 'edited', checkpoint: 0 });
      expect(r.problems[0].message).toContain(`positions 1..${N}`);
    });

    test('deleting one event is found at its position (left as a gap, or with later positions renumbered)', async () => {
      await door.remove(9);
      expect((await verify()).problems[0]).toMatchObject({ position: 9, kind: 'deleted' });
      await door.shift(10, -1);
      expect((await verify()).problems[0]).toMatchObject({ position: 9, kind: 'deleted' });
    });

    test('inserting one event is found at its position, even with a correctly linked hash', async () => {
      const before = await door.row(14);
      await door.shift(15, 1);
      const forged = { ...(await door.row(16)), position: 15, eventId: '01900000-0000-7000-8000-000000000015', streamId: 'forged', streamRevision: 0, data: '{"forged":true}' };
      forged.hash = chainHash(before.hash!, forged);
      await door.insert(forged);
      const r = await verify();
      expect(r.problems[0]).toMatchObject({ position: 15, kind: 'inserted' });
    });

    test('inserting one event with a made-up hash is found at its position', async () => {
      await door.shift(20, 1);
      await door.insert({ ...(await door.row(21)), position: 20, eventId: '01900000-0000-7000-8000-000000000020', streamId: 'forged', streamRevision: 0, hash: 'f'.repeat(64) });
      expect((await verify()).problems[0]).toMatchObject({ position: 20, kind: 'inserted' });
    });

    test('swapping two events is found at the first of them (adjacent or apart)', async () => {
      await door.swap(4, 5);
      expect((await verify()).problems[0]).toMatchObject({ position: 4, kind: 'reordered' });
      await door.swap(4, 5);
      expect((await verify()).ok).toBe(true);
      await door.swap(8, 17);
      const r = await verify();
      expect(r.problems[0]).toMatchObject({ position: 8, kind: 'reordered' });
      expect(r.problems[0].message).toContain('recorded at position 17');
    });

    test('truncating the tail is found where the log now ends', async () => {
      await door.truncateFrom(N - 2);
      const r = await verify();
      expect(r.problems[0]).toMatchObject({ position: N - 2, kind: 'truncated', checkpoint: 0 });
    });

    test('a checkpoint forged with another key is refused at its position', async () => {
      const store = await door.open();
      await store.append('s-extra', 'no_stream', [ev(door.workspaceId, 99)]);
      const [genesis] = await readCheckpointList(store);
      await store.close();
      const other = generateKeyPairSync('ed25519');
      const otherPublic = publicKeyDer(other.publicKey);
      const body: CheckpointBody = { v: 1, kind: 'checkpoint', workspace: door.workspaceId, seq: 1, position: N + 1, headHash: (await door.row(N + 1)).hash!, time: NOW.toISOString(), keyId: keyIdOf(otherPublic), prev: checkpointDigest(genesis) };
      await door.addCheckpoint(1, JSON.stringify({ ...body, sig: signBody(body, other.privateKey) } satisfies Checkpoint));
      const r = await verify();
      expect(r.problems[0]).toMatchObject({ position: N + 1, kind: 'forged_checkpoint', checkpoint: 1 });
      expect(r.verifiedCheckpoint).toMatchObject({ seq: 0 });

      // A whole checkpoint chain re-signed by another key is refused against the server's key.
      await door.clearCheckpoints();
      const s2 = await door.open();
      await writeCheckpoint(s2, generateAuditKey().key, NOW);
      await s2.close();
      expect((await verify()).problems[0]).toMatchObject({ kind: 'forged_checkpoint', checkpoint: 0 });
    });
  });
}

export type { AuditableStore };
