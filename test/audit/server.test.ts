import { execFile } from 'node:child_process';
import Database from 'better-sqlite3';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import type { AuditCheckpointer } from '../../src/audit/checkpointer';
import { AuditExport } from '../../src/audit/export';
import { call, command, serverFixture } from '../rpc/support';

const run = promisify(execFile);
const BIN = path.resolve(__dirname, '../../bin/review-ledger.js');

/** The CLI as users run it, on the server's data dir (SQLite allows the second process). */
async function cli(dataDir: string, ...args: string[]): Promise<{ code: number; stdout: string }> {
  try {
    const { stdout } = await run(process.execPath, [BIN, '--data-dir', dataDir, ...args], { env: { ...process.env, REVIEW_LEDGER_FROM_SOURCE: '1' }, encoding: 'utf8' });
    return { code: 0, stdout };
  } catch (err) {
    return { code: (err as { code: number }).code, stdout: (err as { stdout: string }).stdout };
  }
}

describe('audit on a running server: the published key, scheduled checkpoints, the auditChain read, the CLI', () => {
  let fx: Awaited<ReturnType<typeof serverFixture>>;
  beforeAll(async () => {
    fx = await serverFixture();
  });
  afterAll(async () => {
    await fx.close();
  });

  test('GET /.well-known/review-ledger/audit-key publishes the Ed25519 public key without a token; the private key file is 0600', async () => {
    const res = await fetch(`${fx.server.url}/.well-known/review-ledger/audit-key`);
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toEqual({ algorithm: 'Ed25519', keyId: expect.stringMatching(/^[0-9a-f]{16}$/), publicKey: expect.any(String), format: 'spki-der-base64' });
    expect(fs.statSync(path.join(fx.dataDir, 'audit-ed25519.pem')).mode & 0o777).toBe(0o600);
  });

  test('the checkpointer signs the head; auditChain reports the chain verified up to that checkpoint, then the first broken position once the file is edited', async () => {
    for (let i = 0; i < 3; i++) expect((await command(fx.server.url, fx.ownerToken, fx.workspaceId, 'addMember', { principal: `user:m${i}`, role: 'viewer' })).error).toBeUndefined();
    const checkpointer = fx.server.ledger.services.get('audit.checkpointer') as AuditCheckpointer;
    await checkpointer.tick();
    const ok = (await call(fx.server.url, fx.ownerToken, 'review_studio.auditChain', { workspace_id: fx.workspaceId })).result.value;
    expect(ok).toMatchObject({ supported: true, ok: true, firstBroken: null, chainedFrom: 0 });
    expect(ok.verifiedCheckpoint).toMatchObject({ seq: 0, position: ok.headPosition });

    // The CLI agrees, and its export verifies as a file.
    const verify = await cli(fx.dataDir, 'audit', 'verify', '--workspace', fx.workspaceId);
    expect(verify.code).toBe(0);
    expect(verify.stdout).toContain(`OK: the chain verifies through position ${ok.headPosition}`);
    const out = path.join(fx.dataDir, 'export.json');
    expect((await cli(fx.dataDir, 'audit', 'export', '--workspace', fx.workspaceId, '--out', out)).code).toBe(0);
    const doc = JSON.parse(fs.readFileSync(out, 'utf8')) as AuditExport;
    expect(doc.publicKey).toBe((await (await fetch(`${fx.server.url}/.well-known/review-ledger/audit-key`)).json()).publicKey);
    expect((await cli(fx.dataDir, 'audit', 'verify', '--file', out)).code).toBe(0);

    // Someone edits the SQLite file behind the server's back.
    const db = new Database(path.join(fx.dataDir, fx.workspaceId, 'workspace.db'));
    db.prepare("UPDATE events SET data = replace(data, 'user:m1', 'user:mallory') WHERE data LIKE '%user:m1%'").run();
    const edited = db.prepare("SELECT global_position FROM events WHERE data LIKE '%mallory%'").pluck().get() as number;
    db.close();
    const broken = await cli(fx.dataDir, 'audit', 'verify', '--workspace', fx.workspaceId);
    expect(broken.code).toBe(1);
    expect(broken.stdout).toContain(`BROKEN at position ${edited}: edited`);
    // The read is cached only while the head and checkpoints stand still and for 30 s: a new checkpoint-free
    // append moves the head, so the next read verifies again.
    await command(fx.server.url, fx.ownerToken, fx.workspaceId, 'addMember', { principal: 'user:later', role: 'viewer' });
    const bad = (await call(fx.server.url, fx.ownerToken, 'review_studio.auditChain', { workspace_id: fx.workspaceId })).result.value;
    expect(bad).toMatchObject({ ok: false, firstBroken: edited, problems: [expect.objectContaining({ kind: 'edited', position: edited })] });
  });
});
