import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { readCheckpointList, rotateCheckpointKey, verifyStore, writeCheckpoint } from '../../src/audit/checkpointer';
import { Checkpoint, CheckpointBody, signBody } from '../../src/audit/checkpoint';
import { generateAuditKey } from '../../src/audit/keys';
import { AuditReceipt, parseReceipts, receiptOf, receiptSignatureValid } from '../../src/audit/receipt';
import { appendWitness, readLatestWitnessed, readWitness, witnessFile } from '../../src/audit/witness';
import { SqliteEventStore } from '../../src/stores/sqlite/sqlite-event-store';
import { ev } from './support';

const key = generateAuditKey().key;
const receipt = (seq: number): AuditReceipt => {
  const body: CheckpointBody = { v: 1, kind: 'checkpoint', workspace: 'wf', seq, position: 10 * seq, headHash: seq.toString(16).padStart(64, '0'), time: '2026-03-01T00:00:00.000Z', keyId: key.keyId, prev: null };
  const cp: Checkpoint = { ...body, sig: signBody(body, key.privateKey) };
  return receiptOf(cp, key.publicKey);
};

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-witness-file-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('the witness file', () => {
  test('one receipt per line; a last line cut short by a crash is skipped, and the next receipt starts on a line of its own', () => {
    appendWitness(dir, receipt(0));
    const file = witnessFile(dir, 'wf');
    expect(file).toBe(path.join(dir, 'wf.receipts.jsonl'));
    fs.appendFileSync(file, JSON.stringify(receipt(1)).slice(0, 50));
    expect(readWitness(dir, 'wf').map((r) => r.seq)).toEqual([0]);
    expect(readLatestWitnessed(dir, 'wf')?.seq).toBe(0);
    appendWitness(dir, receipt(1));
    expect(readWitness(dir, 'wf').map((r) => r.seq)).toEqual([0, 1]);
    expect(fs.readFileSync(file, 'utf8').split('\n').map((l) => l.slice(0, 10))).toEqual(['{"format":', JSON.stringify(receipt(1)).slice(0, 10), '{"format":', '']);
    expect(receiptSignatureValid(readWitness(dir, 'wf')[1])).toBe(true);
  });

  test('a line in the middle that is not a receipt is refused naming the line; a workspace without a file holds nothing', () => {
    appendWitness(dir, receipt(0));
    fs.appendFileSync(witnessFile(dir, 'wf'), 'not json\n');
    appendWitness(dir, receipt(1));
    expect(() => readWitness(dir, 'wf')).toThrow(expect.objectContaining({ code: 'invalid_receipt', message: expect.stringMatching(/wf\.receipts\.jsonl: line 2 is not JSON/) }));
    expect(readWitness(dir, 'nobody')).toEqual([]);
    expect(readLatestWitnessed(dir, 'nobody')).toBeNull();
  });

  test('the latest receipt is read from the tail of a long file (the highest seq among the last lines)', () => {
    for (let seq = 0; seq < 150; seq++) appendWitness(dir, receipt(seq));
    expect(fs.statSync(witnessFile(dir, 'wf')).size).toBeGreaterThan(64 * 1024);
    expect(readLatestWitnessed(dir, 'wf')).toEqual(receipt(149));
    expect(readWitness(dir, 'wf')).toHaveLength(150);
  });

  test('a receipt file, an export and JSON lines all parse; anything else is refused by name', () => {
    const r = receipt(3);
    expect(parseReceipts(JSON.stringify(r, null, 2), 'r.json')).toEqual([r]);
    expect(parseReceipts(JSON.stringify({ format: 'review-ledger-audit-export/v2', receipt: r, events: [] }), 'e.json')).toEqual([r]);
    expect(parseReceipts(`${JSON.stringify(receipt(1))}\n${JSON.stringify(r)}\n`, 'w.jsonl').map((x) => x.seq)).toEqual([1, 3]);
    expect(() => parseReceipts(JSON.stringify({ format: 'review-ledger-audit-export/v2', events: [] }), 'old.json')).toThrow('old.json: an audit export without a receipt');
    expect(() => parseReceipts(JSON.stringify({ ...r, headHash: 'xyz' }), 'bad.json')).toThrow('bad.json: not an audit receipt (headHash: not 64 lowercase hex digits)');
    expect(() => parseReceipts('', 'empty.json')).toThrow('empty.json: empty, no receipt in it');
  });

  test('a witness that cannot be read refuses signing before anything is stored; one that cannot be appended to is named', async () => {
    const store = new SqliteEventStore({ file: path.join(dir, 'ws', 'workspace.db'), workspaceId: 'wf' });
    try {
      await store.append('s', 'no_stream', [ev('wf', 1)]);
      const notADir = path.join(dir, 'a-file');
      fs.writeFileSync(notADir, '');
      await expect(writeCheckpoint(store, key, new Date('2026-03-01T00:00:00Z'), { witnessDir: notADir })).rejects.toMatchObject({
        code: 'audit_witness_unreadable',
        message: expect.stringContaining(`witness ${path.join(notADir, 'wf.receipts.jsonl')}: ENOTDIR`),
      });
      expect(await readCheckpointList(store)).toEqual([]);
      expect(() => appendWitness(notADir, receipt(0))).toThrow(
        expect.objectContaining({ code: 'audit_witness_unwritable', message: expect.stringContaining(`workspace wf: checkpoint #0 is signed and stored, but the witness ${path.join(notADir, 'wf.receipts.jsonl')} could not be appended to`) }),
      );
    } finally {
      await store.close();
    }
  });

  test('a key rotation is witnessed like any checkpoint (signed by the old key), and the log verifies against the witness across it', async () => {
    const store = new SqliteEventStore({ file: path.join(dir, 'ws', 'workspace.db'), workspaceId: 'wf' });
    try {
      const next = generateAuditKey().key;
      const at = new Date('2026-03-01T00:00:00Z');
      await store.append('s', 'no_stream', [ev('wf', 1)]);
      await writeCheckpoint(store, key, at, { witnessDir: dir });
      await store.append('s', 0, [ev('wf', 2)]);
      await rotateCheckpointKey(store, key, next, at, dir);
      await store.append('s', 1, [ev('wf', 3)]);
      await writeCheckpoint(store, next, at, { witnessDir: dir });
      const held = readWitness(dir, 'wf');
      expect(held.map((r) => [r.seq, r.kind, r.keyId, r.signerPublicKey === key.publicKey])).toEqual([
        [0, 'genesis', key.keyId, true],
        [1, 'key_rotation', key.keyId, true],
        [2, 'checkpoint', next.keyId, false],
      ]);
      expect(held.every(receiptSignatureValid)).toBe(true);
      expect(await verifyStore(store, next.publicKey, { witnessDir: dir })).toMatchObject({ ok: true, witnesses: [{ receipts: 3, ok: true, latest: { seq: 2, position: 3 } }] });
    } finally {
      await store.close();
    }
  });
});
