import { execFile } from 'node:child_process';
import Database from 'better-sqlite3';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { AUDIT_CHECKPOINTER_SERVICE } from '../../src/audit/checkpointer';
import { AuditExport } from '../../src/audit/export';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { call, command, serverFixture, tokenFor } from '../rpc/support';

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
    // A checkpoint as soon as the head moves: the scheduled pass may already have signed an earlier head
    // while the server started (a slow machine), and the test's own pass must still sign the current one.
    process.env.REVIEW_LEDGER_CHECKPOINT_EVENTS = '1';
    fx = await serverFixture();
  });
  afterAll(async () => {
    delete process.env.REVIEW_LEDGER_CHECKPOINT_EVENTS;
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
    const checkpointer = fx.server.ledger.services.get(AUDIT_CHECKPOINTER_SERVICE)!;
    // From here the test drives the passes (stop waits for a scheduled one in flight).
    await checkpointer.stop();
    for (let i = 0; i < 3; i++) expect((await command(fx.server.url, fx.ownerToken, fx.workspaceId, 'addMember', { principal: `user:m${i}`, role: 'viewer' })).error).toBeUndefined();
    await checkpointer.tick();
    const ok = (await call(fx.server.url, fx.ownerToken, 'review_studio.auditChain', { workspace_id: fx.workspaceId })).result.value;
    expect(ok).toMatchObject({ supported: true, ok: true, firstBroken: null, chainedFrom: 0 });
    expect(ok.verifiedCheckpoint).toMatchObject({ seq: expect.any(Number), position: ok.headPosition });
    const signed = ok.verifiedCheckpoint;

    // The CLI agrees, and its export verifies as a file.
    const verify = await cli(fx.dataDir, 'audit', 'verify', '--workspace', fx.workspaceId);
    expect(verify.code).toBe(0);
    expect(verify.stdout).toContain(`OK: the chain verifies through position ${ok.headPosition}`);
    const out = path.join(fx.dataDir, 'export.json');
    expect((await cli(fx.dataDir, 'audit', 'export', '--workspace', fx.workspaceId, '--out', out)).code).toBe(0);
    const doc = JSON.parse(fs.readFileSync(out, 'utf8')) as AuditExport;
    expect(doc.publicKey).toBe((await (await fetch(`${fx.server.url}/.well-known/review-ledger/audit-key`)).json()).publicKey);
    expect((await cli(fx.dataDir, 'audit', 'verify', '--file', out)).code).toBe(0);

    // The audit answer itself carries the same status beside its rows, over RPC and to an MCP agent.
    const audit = (await call(fx.server.url, fx.ownerToken, 'review_studio.audit', { workspace_id: fx.workspaceId })).result;
    expect(Array.isArray(audit.value.rows)).toBe(true);
    expect(audit.value.next).toBeNull();
    expect(audit.chain).toMatchObject({ supported: true, ok: true, firstBroken: null, headPosition: ok.headPosition, verifiedCheckpoint: signed });
    const agent = await tokenFor(fx.server.url, fx.ownerToken, fx.workspaceId, 'agent:auditor', 'viewer');
    const client = new Client({ name: 'audit-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${fx.server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${agent}` } } }));
    const viaMcp = ((await client.callTool({ name: 'get_audit_log', arguments: {} })) as any).structuredContent;
    await client.close();
    expect(viaMcp.value).toEqual(audit.value);
    expect(viaMcp.chain).toMatchObject({ ok: true, verifiedCheckpoint: signed });

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
    const badAudit = (await call(fx.server.url, fx.ownerToken, 'review_studio.audit', { workspace_id: fx.workspaceId })).result;
    expect(badAudit.chain).toMatchObject({ ok: false, firstBroken: edited });
    // The checkpoint at the head (past the edit) no longer verifies; one signed before the edit (the server
    // signs each workspace's unsigned tail once at start) still does.
    expect(badAudit.chain.verifiedCheckpoint?.position ?? 0).toBeLessThan(edited);
    expect(badAudit.chain.verifiedCheckpoint).not.toEqual(signed);
  }, 120_000);
});

describe('a clean server stop signs the unsigned tail', () => {
  test('appends after the last scheduled checkpoint are covered by a checkpoint written on shutdown', async () => {
    process.env.REVIEW_LEDGER_CHECKPOINT_EVENTS = '100000';
    process.env.REVIEW_LEDGER_CHECKPOINT_SECONDS = '3600';
    let fx: Awaited<ReturnType<typeof serverFixture>> | null = null;
    try {
      fx = await serverFixture();
      const checkpointer = fx.server.ledger.services.get(AUDIT_CHECKPOINTER_SERVICE)!;
      await checkpointer.tick(); // the genesis (or nothing, if the start-up pass signed it already)
      for (let i = 0; i < 3; i++) expect((await command(fx.server.url, fx.ownerToken, fx.workspaceId, 'addMember', { principal: `user:t${i}`, role: 'viewer' })).error).toBeUndefined();
      await checkpointer.tick(); // not due: 3 events, well inside the hour
      const file = path.join(fx.dataDir, fx.workspaceId, 'workspace.db');
      const signedPositions = () => {
        const db = new Database(file, { readonly: true });
        try {
          const head = db.prepare('SELECT max(global_position) FROM events').pluck().get() as number;
          const positions = (db.prepare('SELECT body FROM audit_checkpoints ORDER BY seq').pluck().all() as string[]).map((b) => JSON.parse(b).position as number);
          return { head, last: positions[positions.length - 1] };
        } finally {
          db.close();
        }
      };
      const running = signedPositions();
      expect(running.last).toBeLessThan(running.head);
      await fx.server.close();
      const stopped = signedPositions();
      expect(stopped).toEqual({ head: running.head, last: running.head });
      expect((await cli(fx.dataDir, 'audit', 'verify', '--workspace', fx.workspaceId)).stdout).toContain(`covers positions 1..${running.head}`);
    } finally {
      delete process.env.REVIEW_LEDGER_CHECKPOINT_EVENTS;
      delete process.env.REVIEW_LEDGER_CHECKPOINT_SECONDS;
      if (fx) fs.rmSync(fx.dataDir, { recursive: true, force: true });
    }
  });
});
