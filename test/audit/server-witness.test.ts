import Database from 'better-sqlite3';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AUDIT_CHECKPOINTER_SERVICE } from '../../src/audit/checkpointer';
import { readWitness } from '../../src/audit/witness';
import { command, serverFixture } from '../rpc/support';

describe('a server with an audit witness directory', () => {
  let fx: Awaited<ReturnType<typeof serverFixture>>;
  let witnessDir: string;
  const logged: string[] = [];
  const write = process.stderr.write.bind(process.stderr);
  beforeAll(async () => {
    witnessDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-server-witness-'));
    process.env.REVIEW_LEDGER_AUDIT_WITNESS_DIR = witnessDir;
    process.env.REVIEW_LEDGER_CHECKPOINT_EVENTS = '1';
    // The checkpointer logs to stderr; keep what it says about audit checkpoints.
    process.stderr.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      if (String(chunk).includes('audit checkpoint failed')) logged.push(String(chunk));
      return (write as (...a: unknown[]) => boolean)(chunk, ...rest);
    }) as typeof process.stderr.write;
    fx = await serverFixture();
  });
  afterAll(async () => {
    process.stderr.write = write;
    delete process.env.REVIEW_LEDGER_AUDIT_WITNESS_DIR;
    delete process.env.REVIEW_LEDGER_CHECKPOINT_EVENTS;
    await fx.close();
    fs.rmSync(witnessDir, { recursive: true, force: true });
  });

  test('appends every checkpoint it signs to the witness; refuses to sign once the checkpoints are deleted, logs it once and reports it on /health, without throwing', async () => {
    const checkpointer = fx.server.ledger.services.get(AUDIT_CHECKPOINTER_SERVICE)!;
    await checkpointer.stop(); // from here the test drives the passes
    for (let i = 0; i < 2; i++) expect((await command(fx.server.url, fx.ownerToken, fx.workspaceId, 'addMember', { principal: `user:w${i}`, role: 'viewer' })).error).toBeUndefined();
    await checkpointer.tick();
    const file = path.join(fx.dataDir, fx.workspaceId, 'workspace.db');
    const stored = () => {
      const db = new Database(file, { readonly: true });
      try {
        return (db.prepare('SELECT body FROM audit_checkpoints ORDER BY seq').pluck().all() as string[]).map((b) => JSON.parse(b));
      } finally {
        db.close();
      }
    };
    const signed = stored();
    expect(signed.length).toBeGreaterThan(0);
    const held = readWitness(witnessDir, fx.workspaceId);
    expect(held.map((r) => [r.seq, r.position, r.headHash, r.sig])).toEqual(signed.map((c) => [c.seq, c.position, c.headHash, c.sig]));
    expect(await (await fetch(`${fx.server.url}/health`)).json()).toMatchObject({ status: 'ok', audit: { witness: true, signingRefused: 0 } });

    const db = new Database(file);
    db.prepare('DELETE FROM audit_checkpoints').run();
    db.close();
    expect((await command(fx.server.url, fx.ownerToken, fx.workspaceId, 'addMember', { principal: 'user:later', role: 'viewer' })).error).toBeUndefined();
    await checkpointer.tick();
    await checkpointer.tick();
    expect(stored()).toEqual([]);
    expect(readWitness(witnessDir, fx.workspaceId)).toHaveLength(held.length);
    const last = held[held.length - 1];
    expect(logged).toEqual([`review-ledger: audit checkpoint failed: workspace ${fx.workspaceId}: not signing — the witness holds checkpoint #${last.seq} at position ${last.position} (signed ${last.time}), but the store's checkpoints are gone: checkpoints were deleted (witness ${path.join(witnessDir, `${fx.workspaceId}.receipts.jsonl`)}); run \`audit verify\`\n`]);
    const health = await (await fetch(`${fx.server.url}/health`)).json();
    expect(health).toMatchObject({ status: 'degraded', audit: { witness: true, signingRefused: 1 } });
    expect(health.reason).toContain('audit checkpoints are not being signed for 1 workspace(s)');
    expect(JSON.stringify(health)).not.toContain(witnessDir);
  }, 120_000);
});
