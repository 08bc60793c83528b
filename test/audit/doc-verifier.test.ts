import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { writeCheckpoint } from '../../src/audit/checkpointer';
import { CheckpointBody, checkpointDigest, keyIdOf, publicKeyDer, signBody } from '../../src/audit/checkpoint';
import { AuditExport, verifyAuditExport, writeAuditExport } from '../../src/audit/export';
import { generateAuditKey } from '../../src/audit/keys';
import { SqliteEventStore } from '../../src/stores/sqlite/sqlite-event-store';
import { chainHash, genesisHash } from '../../src/events/chain';
import { AuditReceipt } from '../../src/audit/receipt';
import { ev } from './support';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../..');

/** The verifier exactly as docs/audit.md prints it, between its markers. */
function verifierFromDocs(): string {
  const doc = fs.readFileSync(path.join(ROOT, 'docs/audit.md'), 'utf8');
  const block = /<!-- verifier:start -->\s*```js\n([\s\S]*?)```\s*<!-- verifier:end -->/.exec(doc);
  if (!block) throw new Error('docs/audit.md: no verifier block between <!-- verifier:start --> and <!-- verifier:end -->');
  return block[1];
}

describe('the independent verifier in docs/audit.md, run as printed against real exports', () => {
  let dir: string;
  let script: string;
  let exported: AuditExport;
  const key = generateAuditKey().key;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-docverify-'));
    script = path.join(dir, 'verify-audit.js');
    fs.writeFileSync(script, verifierFromDocs());
    const store = new SqliteEventStore({ file: path.join(dir, 'ws', 'workspace.db'), workspaceId: 'docs' });
    for (let i = 0; i < 12; i++) await store.append(`s-${i % 4}`, 'any', [ev('docs', i), ev('docs', 100 + i)]);
    await writeCheckpoint(store, key, new Date('2026-03-01T00:00:00Z'));
    await store.append('s-late', 'no_stream', [ev('docs', 999)]);
    await writeCheckpoint(store, key, new Date('2026-03-01T00:01:00Z'));
    await writeAuditExport(store, key, path.join(dir, 'audit.json'), new Date());
    await store.close();
    exported = JSON.parse(fs.readFileSync(path.join(dir, 'audit.json'), 'utf8'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** Writes a (possibly tampered) copy of the export and runs the docs' verifier on it (with receipt files kept from earlier). */
  async function check(doc: AuditExport, trusted?: string, receipts: unknown[] = []): Promise<{ code: number; out: string }> {
    const file = path.join(dir, `case-${Math.random().toString(36).slice(2)}.json`);
    fs.writeFileSync(file, JSON.stringify(doc));
    const kept = receipts.map((r, i) => {
      const f = path.join(dir, `receipt-${i}-${Math.random().toString(36).slice(2)}.json`);
      fs.writeFileSync(f, JSON.stringify(r, null, 2));
      return f;
    });
    try {
      const { stdout } = await run(process.execPath, [script, file, ...(trusted || kept.length ? [trusted ?? '-'] : []), ...kept], { encoding: 'utf8' });
      return { code: 0, out: stdout };
    } catch (err) {
      return { code: (err as { code: number }).code, out: (err as { stdout: string }).stdout };
    }
  }
  const copy = (): AuditExport => JSON.parse(JSON.stringify(exported));

  test('an untouched export verifies, and the project verifier agrees', async () => {
    expect(exported.events).toHaveLength(25);
    expect(exported.publicKey).toBe(key.publicKey);
    expect(await check(exported, key.publicKey)).toEqual({ code: 0, out: 'OK 25 events, signed checkpoints cover 1..25\n' });
    expect(await verifyAuditExport(exported, key.publicKey)).toMatchObject({ ok: true, verifiedCheckpoint: { seq: 1, position: 25 } });
  });

  test('a file of export format v1 (events also carried prevHash) still verifies with the project verifier, and an edit in it is still found', async () => {
    expect(exported.format).toBe('review-ledger-audit-export/v2');
    expect(exported.events[0]).not.toHaveProperty('prevHash');
    const v1 = { ...copy(), format: 'review-ledger-audit-export/v1' as const };
    v1.events = v1.events.map((e, i) => ({ ...e, prevHash: i === 0 ? genesisHash('docs') : v1.events[i - 1].hash }));
    expect(await verifyAuditExport(v1, key.publicKey)).toMatchObject({ ok: true, verifiedCheckpoint: { seq: 1, position: 25 } });
    v1.events[10].data = v1.events[10].data.replace('reason', 'REASON');
    expect((await verifyAuditExport(v1, key.publicKey)).problems[0]).toMatchObject({ position: 11, kind: 'edited' });
  });

  test('an edited event is refused at its position', async () => {
    const doc = copy();
    doc.events[6].data = doc.events[6].data.replace('reason', 'REASON');
    expect(await check(doc)).toEqual({ code: 1, out: 'BROKEN position 7: does not match the chain\n' });
    expect((await verifyAuditExport(doc)).problems[0]).toMatchObject({ position: 7, kind: 'edited' });
  });

  test('a deleted event is refused at its position', async () => {
    const doc = copy();
    doc.events.splice(3, 1);
    expect(await check(doc)).toEqual({ code: 1, out: 'BROKEN position 4: missing (the next stored event is at 5)\n' });
  });

  test('a truncated tail is refused against the checkpoint that covered it', async () => {
    const doc = copy();
    doc.events.length = 20;
    expect(await check(doc)).toEqual({ code: 1, out: 'BROKEN position 21: truncated — checkpoint #0 signed position 24\n' });
  });

  test('a checkpoint forged with another key is refused, and so is a file whose key is not the trusted one', async () => {
    const doc = copy();
    const other = generateKeyPairSync('ed25519');
    const otherKey = publicKeyDer(other.publicKey);
    const body: CheckpointBody = { v: 1, kind: 'checkpoint', workspace: 'docs', seq: 2, position: 25, headHash: doc.events[24].hash!, time: '2026-03-02T00:00:00.000Z', keyId: keyIdOf(otherKey), prev: checkpointDigest(doc.checkpoints[1]) };
    doc.checkpoints.push({ ...body, sig: signBody(body, other.privateKey) });
    expect(await check(doc)).toEqual({ code: 1, out: 'BROKEN checkpoint #2 (position 25): forged or out of order\n' });

    // Everything re-signed by another key, that key put in the file: only the trusted key tells.
    const resigned = copy();
    const fake = generateAuditKey().key;
    let link: string | null = null;
    resigned.checkpoints = resigned.checkpoints.map((c) => {
      const { sig: _sig, ...rest } = c;
      const b: CheckpointBody = { ...rest, keyId: fake.keyId, prev: link, ...(c.kind === 'genesis' ? { publicKey: fake.publicKey } : {}) };
      const cp = { ...b, sig: signBody(b, fake.privateKey) };
      link = checkpointDigest(cp);
      return cp;
    });
    resigned.publicKey = fake.publicKey;
    expect((await check(resigned)).code).toBe(0);
    expect(await check(resigned, key.publicKey)).toEqual({ code: 1, out: 'BROKEN the checkpoints are not signed by the trusted key\n' });
  });

  describe('receipts kept from earlier', () => {
    /** The receipt of the export's last checkpoint (#1 at 25), as a verifier kept it. */
    const receipt = (): AuditReceipt => copy().receipt!;
    /** The file as the verifier would read it: `receipt` is the path the docs' script prints. */
    const receiptName = async (doc: AuditExport, r: unknown): Promise<string> => (await check(doc, key.publicKey, [r])).out;

    test('the export carries the receipt of its last checkpoint; an untouched export holds it, and so does an earlier export given whole', async () => {
      expect(exported.receipt).toEqual({ format: 'review-ledger-audit-receipt/v1', ...exported.checkpoints[1], signerPublicKey: key.publicKey });
      expect(await check(exported, key.publicKey, [receipt(), copy()])).toEqual({ code: 0, out: 'OK 25 events, signed checkpoints cover 1..25, 2 receipt(s) hold\n' });
    });

    test('(a) the newest events and every checkpoint removed: the export alone verifies, the kept receipt fails it', async () => {
      const doc = copy();
      doc.events.length = 20;
      doc.checkpoints = [];
      expect(await check(doc)).toEqual({ code: 0, out: 'OK 20 events, signed checkpoints cover 1..0\n' });
      expect(await check(doc, key.publicKey, [receipt()])).toEqual({ code: 1, out: expect.stringMatching(/^BROKEN receipt \S+ \(checkpoint #1, position 25\): its checkpoint is missing here — checkpoints were deleted or rewritten\n$/) });
      expect((await verifyAuditExport(doc, key.publicKey, [{ source: 'receipt', receipts: [receipt()] }])).problems.map((p) => [p.kind, p.position])).toEqual([['truncated', 21], ['checkpoint_missing', 25]]);
    });

    test('(b) a signed event edited, the tail re-hashed, the newest checkpoint dropped: the export alone verifies, the kept receipt fails it', async () => {
      const doc = copy();
      // Event 25 is the one only checkpoint #1 signed (#0 is at 24).
      doc.events[24].data = doc.events[24].data.replace('reason', 'REASON');
      doc.events[24].hash = chainHash(doc.events[23].hash!, doc.events[24]);
      doc.checkpoints.length = 1;
      expect(await check(doc, key.publicKey)).toEqual({ code: 0, out: 'OK 25 events, signed checkpoints cover 1..24\n' });
      expect((await check(doc, key.publicKey, [receipt()])).out).toMatch(/^BROKEN receipt \S+ \(checkpoint #1, position 25\): its checkpoint is missing here/);
      // Even with the checkpoint put back (it is public), the rewritten tail no longer has the signed hash.
      doc.checkpoints = copy().checkpoints;
      expect(await check(doc)).toEqual({ code: 1, out: "BROKEN checkpoint #1: the log's hash at position 25 is not the one signed\n" });
      expect((await verifyAuditExport(doc, key.publicKey, [{ source: 'receipt', receipts: [receipt()] }])).problems.map((p) => [p.kind, p.position, p.witness])).toEqual([
        ['edited', 25, undefined],
        ['edited', 25, 'receipt'],
      ]);
    });

    test('a receipt that is not validly signed, or of another workspace, is refused', async () => {
      expect(await receiptName(exported, { ...receipt(), position: 24 })).toMatch(/^BROKEN receipt \S+ \(checkpoint #1, position 24\): not a validly signed receipt\n$/);
      expect(await receiptName(exported, { ...receipt(), workspace: 'other' })).toMatch(/: for workspace other\n$/);
    });
  });
});
