import Database from 'better-sqlite3';
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { chainHash } from '../../src/events/chain';
import { SqliteEventStore } from '../../src/stores/sqlite/sqlite-event-store';
import { loadOperatorConfig } from '../../src/operator-config';
import { ev } from './support';

const run = promisify(execFile);
const BIN = path.resolve(__dirname, '../../bin/review-ledger.js');

// The real CLI, spawned a dozen times: slow on a loaded machine.
jest.setTimeout(180_000);

let dataDir: string;
let witnessDir: string;
beforeAll(() => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-cli-witness-'));
  witnessDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-cli-witness-dir-'));
});
afterAll(() => {
  fs.rmSync(dataDir, { recursive: true, force: true });
  fs.rmSync(witnessDir, { recursive: true, force: true });
});

/** The CLI as users run it; `witness`: with REVIEW_LEDGER_AUDIT_WITNESS_DIR set to the test's witness directory. */
async function cli(witness: boolean, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, REVIEW_LEDGER_FROM_SOURCE: '1' };
  delete env.REVIEW_LEDGER_AUDIT_WITNESS_DIR;
  if (witness) env.REVIEW_LEDGER_AUDIT_WITNESS_DIR = witnessDir;
  try {
    const { stdout, stderr } = await run(process.execPath, [BIN, '--data-dir', dataDir, ...args], { env, encoding: 'utf8' });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** Events from..to-1 appended to a workspace written through the store (as the server would). */
async function appendEvents(ws: string, from: number, to: number): Promise<void> {
  const store = new SqliteEventStore({ file: path.join(dataDir, ws, 'workspace.db'), workspaceId: ws });
  for (let i = from; i < to; i++) await store.append(`s-${i % 3}`, 'any', [ev(ws, i)]);
  await store.close();
}

const sql = (ws: string, fn: (db: Database.Database) => void): void => {
  const db = new Database(path.join(dataDir, ws, 'workspace.db'));
  try {
    fn(db);
  } finally {
    db.close();
  }
};

describe('audit checkpoint --out, audit export and audit verify --witness, through the CLI', () => {
  test('(a) truncation + every checkpoint deleted: plain verify passes; --witness <earlier receipt> and the configured witness directory fail it', async () => {
    expect((await cli(false, 'workspace', 'create', 'wa')).code).toBe(0);
    await appendEvents('wa', 0, 30);
    const receipt = path.join(dataDir, 'wa-receipt.json');
    const signed = await cli(true, 'audit', 'checkpoint', '--workspace', 'wa', '--out', receipt);
    expect(signed).toMatchObject({ code: 0, stdout: expect.stringMatching(/^checkpoint #0 \(genesis\) at position 32, key [0-9a-f]{16}; receipt written to /) });
    const kept = JSON.parse(fs.readFileSync(receipt, 'utf8'));
    expect(kept).toMatchObject({ format: 'review-ledger-audit-receipt/v1', workspace: 'wa', seq: 0, position: 32, headHash: expect.stringMatching(/^[0-9a-f]{64}$/), sig: expect.any(String), signerPublicKey: expect.any(String) });
    expect(fs.readFileSync(path.join(witnessDir, 'wa.receipts.jsonl'), 'utf8')).toBe(`${JSON.stringify(kept)}\n`);
    expect((await cli(false, 'audit', 'verify', '--workspace', 'wa', '--witness', receipt)).code).toBe(0);
    const before = await cli(true, 'audit', 'status', '--workspace', 'wa');
    expect(before).toMatchObject({ code: 0, stdout: `workspace wa: head 32, 1 checkpoint(s), the last #0 at position 32 (${kept.time})\nwitness ${path.join(witnessDir, 'wa.receipts.jsonl')}: the latest receipt #0 at position 32 (${kept.time})\nsigning: allowed\n` });

    await appendEvents('wa', 30, 35);
    sql('wa', (db) => {
      db.prepare('DELETE FROM events WHERE global_position > 25').run();
      db.prepare('DELETE FROM audit_checkpoints').run();
    });
    const plain = await cli(false, 'audit', 'verify', '--workspace', 'wa');
    expect(plain.code).toBe(0);
    expect(plain.stdout).toContain('OK: the chain verifies through position 25');
    expect(plain.stdout).toContain('no signed checkpoint yet');

    const against = await cli(false, 'audit', 'verify', '--workspace', 'wa', '--witness', receipt);
    expect(against.code).toBe(1);
    expect(against.stdout).toContain(`BROKEN at position 26: truncated — position 26: the log ends at 25, but receipt ${receipt} holds checkpoint #0 (position 32, signed ${kept.time}) — events 26..32 were removed after it was signed`);
    expect(against.stdout).toContain(`  also: checkpoint_missing — position 32: checkpoint #0 (position 32, signed ${kept.time}), held by receipt ${receipt}, is missing from the store, which holds no checkpoint — signed checkpoints were deleted`);
    expect(against.stdout).toContain(`receipt ${receipt}: 1 receipt(s), the latest #0 at position 32 (${kept.time}): the log does NOT hold them (see above)`);

    const configured = await cli(true, 'audit', 'verify', '--workspace', 'wa');
    expect(configured.code).toBe(1);
    expect(configured.stdout).toContain('BROKEN at position 26: truncated');
    expect(configured.stdout).toContain(`witness ${path.join(witnessDir, 'wa.receipts.jsonl')}: 1 receipt(s)`);

    // `audit status` says so, and signing again over the rolled-back store is refused: nothing is signed.
    const status = await cli(true, 'audit', 'status', '--workspace', 'wa', '--json');
    expect(status.code).toBe(1);
    expect(JSON.parse(status.stdout)).toMatchObject({ headPosition: 25, checkpoints: 0, lastCheckpoint: null, witness: { latest: { seq: 0, position: 32 } }, signing: { refused: true, reason: `the witness holds checkpoint #0 at position 32 (signed ${kept.time}), but the store's checkpoints are gone: checkpoints were deleted` } });
    const refused = await cli(true, 'audit', 'checkpoint', '--workspace', 'wa');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("error [audit_witness_rollback]: workspace wa: not signing — the witness holds checkpoint #0 at position 32");
    sql('wa', (db) => expect(db.prepare('SELECT count(*) FROM audit_checkpoints').pluck().get()).toBe(0));
  });

  test('(b) a signed event edited, the tail re-hashed, the newest checkpoint deleted: plain verify passes; the export\'s receipt and the witness directory fail it', async () => {
    expect((await cli(false, 'workspace', 'create', 'wb')).code).toBe(0);
    await appendEvents('wb', 0, 20);
    expect((await cli(true, 'audit', 'checkpoint', '--workspace', 'wb')).code).toBe(0);
    await appendEvents('wb', 20, 30);
    const out = path.join(dataDir, 'wb-export.json');
    const receipt = path.join(dataDir, 'wb-receipt.json');
    const exported = await cli(true, 'audit', 'export', '--workspace', 'wb', '--out', out, '--receipt', receipt);
    expect(exported.stdout).toBe(`wrote ${out}: 32 events, 2 checkpoint(s), key ${JSON.parse(fs.readFileSync(receipt, 'utf8')).keyId}; receipt: checkpoint #1 at position 32 (also in ${receipt})\n`);
    expect(JSON.parse(fs.readFileSync(out, 'utf8')).receipt).toEqual(JSON.parse(fs.readFileSync(receipt, 'utf8')));

    sql('wb', (db) => {
      const row = (p: number) => db.prepare('SELECT global_position AS position, event_id AS eventId, stream_id AS streamId, stream_revision AS streamRevision, type, schema_version AS schemaVersion, data, metadata, lower(hex(hash)) AS hash FROM events WHERE global_position = ?').get(p) as any;
      db.prepare("UPDATE events SET data = replace(data, 'reason 23', 'reason XXIII') WHERE global_position = 26").run();
      let prev = row(25).hash as string;
      for (let p = 26; p <= 32; p++) {
        prev = chainHash(prev, row(p));
        db.prepare('UPDATE events SET hash = ? WHERE global_position = ?').run(Buffer.from(prev, 'hex'), p);
      }
      db.prepare('DELETE FROM audit_checkpoints WHERE seq >= 1').run();
    });
    const plain = await cli(false, 'audit', 'verify', '--workspace', 'wb');
    expect(plain.code).toBe(0);
    expect(plain.stdout).toContain('signed checkpoint #0 covers positions 1..22');

    // The export file itself serves as the witness: its receipt.
    const against = await cli(false, 'audit', 'verify', '--workspace', 'wb', '--witness', out);
    expect(against.code).toBe(1);
    expect(against.stdout).toMatch(/BROKEN at position 32: checkpoint_missing — /);
    expect(against.stdout).toMatch(/also: edited — position 32: receipt \S+wb-export\.json holds checkpoint #1 .* — events at or before 32 were rewritten \(and re-hashed\) after it was signed/);

    const configured = await cli(true, 'audit', 'verify', '--workspace', 'wb', '--json');
    expect(configured.code).toBe(1);
    const report = JSON.parse(configured.stdout);
    expect(report.problems.map((p: { kind: string; position: number }) => [p.kind, p.position])).toEqual([['checkpoint_missing', 32], ['edited', 32]]);
    expect(report.witnesses).toEqual([{ source: `witness ${path.join(witnessDir, 'wb.receipts.jsonl')}`, receipts: 2, latest: { seq: 1, position: 32, time: expect.any(String) }, ok: false }]);
  });

  test('bad input is refused by name: a file that is not a receipt, a receipt of another workspace', async () => {
    const junk = path.join(dataDir, 'junk.json');
    fs.writeFileSync(junk, '{"hello": "world"}');
    const r = await cli(false, 'audit', 'verify', '--workspace', 'wa', '--witness', junk);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`error [invalid_receipt]: --witness ${junk}: not an audit receipt (format must be "review-ledger-audit-receipt/v1", got undefined)\n`);
    const other = await cli(false, 'audit', 'verify', '--workspace', 'wb', '--witness', path.join(dataDir, 'wa-receipt.json'));
    expect(other.code).toBe(1);
    expect(other.stdout).toContain('bad_receipt — ');
    expect(other.stdout).toContain('belongs to workspace "wa", not "wb"');
  });
});

describe('the witness directory in the operator configuration', () => {
  test('audit.witnessDir in the config file, REVIEW_LEDGER_AUDIT_WITNESS_DIR over it, none by default; a bad value is refused naming the field', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-witness-config-'));
    try {
      const file = path.join(dir, 'config.json');
      fs.writeFileSync(file, JSON.stringify({ audit: { witnessDir: 'elsewhere/witness' } }));
      expect(loadOperatorConfig(dir, {}, {}).auditWitnessDir).toBeNull();
      expect(loadOperatorConfig(dir, { configFile: file }, {}).auditWitnessDir).toBe(path.resolve('elsewhere/witness'));
      expect(loadOperatorConfig(dir, { configFile: file }, { REVIEW_LEDGER_AUDIT_WITNESS_DIR: '/mnt/witness' }).auditWitnessDir).toBe('/mnt/witness');
      fs.writeFileSync(file, JSON.stringify({ audit: { witnessDir: 7 } }));
      expect(() => loadOperatorConfig(dir, { configFile: file }, {})).toThrow(`config ${file}: audit.witnessDir: Invalid input: expected string, received number`);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
