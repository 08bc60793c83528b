import Database from 'better-sqlite3';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from 'pg';
import { AuditableStore, verifyStore, writeCheckpoint } from '../../src/audit/checkpointer';
import { generateAuditKey } from '../../src/audit/keys';
import { formatReport } from '../../src/audit/verify';
import { genesisHash } from '../../src/events/chain';
import { PostgresBackend } from '../../src/stores/postgres/backend';
import { PostgresEventStore } from '../../src/stores/postgres/postgres-event-store';
import { SqliteEventStore } from '../../src/stores/sqlite/sqlite-event-store';
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
    // Back to the layout before the chain (which also predates the schema_version table).
    const c = new Client({ connectionString: DATABASE_URL });
    await c.connect();
    await c.query(`ALTER TABLE "${schema}".events DROP COLUMN hash; ALTER TABLE "${schema}".heads DROP COLUMN hash, DROP COLUMN chained_from; DROP TABLE "${schema}".schema_version`);
    await c.end();
    const backend = await PostgresBackend.open({ connectionString: DATABASE_URL, schema, poolSize: 2 });
    try {
      await expectUpgraded(new PostgresEventStore({ backend, workspaceId: 'legacy' }), 9);
    } finally {
      await backend.close();
    }
  });
});

/**
 * A log chained in the first layout (prev_hash and hash as 64-character hex text, as the store wrote them
 * before the hashes became 32-byte BLOBs): written by today's store, signed, then turned back into that
 * layout row by row. Opening it converts it in place — nothing re-hashed, so the checkpoint signed
 * before the conversion still verifies; an edit made before the conversion is still found.
 */
async function hexLayoutCase(open: () => Promise<AuditableStore>, toHexLayout: () => Promise<void>, editBefore?: () => Promise<void>): Promise<void> {
  const key = generateAuditKey().key;
  const store = await open();
  for (let i = 0; i < 15; i++) await store.append(`s-${i % 4}`, 'any', [ev(store.workspaceId, i)]);
  expect(await writeCheckpoint(store, key, NOW)).toMatchObject({ kind: 'genesis', position: 15 });
  const before = await store.readChainPage(0, 100);
  await store.close();
  await toHexLayout();
  if (editBefore) await editBefore();
  const upgraded = await open();
  try {
    const report = await verifyStore(upgraded, key.publicKey);
    if (editBefore) {
      expect(report.problems[0]).toMatchObject({ position: 9, kind: 'edited' });
      return;
    }
    expect(report).toMatchObject({ ok: true, events: 15, chainedFrom: 0, verifiedCheckpoint: { seq: 0, position: 15 } });
    const after = await upgraded.readChainPage(0, 100);
    expect(after).toEqual(before);
    // It keeps chaining from the converted head.
    await upgraded.append('after', 'no_stream', [ev(upgraded.workspaceId, 99)]);
    expect(await writeCheckpoint(upgraded, key, NOW)).toMatchObject({ kind: 'checkpoint', seq: 1, position: 16 });
    expect(await verifyStore(upgraded, key.publicKey)).toMatchObject({ ok: true, events: 16, verifiedCheckpoint: { seq: 1, position: 16 } });
  } finally {
    await upgraded.close();
  }
}

describe('sqlite: a log in the hex layout (prev_hash, hash as text) is converted to 32-byte hashes on open', () => {
  let dir: string;
  let file: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-hexlayout-'));
    file = path.join(dir, 'workspace.db');
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));
  const open = async () => new SqliteEventStore({ file, workspaceId: 'hexws' });
  // The events table exactly as the store created it in the hex layout, filled from the current rows.
  const toHexLayout = async () => {
    const db = new Database(file);
    db.transaction(() => {
      db.exec(`CREATE TABLE old_events (global_position INTEGER PRIMARY KEY, event_id TEXT NOT NULL UNIQUE, stream_id TEXT NOT NULL, stream_revision INTEGER NOT NULL,
        type TEXT NOT NULL, schema_version INTEGER NOT NULL, data TEXT NOT NULL, metadata TEXT NOT NULL, prev_hash TEXT, hash TEXT, UNIQUE (stream_id, stream_revision))`);
      db.prepare(`INSERT INTO old_events SELECT e.global_position, e.event_id, e.stream_id, e.stream_revision, e.type, e.schema_version, e.data, e.metadata,
        coalesce((SELECT lower(hex(p.hash)) FROM events p WHERE p.global_position = e.global_position - 1), ?), lower(hex(e.hash)) FROM events e`).run(genesisHash('hexws'));
      db.exec('DROP TABLE events; ALTER TABLE old_events RENAME TO events;');
    })();
    expect(db.prepare("SELECT count(*) FROM events WHERE typeof(hash) = 'text' AND length(hash) = 64 AND length(prev_hash) = 64").pluck().get()).toBe(15);
    db.close();
  };

  test('the signed checkpoint still verifies, the rows read back the same, and appends chain on', async () => {
    await hexLayoutCase(open, toHexLayout);
    const db = new Database(file, { readonly: true });
    try {
      const cols = (db.prepare('PRAGMA table_info(events)').all() as Array<{ name: string }>).map((c) => c.name);
      expect(cols).not.toContain('prev_hash');
      expect(db.prepare("SELECT count(*) FROM events WHERE typeof(hash) = 'blob' AND length(hash) = 32").pluck().get()).toBe(16);
    } finally {
      db.close();
    }
  });

  test('an edit made to the hex-layout file is still found at its position after the conversion', async () => {
    await hexLayoutCase(open, toHexLayout, async () => {
      const db = new Database(file);
      db.prepare("UPDATE events SET data = replace(data, 'reason', 'REASON') WHERE global_position = 9").run();
      db.close();
    });
  });
});

whenPostgres('postgres hex layout', () => {
  const schema = uniqueSchema('rl_hexlayout');
  afterAll(() => dropSchema(schema));

  test('postgres: a schema in the hex layout is converted by the migration (bytea, no prev_hash); the signed checkpoint still verifies', async () => {
    let backend: PostgresBackend | null = null;
    const open = async () => {
      backend = await PostgresBackend.open({ connectionString: DATABASE_URL, schema, poolSize: 2 });
      const store = new PostgresEventStore({ backend, workspaceId: 'hexws' });
      const close = store.close.bind(store);
      return Object.assign(store, { close: async () => { await close(); await backend!.close(); } });
    };
    const sql = async (text: string) => {
      const c = new Client({ connectionString: DATABASE_URL });
      await c.connect();
      try {
        return await c.query(text);
      } finally {
        await c.end();
      }
    };
    const s = `"${schema}"`;
    await hexLayoutCase(open, async () => {
      // The hex layout predates the schema_version table too.
      await sql(`DROP TABLE ${s}.schema_version; ALTER TABLE ${s}.events ADD COLUMN prev_hash text; ALTER TABLE ${s}.events ALTER COLUMN hash TYPE text USING encode(hash, 'hex');
        UPDATE ${s}.events e SET prev_hash = coalesce((SELECT p.hash FROM ${s}.events p WHERE p.workspace_id = e.workspace_id AND p.global_position = e.global_position - 1), ${s}.chain_genesis(e.workspace_id))`);
    });
    const cols = await sql(`SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = '${schema}' AND table_name = 'events' AND column_name IN ('hash', 'prev_hash')`);
    expect(cols.rows).toEqual([{ column_name: 'hash', data_type: 'bytea' }]);
    expect((await sql(`SELECT count(*)::int AS n FROM ${s}.events WHERE octet_length(hash) = 32`)).rows[0].n).toBe(16);
  });
});
