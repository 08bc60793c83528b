// The audit read's chain status (auditChainStatus) under appends: after one whole verification it verifies
// only what was added since — rows past its tip and new checkpoints — and reads the whole log again when the
// store says rows may have been edited behind its back, when something past the tip does not hold, and at
// least every 30 s. Every answer it gives equals what a whole verification of the same log says.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { auditChainStatus } from '../../src/audit/status';
import { AuditableStore, readCheckpointList, verifyStore, writeCheckpoint } from '../../src/audit/checkpointer';
import { generateAuditKey } from '../../src/audit/keys';
import type { Checkpoint } from '../../src/audit/checkpoint';
import { PostgresBackend } from '../../src/stores/postgres/backend';
import type { WorkspaceHandle } from '../../src/workspaces/registry';
import { SlotMap } from '../../src/slots';
import { dropSchema, DATABASE_URL, uniqueSchema, whenPostgres } from '../scale/pg-support';
import { Backdoor, ev, postgresBackdoor, sqliteBackdoor } from './support';

const N = 40;
const T0 = Date.parse('2026-03-01T12:00:00.000Z');
const at = (ms: number): Date => new Date(T0 + ms);

function statusSuite(name: string, backdoor: () => Promise<Backdoor & { dir?: string }>, seesEdits: boolean): void {
  describe(`audit chain status: ${name}`, () => {
    let door: Backdoor & { dir?: string };
    let store: AuditableStore;
    let ws: WorkspaceHandle;
    const key = generateAuditKey().key;
    let appended = 0;

    const append = async (n: number): Promise<void> => {
      for (let i = 0; i < n; i++, appended++) await store.append(`s-${appended % 3}`, 'any', [ev(door.workspaceId, appended)]);
    };
    /** What a whole verification of the same log says, in the status's terms. */
    const whole = async () => {
      const r = await verifyStore(store);
      return { ok: r.ok, headPosition: r.headPosition, firstBroken: r.firstBroken, verifiedCheckpoint: r.verifiedCheckpoint };
    };
    const status = async (ms: number) => {
      const s = await auditChainStatus(ws, at(ms));
      return { ok: s.ok, headPosition: s.headPosition, firstBroken: s.firstBroken, verifiedCheckpoint: s.verifiedCheckpoint };
    };
    /** The `after` of every chain page the status reads while `fn` runs. */
    const pagesRead = async (fn: () => Promise<unknown>): Promise<number[]> => {
      const read = jest.spyOn(store, 'readChainPage');
      try {
        await fn();
        return read.mock.calls.map((c) => c[0]);
      } finally {
        read.mockRestore();
      }
    };

    beforeEach(async () => {
      door = await backdoor();
      store = await door.open();
      appended = 0;
      await append(N);
      await writeCheckpoint(store, key, at(0));
      // No key in the data dir: the status trusts the checkpoint chain's own key, as verifyStore(store) does.
      ws = { id: door.workspaceId, dir: path.join(door.dir ?? '/nonexistent', door.workspaceId), store, cache: new SlotMap() };
    });
    afterEach(async () => {
      await store.close();
      await door.close();
      if (door.dir) fs.rmSync(door.dir, { recursive: true, force: true });
    });

    test('under appends it reads only the rows past its last verification, and answers as a whole verification does', async () => {
      expect(await status(0)).toEqual({ ok: true, headPosition: N, firstBroken: null, verifiedCheckpoint: expect.objectContaining({ seq: 0, position: N }) });
      for (let k = 1; k <= 3; k++) {
        await append(7);
        if (k === 2) await writeCheckpoint(store, key, at(k * 1000));
        const before = N + 7 * (k - 1);
        const reads = await pagesRead(async () => expect(await status(k * 1000)).toEqual(await whole()));
        // whole() reads from 0: only the status's reads are before it.
        expect(reads.slice(0, reads.indexOf(0)).every((after) => after >= before)).toBe(true);
        expect(reads.indexOf(0)).toBeGreaterThan(0);
      }
      expect(await status(4000)).toMatchObject({ ok: true, headPosition: N + 21, verifiedCheckpoint: { seq: 1, position: N + 14 } });
    });

    /** The store's edit mark stands still whatever happens (an edit it cannot see): what is found is found by the checks themselves. */
    const blindMark = () => jest.spyOn(store, 'editMark' as never).mockImplementation((async () => 'unchanged') as never);

    test('a row past its tip that does not chain is found by the next read', async () => {
      blindMark();
      await status(0);
      await append(5);
      const row = await door.row(N + 3);
      await door.setData(N + 3, row.data.replace('reason', 'REASON'));
      expect(await status(1000)).toEqual({ ...(await whole()), ok: false, firstBroken: N + 3 });
    });

    test('a checkpoint verified before and replaced since is found by the next read', async () => {
      blindMark();
      await status(0);
      const [cp] = (await readCheckpointList(store)) as Checkpoint[];
      await door.clearCheckpoints();
      await door.addCheckpoint(0, JSON.stringify({ ...cp, time: '2026-03-01T11:59:59.000Z' }));
      await append(1);
      const s = await auditChainStatus(ws, at(1000));
      expect(s.ok).toBe(false);
      expect(s.problems[0]).toMatchObject({ kind: 'forged_checkpoint', checkpoint: 0 });
    });

    if (!seesEdits)
      test('the edit mark moves once the database counts an update of a stored row', async () => {
        const before = await store.editMark!();
        await append(3);
        expect(await store.editMark!()).toBe(before);
        const row = await door.row(12);
        await door.setData(12, row.data.replace('reason', 'REASON'));
        // A session reports its counts when it ends (or, idle, within seconds).
        await door.close();
        let now = before;
        for (let i = 0; i < 200 && now === before; i++) {
          await new Promise((r) => setTimeout(r, 100));
          now = await store.editMark!();
        }
        expect(now).not.toBe(before);
      });

    if (seesEdits)
      test('an edit of a row verified before, behind the store\'s back, is found by the next read (the edit mark moved)', async () => {
        await status(0);
        const row = await door.row(12);
        await door.setData(12, row.data.replace('reason', 'REASON'));
        await append(1);
        expect(await status(1000)).toMatchObject({ ok: false, firstBroken: 12 });
      });

    test('an edit of a row verified before is found by a whole verification within 30 s even when the store cannot tell', async () => {
      blindMark();
      await status(0);
      const row = await door.row(12);
      await door.setData(12, row.data.replace('reason', 'REASON'));
      await append(1);
      expect(await status(30_001)).toMatchObject({ ok: false, firstBroken: 12 });
      expect(await status(30_002)).toMatchObject({ ok: false, firstBroken: 12 });
    });
  });
}

statusSuite('sqlite', async () => sqliteBackdoor('status'), true);

whenPostgres('audit chain status on postgres', () => {
  const schema = uniqueSchema('rl_status');
  let backend: Promise<PostgresBackend> | null = null;
  let n = 0;
  // Its statistics reach the edit mark a second or more after the edit: not awaited here (the 30 s case covers it).
  statusSuite('postgres', async () => {
    backend ??= PostgresBackend.open({ connectionString: DATABASE_URL, schema, poolSize: 4 });
    return postgresBackdoor(await backend, `status-${++n}`);
  }, false);
  afterAll(async () => {
    if (backend) await (await backend).close();
    await dropSchema(schema);
  });
});
