import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AuditCheckpointer, checkpointScheduleFrom, readCheckpointList, rotateCheckpointKey, verifyStore, writeCheckpoint } from '../../src/audit/checkpointer';
import { AuditKeyring, generateAuditKey } from '../../src/audit/keys';
import { SqliteEventStore } from '../../src/stores/sqlite/sqlite-event-store';
import { ev } from './support';

let dir: string;
let store: SqliteEventStore;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-cp-'));
  store = new SqliteEventStore({ file: path.join(dir, 'ws', 'workspace.db'), workspaceId: 'cp' });
});
afterEach(async () => {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});
const append = async (n: number) => {
  for (let i = 0; i < n; i++) await store.append(`s-${i}-${Math.random()}`, 'no_stream', [ev('cp', i)]);
};

describe('signed checkpoints', () => {
  test('the schedule: a checkpoint once the head is N events past the last one, or T seconds passed and the head moved', async () => {
    let now = new Date('2026-03-01T00:00:00Z');
    const key = generateAuditKey().key;
    const cp = new AuditCheckpointer(async () => [store], () => key, () => now, { everyEvents: 5, everySeconds: 60, tickMs: 1000 });
    await append(2);
    await cp.tick();
    expect((await readCheckpointList(store)).map((c) => [c.kind, c.position])).toEqual([['genesis', 2]]);
    await append(4); // 4 past the last: not yet
    await cp.tick();
    expect(await readCheckpointList(store)).toHaveLength(1);
    await append(1); // 5 past
    await cp.tick();
    expect((await readCheckpointList(store)).map((c) => c.position)).toEqual([2, 7]);
    now = new Date('2026-03-01T00:02:00Z'); // time passed, but the head did not move
    await cp.tick();
    expect(await readCheckpointList(store)).toHaveLength(2);
    await append(1);
    await cp.tick();
    expect((await readCheckpointList(store)).map((c) => c.position)).toEqual([2, 7, 8]);
    expect(await verifyStore(store, key.publicKey)).toMatchObject({ ok: true, verifiedCheckpoint: { seq: 2, position: 8 } });
  });

  test('stop({ final: true }) signs a head that moved since the last checkpoint even when the schedule is not due; plain stop() does not', async () => {
    const now = new Date('2026-03-01T00:00:00Z');
    const key = generateAuditKey().key;
    const cp = new AuditCheckpointer(async () => [store], () => key, () => now, { everyEvents: 1000, everySeconds: 3600, tickMs: 1000 });
    await append(2);
    await cp.tick();
    await append(3); // 3 past the last checkpoint: not due for an hour or 1000 events
    await cp.tick();
    await cp.stop();
    expect((await readCheckpointList(store)).map((c) => c.position)).toEqual([2]);
    await cp.stop({ final: true });
    expect((await readCheckpointList(store)).map((c) => c.position)).toEqual([2, 5]);
    await cp.stop({ final: true }); // nothing moved: nothing more to sign
    expect(await readCheckpointList(store)).toHaveLength(2);
    expect(await verifyStore(store, key.publicKey)).toMatchObject({ ok: true, verifiedCheckpoint: { seq: 1, position: 5 } });
  });

  test('the schedule comes from REVIEW_LEDGER_CHECKPOINT_EVENTS / _SECONDS, and a bad value is refused by name', () => {
    expect(checkpointScheduleFrom({})).toEqual({ everyEvents: 1000, everySeconds: 60, tickMs: 1000 });
    expect(checkpointScheduleFrom({ REVIEW_LEDGER_CHECKPOINT_EVENTS: '50', REVIEW_LEDGER_CHECKPOINT_SECONDS: '0.5' })).toEqual({ everyEvents: 50, everySeconds: 0.5, tickMs: 500 });
    expect(() => checkpointScheduleFrom({ REVIEW_LEDGER_CHECKPOINT_EVENTS: '-1' })).toThrow(/REVIEW_LEDGER_CHECKPOINT_EVENTS: must be a positive number/);
  });

  test('two writers racing for the same checkpoint: one wins, the chain of checkpoints stays linear', async () => {
    const key = generateAuditKey().key;
    await append(3);
    const existing = await readCheckpointList(store);
    const [a, b] = await Promise.all([writeCheckpoint(store, key, new Date(), { existing }), writeCheckpoint(store, key, new Date(), { existing })]);
    expect([a, b].filter(Boolean)).toHaveLength(1);
    expect((await verifyStore(store, key.publicKey)).ok).toBe(true);
  });

  test('key rotation is a checkpoint signed by the old and the new key; afterwards only the new key verifies the chain', async () => {
    const ring = new AuditKeyring(dir);
    const old = ring.current()!;
    const serverRing = new AuditKeyring(dir); // a running server's view of the same data dir
    expect(serverRing.current()!.keyId).toBe(old.keyId);
    expect(fs.statSync(ring.file).mode & 0o777).toBe(0o600);
    await append(3);
    await writeCheckpoint(store, old, new Date());
    await append(2);
    const next = ring.nextKey();
    const rotation = await rotateCheckpointKey(store, old, next, new Date());
    expect(rotation).toMatchObject({ kind: 'key_rotation', seq: 1, position: 5, keyId: old.keyId, newKeyId: next.keyId });
    expect(await rotateCheckpointKey(store, old, next, new Date())).toBeNull(); // a resumed rotation leaves it alone
    ring.promoteNext();
    expect(ring.current()!.keyId).toBe(next.keyId);
    expect(serverRing.current()!.keyId).toBe(next.keyId); // picked up without a restart
    expect(fs.statSync(ring.file).mode & 0o777).toBe(0o600);
    await append(1);
    expect(await writeCheckpoint(store, ring.current()!, new Date())).toMatchObject({ seq: 2, keyId: next.keyId });
    expect(await verifyStore(store, next.publicKey)).toMatchObject({ ok: true, keyId: next.keyId, verifiedCheckpoint: { seq: 2, position: 6 } });
    // The old key signing after the hand-over is refused by the writer and by the verifier.
    await expect(writeCheckpoint(store, old, new Date(), { force: true })).rejects.toMatchObject({ code: 'audit_key_mismatch' });
    expect((await verifyStore(store, old.publicKey)).problems[0]).toMatchObject({ kind: 'forged_checkpoint' });
  });
});

