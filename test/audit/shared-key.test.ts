import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AUDIT_CHECKPOINTER_SERVICE, AuditCheckpointer, readCheckpointList, verifyStore } from '../../src/audit/checkpointer';
import { AuditKeyring, generateAuditKey, writeKeyFile } from '../../src/audit/keys';
import { loadConfig } from '../../src/config';
import { PostgresBackend } from '../../src/stores/postgres/backend';
import { PostgresEventStore } from '../../src/stores/postgres/postgres-event-store';
import { Ledger, LOCAL_OPERATOR } from '../../src/ledger';
import { newUuidV7 } from '../../src/events/ids';
import { postgresStoreFactory } from '../../src/workspaces/store-factories';
import { configuredAuditKeyFile, loadOperatorConfig } from '../../src/operator-config';
import { startServer } from '../../src/server/bootstrap';
import { DATABASE_URL, dropSchema, uniqueSchema, whenPostgres } from '../scale/pg-support';
import { ev } from './support';

/**
 * SPEC §3: everything the servers on one store must share comes from the store or from operator
 * configuration, never from one server's data dir. The audit signing key is the operator's key file
 * (--audit-key-file / REVIEW_LEDGER_AUDIT_KEY_FILE / `auditKeyFile`): two servers with separate data
 * dirs sign ONE checkpoint chain that both verify.
 */

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'rl-sharedkey-'));
const EVERY_EVENT = { everyEvents: 1, everySeconds: 3600, tickMs: 1000 };

