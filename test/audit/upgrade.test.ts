import Database from 'better-sqlite3';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from 'pg';
import { AuditableStore, verifyStore, writeCheckpoint } from '../../src/audit/checkpointer';
import { generateAuditKey } from '../../src/audit/keys';
import { formatReport } from '../../src/audit/verify';
import { PostgresBackend, PostgresEventStore } from '../../src/events/store/postgres';
import { SqliteEventStore } from '../../src/events/store/sqlite';
import { DATABASE_URL, dropSchema, uniqueSchema, whenPostgres } from '../scale/pg-support';
import { ev } from './support';

const NOW = new Date('2026-03-01T12:00:00.000Z');

/** A log written before the chain is hashed on open, gets its genesis at the old head, and says so. */
async function expectUpgraded(store: AuditableStore, legacyEvents: number): Promise<void> {
  expect(await store.chainInfo()).toMatchObject({ chainedFrom: legacyEvents, headPosition: legacyEvents });
  await store.append('after-upgrade', 'no_stream', [ev(store.workspaceId, 100), ev(store.workspaceId, 101)]);
  const key = generateAuditKey().key;
  expect(await writeCheckpoint(store, key, NOW)).toMatchObject({ kind: 'genesis', seq: 0, position: legacyEvents, chainedFrom: legacyEvents });
  expect(await writeCheckpoint(store, key, NOW)).toMatchObject({ kind: 'checkpoint', seq: 1, position: legacyEvents + 2 });
  const report = await verifyStore(store, key.publicKey);
  expect(report).toMatchObject({ ok: true, chainedFrom: legacyEvents, events: legacyEvents + 2, verifiedCheckpoint: { seq: 1, position: legacyEvents + 2 } });
  expect(formatReport(report)).toContain(`chained from position ${legacyEvents}: events 1..${legacyEvents} existed before the chain`);
}

test('sqlite: a store file from before the chain is upgraded in place (columns added, rows hashed, chained from its head)', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-upgrade-'));
  const file = path.join(dir, 'workspace.db');
  try {
    // The table exactly as the store created it before the chain existed.
    const db = new Database(file);
    db.exec(`CREATE TABLE events (global_position INTEGER PRIMARY KEY, event_id TEXT NOT NULL UNIQUE, stream_id TEXT NOT NULL, stream_revision INTEGER NOT NULL,
      type TEXT NOT NULL, schema_version INTEGER NOT NULL, data TEXT NOT NULL, metadata TEXT NOT NULL, UNIQUE (stream_id, stream_revision))`);
    const ins = db.prepare('INSERT INTO events (event_id, stream_id, stream_revision, type, schema_version, data, metadata) VALUES (?, ?, ?, ?, ?, ?, ?)');
    for (let i = 0; i < 12; i++) {
      const e = ev('legacy', i);
      ins.run(e.eventId, `s-${i % 2}`, Math.floor(i / 2), e.type, 1, JSON.stringify(e.data), JSON.stringify(e.metadata));
    }
    db.close();
    const store = new SqliteEventStore({ file, workspaceId: 'legacy' });
    await expectUpgraded(store, 12);
    await store.close();
    // Reopening does not hash again.
    const again = new SqliteEventStore({ file, workspaceId: 'legacy' });
    expect((await again.chainInfo()).chainedFrom).toBe(12);
    await again.close();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

whenPostgres('postgres upgrade', () => {
  const schema = uniqueSchema('rl_upgrade');
  afterAll(() => dropSchema(schema));

  test('postgres: tables from before the chain are upgraded by the migration (rows hashed per workspace, chained from its head)', async () => {
    const first = await PostgresBackend.open({ connectionString: DATABASE_URL, schema, poolSize: 2 });
    const s = new PostgresEventStore({ backend: first, workspaceId: 'legacy' });
    for (let i = 0; i < 9; i++) await s.append(`s-${i % 3}`, 'any', [ev('legacy', i)]);
    await s.close();
    await first.close();
    // Back to the layout before the chain.
    const c = new Client({ connectionString: DATABASE_URL });
    await c.connect();
    await c.query(`ALTER TABLE "${schema}".events DROP COLUMN prev_hash, DROP COLUMN hash; ALTER TABLE "${schema}".heads DROP COLUMN hash, DROP COLUMN chained_from`);
    await c.end();
    const backend = await PostgresBackend.open({ connectionString: DATABASE_URL, schema, poolSize: 2 });
    try {
      await expectUpgraded(new PostgresEventStore({ backend, workspaceId: 'legacy' }), 9);
    } finally {
      await backend.close();
    }
  });
});