describe('the checkpointer through a store outage', () => {
  test('a pass whose workspace list or store fails never rejects: the failure is logged once, status() is degraded with the reason, and the next pass that works signs and clears it', async () => {
    const now = new Date('2026-03-01T00:00:00Z');
    const key = generateAuditKey().key;
    let down = true;
    const logged: unknown[] = [];
    const outage = Object.assign(new Error('catalogue: connect ECONNRESET 127.0.0.1:5432'), { code: 'store_unavailable' });
    const cp = new AuditCheckpointer(
      async () => {
        if (down) throw outage;
        return [store];
      },
      () => key,
      () => now,
      { everyEvents: 1, everySeconds: 60, tickMs: 1000 },
      (err) => logged.push(err),
    );
    await append(2);
    await expect(cp.tick()).resolves.toBeUndefined();
    await expect(cp.tick()).resolves.toBeUndefined();
    expect(logged).toEqual([outage]); // once per outage, not once a tick
    expect(cp.status()).toMatchObject({ status: 'degraded', reason: 'audit checkpoints not signed: workspace list: catalogue: connect ECONNRESET 127.0.0.1:5432', failures: [{ workspace: '*', code: 'store_unavailable' }] });
    expect(await readCheckpointList(store)).toEqual([]);
    down = false;
    await cp.tick();
    expect(cp.status()).toEqual({ status: 'ok', witness: false, refused: [] });
    expect((await readCheckpointList(store)).map((c) => [c.kind, c.position])).toEqual([['genesis', 2]]);
  });
});