describe('the audit signing key from operator configuration', () => {
  test('REVIEW_LEDGER_AUDIT_KEY_FILE (or auditKeyFile, or the flag) names the key; a missing or non-Ed25519 file stops the start with invalid_config', () => {
    const dir = tmp();
    try {
      const file = path.join(dir, 'shared-audit.pem');
      writeKeyFile(file, generateAuditKey().pem);
      expect(loadOperatorConfig(dir, {}, { REVIEW_LEDGER_AUDIT_KEY_FILE: file }).auditKeyFile).toBe(file);
      expect(loadOperatorConfig(dir, { auditKeyFile: file }, {}).auditKeyFile).toBe(file);
      expect(loadOperatorConfig(dir, {}, {}).auditKeyFile).toBeNull();
      const missing = path.join(dir, 'nope.pem');
      expect(() => loadOperatorConfig(dir, {}, { REVIEW_LEDGER_AUDIT_KEY_FILE: missing })).toThrow(expect.objectContaining({ code: 'invalid_config', message: expect.stringContaining(`cannot read ${missing}`) }));
      const rsa = path.join(dir, 'rsa.pem');
      fs.writeFileSync(rsa, require('node:crypto').generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' }));
      expect(() => loadOperatorConfig(dir, {}, { REVIEW_LEDGER_AUDIT_KEY_FILE: rsa })).toThrow(expect.objectContaining({ code: 'invalid_config', message: expect.stringContaining('holds a rsa key, not Ed25519') }));
      // A ledger with it configured makes every keyring of its data dir use it, and never writes one of its own.
      const ledger = new Ledger(loadConfig({ dataDir: dir }, { REVIEW_LEDGER_AUDIT_KEY_FILE: file }));
      expect(configuredAuditKeyFile(dir)).toBe(file);
      const ring = new AuditKeyring(dir);
      expect({ file: ring.file, operatorProvided: ring.operatorProvided, keyId: ring.current()!.keyId }).toEqual({ file, operatorProvided: true, keyId: generateKeyId(file) });
      expect(fs.existsSync(path.join(dir, 'audit-ed25519.pem'))).toBe(false);
      void ledger.close();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a server started on a store whose checkpoints another key signed says so at start: one log line naming both keys, and /health degraded with the reason', async () => {
    const dataDir = tmp();
    const stderr: string[] = [];
    const spy = jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      stderr.push(String(chunk));
      return true;
    });
    try {
      // First start: the data dir's own key signs the default workspace's genesis checkpoint.
      let server = await startServer({ dataDir, port: 0 });
      const first = new AuditKeyring(dataDir).current()!;
      const checkpointer = server.ledger.services.get(AUDIT_CHECKPOINTER_SERVICE)!;
      await checkpointer.tick();
      await server.close();
      // The operator hands this server another key (a second server's, say) and starts it again.
      const other = path.join(dataDir, 'other.pem');
      writeKeyFile(other, generateAuditKey().pem);
      server = await startServer({ dataDir, port: 0, operator: loadOperatorConfig(dataDir, { auditKeyFile: other }, {}) });
      try {
        const held = new AuditKeyring(dataDir).current()!.keyId;
        expect(held).not.toBe(first.keyId);
        const deadline = Date.now() + 30_000; // a bound for a loaded machine, not a target
        let health: { status: string; reason?: string; audit?: { failures?: Array<{ code?: string }> } } = { status: 'unknown' };
        while (Date.now() < deadline) {
          health = (await (await fetch(`${server.url}/health`)).json()) as typeof health;
          if (health.status === 'degraded') break;
          await new Promise((r) => setTimeout(r, 50));
        }
        expect(health.status).toBe('degraded');
        expect(health.reason).toContain(`workspace default: its checkpoints are signed by key ${first.keyId}, this server holds key ${held}`);
        expect(health.audit!.failures).toEqual([expect.objectContaining({ workspace: 'default', code: 'audit_key_mismatch' })]);
        const lines = stderr.join('').split('\n').filter((l) => l.includes('audit_key_mismatch') || l.includes('signed by key'));
        expect(lines).toEqual([
          `review-ledger: audit checkpoint failed: workspace default: its checkpoints are signed by key ${first.keyId}, this server holds key ${held}: it cannot sign them. Give every server on this store the same key (--audit-key-file / REVIEW_LEDGER_AUDIT_KEY_FILE, docs/stores.md), or finish a rotation (audit rotate-key)`,
        ]);
      } finally {
        await server.close();
      }
    } finally {
      spy.mockRestore();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});

function generateKeyId(file: string): string {
  return new AuditKeyring(path.dirname(file), file).current()!.keyId;
}

whenPostgres('two servers, one PostgreSQL store, one audit key file', () => {
  const schema = uniqueSchema('rl_sharedkey');
  const dirs: string[] = [];
  afterAll(async () => {
    await dropSchema(schema);
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  test('two servers with separate data dirs and the same key file sign one checkpoint chain, alternately, and both verify it; a server with its own key signs nothing and says why', async () => {
    const keyDir = tmp();
    const dataA = tmp();
    const dataB = tmp();
    const dataC = tmp();
    dirs.push(keyDir, dataA, dataB, dataC);
    const keyFile = path.join(keyDir, 'audit.pem');
    writeKeyFile(keyFile, generateAuditKey().pem);
    // Two "servers": each its own pool and LISTEN connection, its own data dir, the shared key file.
    const [backendA, backendB, backendC] = await Promise.all([0, 1, 2].map(() => PostgresBackend.open({ connectionString: DATABASE_URL, schema, poolSize: 2 })));
    const storeA = new PostgresEventStore({ backend: backendA, workspaceId: 'shared' });
    const storeB = new PostgresEventStore({ backend: backendB, workspaceId: 'shared' });
    const storeC = new PostgresEventStore({ backend: backendC, workspaceId: 'shared' });
    const ringA = new AuditKeyring(dataA, keyFile);
    const ringB = new AuditKeyring(dataB, keyFile);
    const errorsA: unknown[] = [];
    const errorsB: unknown[] = [];
    const errorsC: unknown[] = [];
    const clock = () => new Date('2026-03-01T00:00:00Z');
    const a = new AuditCheckpointer(async () => [storeA], () => ringA.current()!, clock, EVERY_EVENT, (e) => errorsA.push(e));
    const b = new AuditCheckpointer(async () => [storeB], () => ringB.current()!, clock, EVERY_EVENT, (e) => errorsB.push(e));
    try {
      for (let round = 0; round < 3; round++) {
        await storeA.append(`a-${round}`, 'no_stream', [ev('shared', round)]);
        await a.tick();
        await storeB.append(`b-${round}`, 'no_stream', [ev('shared', round)]);
        await b.tick();
      }
      const chain = await readCheckpointList(storeA);
      // One chain: seq 0..5, signed alternately by A and B with the same key, each linked to the one before.
      expect(chain.map((c) => [c.seq, c.kind, c.position, c.keyId])).toEqual([
        [0, 'genesis', 1, ringA.current()!.keyId],
        [1, 'checkpoint', 2, ringA.current()!.keyId],
        [2, 'checkpoint', 3, ringA.current()!.keyId],
        [3, 'checkpoint', 4, ringA.current()!.keyId],
        [4, 'checkpoint', 5, ringA.current()!.keyId],
        [5, 'checkpoint', 6, ringA.current()!.keyId],
      ]);
      expect({ errorsA, errorsB, a: a.status(), b: b.status() }).toEqual({ errorsA: [], errorsB: [], a: { status: 'ok', witness: false, refused: [] }, b: { status: 'ok', witness: false, refused: [] } });
      const publicKey = ringB.current()!.publicKey;
      expect(await verifyStore(storeA, publicKey)).toMatchObject({ ok: true, problems: [], verifiedCheckpoint: { seq: 5, position: 6 } });
      expect(await verifyStore(storeB, publicKey)).toMatchObject({ ok: true, problems: [], verifiedCheckpoint: { seq: 5, position: 6 } });

      // A third server that made its own key (the data-dir default) cannot continue the chain, and says so.
      const ringC = new AuditKeyring(dataC);
      const c = new AuditCheckpointer(async () => [storeC], () => ringC.current()!, clock, EVERY_EVENT, (e) => errorsC.push(e));
      await storeC.append('c-0', 'no_stream', [ev('shared', 9)]);
      await c.tick();
      await c.tick();
      expect(errorsC).toEqual([expect.objectContaining({ code: 'audit_key_mismatch', details: { workspace: 'shared', signedBy: ringA.current()!.keyId, held: ringC.current()!.keyId } })]);
      expect(c.status()).toMatchObject({ status: 'degraded', failures: [{ workspace: 'shared', code: 'audit_key_mismatch' }] });
      expect(await readCheckpointList(storeA)).toHaveLength(6);
      // …and B, holding the shared key, signs past C's event as usual.
      await b.tick();
      expect((await readCheckpointList(storeB)).map((cp) => cp.position)).toEqual([1, 2, 3, 4, 5, 6, 7]);
      expect(await verifyStore(storeA, publicKey)).toMatchObject({ ok: true, verifiedCheckpoint: { seq: 6, position: 7 } });
    } finally {
      for (const s of [storeA, storeB, storeC]) await s.close();
      for (const be of [backendA, backendB, backendC]) await be.close();
    }
  });

  test('the token secret from operator configuration (serverKeyFile): an issueToken retried through the other server answers with the same token', async () => {
    const keyDir = tmp();
    const dataA = tmp();
    const dataB = tmp();
    dirs.push(keyDir, dataA, dataB);
    const serverKey = path.join(keyDir, 'server.key');
    fs.writeFileSync(serverKey, require('node:crypto').randomBytes(32), { mode: 0o600 });
    const open = (dataDir: string) =>
      new Ledger(loadConfig({ dataDir, store: 'postgres', databaseUrl: DATABASE_URL }, { REVIEW_LEDGER_SERVER_KEY_FILE: serverKey }), { storeFactory: postgresStoreFactory(DATABASE_URL, schema) });
    const a = open(dataA);
    const b = open(dataB);
    try {
      expect(a.operator.serverKeyFile).toBe(serverKey);
      await a.createWorkspace({ ...LOCAL_OPERATOR, idempotencyKey: newUuidV7() }, { workspaceId: 'tokens', name: 'tokens' });
      await a.run('addMember', 'tokens', { ...LOCAL_OPERATOR, idempotencyKey: newUuidV7() }, { principal: 'agent:t', role: 'member' });
      const envelope = { ...LOCAL_OPERATOR, idempotencyKey: newUuidV7() };
      const first = await a.issueToken('tokens', envelope, { principal: 'agent:t', role: 'member' });
      const retried = await b.issueToken('tokens', envelope, { principal: 'agent:t', role: 'member' });
      expect({ replayed: retried.replayed, token: retried.token, json: retried.json }).toEqual({ replayed: true, token: first.token, json: first.json });
      // Neither server wrote a key of its own into its data dir.
      expect([fs.existsSync(path.join(dataA, 'server.key')), fs.existsSync(path.join(dataB, 'server.key'))]).toEqual([false, false]);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
