import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { chainHash } from '../../src/events/chain';
import { AuditCheckpointer, AuditableStore, readCheckpointList, verifyStore, writeCheckpoint } from '../../src/audit/checkpointer';
import { AuditKey, generateAuditKey } from '../../src/audit/keys';
import { AuditReceipt, receiptOf } from '../../src/audit/receipt';
import type { VerifyReport, WitnessInput } from '../../src/audit/verify';
import { readWitness, witnessFile } from '../../src/audit/witness';
import { Backdoor, ev } from './support';

const NOW = new Date('2026-03-01T12:00:00.000Z');

/**
 * Receipts and the witness directory against the two attacks plain `verify` cannot see (issue 37), on
 * each chained adapter: the log is written through the store and signed twice — checkpoint #0 at 30,
 * #1 at 40, the receipt of #1 kept by a verifier and both appended to a witness directory — then the
 * tables are changed directly, as someone with write access to the database (not to the witness) would.
 */
export function witnessSuite(name: string, backdoor: () => Promise<Backdoor>): void {
  describe(`receipts and the witness: ${name}`, () => {
    let door: Backdoor;
    let key: AuditKey;
    let witnessDir: string;
    /** The receipt of checkpoint #1 (position 40), as `audit checkpoint --out` writes it. */
    let receipt: AuditReceipt;

    const append = async (store: AuditableStore, from: number, to: number) => {
      for (let i = from; i < to; i++) await store.append(`s-${i % 3}`, 'any', [ev(door.workspaceId, i)]);
    };

    beforeEach(async () => {
      door = await backdoor();
      key = generateAuditKey().key;
      witnessDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-witness-'));
      const store = await door.open();
      await append(store, 0, 30);
      expect(await writeCheckpoint(store, key, NOW, { witnessDir })).toMatchObject({ seq: 0, kind: 'genesis', position: 30 });
      await append(store, 30, 40);
      const cp = await writeCheckpoint(store, key, NOW, { witnessDir });
      expect(cp).toMatchObject({ seq: 1, position: 40 });
      receipt = receiptOf(cp!, key.publicKey);
      await append(store, 40, 45);
      await store.close();
    });
    afterEach(async () => {
      await door.close();
      fs.rmSync(witnessDir, { recursive: true, force: true });
    });

    const verify = async (options: { witnesses?: WitnessInput[]; witnessDir?: string } = {}): Promise<VerifyReport> => {
      const store = await door.open();
      try {
        return await verifyStore(store, key.publicKey, options);
      } finally {
        await store.close();
      }
    };
    const withReceipt = () => verify({ witnesses: [{ source: 'receipt r1.json', receipts: [receipt] }] });
    const withWitnessDir = () => verify({ witnessDir });
    const kinds = (r: VerifyReport) => r.problems.map((p) => [p.kind, p.position]);

    test('every signed checkpoint is appended to the witness file as a receipt; an untouched log verifies against it and against the kept receipt', async () => {
      const held = readWitness(witnessDir, door.workspaceId);
      expect(held.map((r) => [r.format, r.seq, r.position, r.keyId, r.signerPublicKey])).toEqual([
        ['review-ledger-audit-receipt/v1', 0, 30, key.keyId, key.publicKey],
        ['review-ledger-audit-receipt/v1', 1, 40, key.keyId, key.publicKey],
      ]);
      expect(held[1]).toEqual(receipt);
      expect(fs.readFileSync(witnessFile(witnessDir, door.workspaceId), 'utf8').split('\n')).toHaveLength(3);
      const r = await withWitnessDir();
      expect(r).toMatchObject({ ok: true, problems: [], witnesses: [{ receipts: 2, latest: { seq: 1, position: 40 }, ok: true }] });
      expect(await withReceipt()).toMatchObject({ ok: true, witnesses: [{ source: 'receipt r1.json', receipts: 1, ok: true }] });
    });

    test('(a) the newest events and every checkpoint deleted with plain SQL: plain verify passes, the earlier receipt and the witness directory fail it', async () => {
      await door.truncateFrom(36);
      await door.clearCheckpoints();
      const plain = await verify();
      expect(plain).toMatchObject({ ok: true, headPosition: 35, checkpoints: 0, verifiedCheckpoint: null, problems: [] });

      const r = await withReceipt();
      expect(r.ok).toBe(false);
      expect(kinds(r)).toEqual([['truncated', 36], ['checkpoint_missing', 40]]);
      expect(r.problems[0].message).toBe(`position 36: the log ends at 35, but receipt r1.json holds checkpoint #1 (position 40, signed ${NOW.toISOString()}) — events 36..40 were removed after it was signed`);
      expect(r.problems[1].message).toContain('is missing from the store, which holds no checkpoint — signed checkpoints were deleted');
      expect(r.witnesses).toEqual([{ source: 'receipt r1.json', receipts: 1, latest: { seq: 1, position: 40, time: NOW.toISOString() }, ok: false }]);

      const d = await withWitnessDir();
      expect(d.ok).toBe(false);
      // #0 (position 30) is still in the log but gone from the checkpoints; #1 lies past the end.
      expect(kinds(d)).toEqual([['checkpoint_missing', 30], ['truncated', 36]]);
      expect(d.problems[0].message).toContain('(and 1 later receipt(s) of witness');
    });

    test('(b) a signed event edited, the tail re-hashed and the newest checkpoint deleted: plain verify passes, the earlier receipt and the witness directory fail it', async () => {
      const row = await door.row(35);
      await door.setData(35, row.data.replace('reason 34', 'reason XXXIV'));
      let prev = (await door.row(34)).hash!;
      for (let p = 35; p <= 45; p++) {
        const hash = chainHash(prev, await door.row(p));
        await door.setHash(p, hash);
        prev = hash;
      }
      await door.removeCheckpointsFrom(1);
      const plain = await verify();
      expect(plain).toMatchObject({ ok: true, headPosition: 45, checkpoints: 1, verifiedCheckpoint: { seq: 0, position: 30 }, problems: [] });

      const r = await withReceipt();
      expect(r.ok).toBe(false);
      expect(kinds(r)).toEqual([['checkpoint_missing', 40], ['edited', 40]]);
      expect(r.problems.find((p) => p.kind === 'edited')!.message).toMatch(
        new RegExp(`^position 40: receipt r1\\.json holds checkpoint #1 \\(position 40, signed ${NOW.toISOString().replace(/\./g, '\\.')}\\) with chain hash ${receipt.headHash.slice(0, 16)}…, the log now has [0-9a-f]{16}… there — events at or before 40 were rewritten \\(and re-hashed\\) after it was signed$`),
      );

      const d = await withWitnessDir();
      expect(d.ok).toBe(false);
      expect(kinds(d)).toEqual([['checkpoint_missing', 40], ['edited', 40]]);
    });

    test('the checkpointer refuses to sign over (a) or (b), says so once and in its status, and never throws from its pass', async () => {
      const errors: string[] = [];
      const run = async () => {
        const store = await door.open();
        try {
          const cp = new AuditCheckpointer(async () => [store], () => key, () => NOW, { everyEvents: 1, everySeconds: 60, tickMs: 1000 }, (e) => errors.push((e as Error).message), witnessDir);
          await cp.tick();
          await cp.tick();
          return { status: cp.status(), checkpoints: await readCheckpointList(store) };
        } finally {
          await store.close();
        }
      };
      // Untouched: it signs the 5 new events, and the witness grows.
      const ok = await run();
      expect(ok.status).toEqual({ status: 'ok', witness: true, refused: [] });
      expect(ok.checkpoints.map((c) => c.position)).toEqual([30, 40, 45]);
      expect(errors).toEqual([]);
      expect(readWitness(witnessDir, door.workspaceId)).toHaveLength(3);

      // The newest checkpoints deleted: refused, so nothing signed now would re-anchor a rewritten tail.
      await door.removeCheckpointsFrom(1);
      const b = await run();
      expect(b.checkpoints.map((c) => c.position)).toEqual([30]);
      expect(b.status.refused).toEqual([{ workspace: door.workspaceId, reason: expect.stringContaining("the witness holds checkpoint #2 at position 45"), since: NOW.toISOString() }]);
      expect(b.status.refused[0].reason).toContain("but the store's checkpoints end at #0: checkpoints were deleted");
      expect(errors).toHaveLength(1); // two passes, one message
      expect(errors[0]).toMatch(/^workspace \S+: not signing — the witness holds checkpoint #2/);

      // One older checkpoint deleted from the middle: refused too, naming it.
      await door.removeCheckpointsFrom(0);
      await door.addCheckpoint(1, JSON.stringify(ok.checkpoints[1]));
      await door.addCheckpoint(2, JSON.stringify(ok.checkpoints[2]));
      const more = await door.open();
      await append(more, 45, 46); // the head moves: a checkpoint is due
      await more.close();
      const gap = await run();
      expect(gap.checkpoints.map((c) => c.seq)).toEqual([1, 2]);
      expect(gap.status.refused[0].reason).toContain("but the store's checkpoint #0 is missing: checkpoints were deleted");

      // (a): the tail cut and every checkpoint gone: no new genesis over the shorter log either.
      await door.truncateFrom(36);
      await door.clearCheckpoints();
      const a = await run();
      expect(a.checkpoints).toEqual([]);
      expect(a.status.refused[0].reason).toContain("the store's checkpoints are gone");
      expect(readWitness(witnessDir, door.workspaceId)).toHaveLength(3);
    });

    test('a receipt whose signature does not hold, or of another workspace, fails verify by name', async () => {
      const forged = { ...receipt, headHash: 'a'.repeat(64) };
      const r = await verify({ witnesses: [{ source: 'receipt forged.json', receipts: [forged] }] });
      expect(r.ok).toBe(false);
      expect(r.problems).toEqual([expect.objectContaining({ kind: 'bad_receipt', position: 40, message: `receipt forged.json: checkpoint #1 (position 40, signed ${NOW.toISOString()}) is not validly signed by the key it names (${key.keyId})` })]);
      const stranger = await verify({ witnesses: [{ source: 'receipt other.json', receipts: [{ ...receipt, workspace: 'elsewhere' }] }] });
      expect(stranger.problems[0]).toMatchObject({ kind: 'bad_receipt', message: expect.stringContaining('belongs to workspace "elsewhere"') });
    });
  });
}
