import Database from 'better-sqlite3';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from 'pg';
import type { NewEvent } from '../../src/events/envelope';
import { newUuidV7 } from '../../src/events/ids';
import { SqliteEventStore } from '../../src/stores/sqlite/sqlite-event-store';
import { PostgresBackend } from '../../src/stores/postgres/backend';
import { PostgresEventStore } from '../../src/stores/postgres/postgres-event-store';
import type { AuditableStore } from '../../src/audit/checkpointer';
import { DATABASE_URL } from '../scale/pg-support';

export const ev = (ws: string, i: number, type = 'SuppressionFactRecorded'): NewEvent => ({
  eventId: newUuidV7(),
  type,
  schemaVersion: 1,
  data: { fingerprint: `fp-${i}`, nodeId: `n-${i}`, reason: `reason ${i} — ünïcode`, confidence: 'low' },
  metadata: { principal: 'agent:t', workspaceId: ws, correlationId: `c-${i}`, causationId: null, occurredAt: '2026-01-01T00:00:00.000Z' },
});

/** A row as the tests write it straight into the database, behind the store's back. */
export interface RawEventRow {
  position: number;
  eventId: string;
  streamId: string;
  streamRevision: number;
  type: string;
  schemaVersion: number;
  data: string;
  metadata: string;
  /** Lowercase hex; stored as 32 bytes (BLOB / bytea). */
  hash: string | null;
}

/** Direct access to a workspace's tables, as an operator with write access to the database has. */
export interface Backdoor {
  workspaceId: string;
  /** A fresh store on the same data (what `audit verify` would open). */
  open(): Promise<AuditableStore>;
  row(position: number): Promise<RawEventRow>;
  setData(position: number, data: string): Promise<void>;
  setHash(position: number, hash: string | null): Promise<void>;
  remove(position: number): Promise<void>;
  /** Adds `delta` to every position ≥ from. */
  shift(from: number, delta: number): Promise<void>;
  insert(row: RawEventRow): Promise<void>;
  /** Exchanges everything but the positions of two rows. */
  swap(a: number, b: number): Promise<void>;
  truncateFrom(position: number): Promise<void>;
  addCheckpoint(seq: number, body: string): Promise<void>;
  clearCheckpoints(): Promise<void>;
  /** Deletes the checkpoints of seq ≥ `seq` (the newest ones). */
  removeCheckpointsFrom(seq: number): Promise<void>;
  close(): Promise<void>;
}

const SWAP_COLS = ['event_id', 'stream_id', 'stream_revision', 'type', 'schema_version', 'data', 'metadata', 'hash'];
const bytes = (hex: string | null): Buffer | null => (hex === null ? null : Buffer.from(hex, 'hex'));
const toRaw = (r: Record<string, unknown>): RawEventRow => ({
  position: Number(r.global_position), eventId: String(r.event_id), streamId: String(r.stream_id), streamRevision: Number(r.stream_revision), type: String(r.type),
  schemaVersion: Number(r.schema_version), data: String(r.data), metadata: String(r.metadata), hash: r.hash == null ? null : (r.hash as Buffer).toString('hex'),
});

export function sqliteBackdoor(workspaceId: string): Backdoor & { dir: string; file: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-audit-'));
  const file = path.join(dir, 'workspace.db');
  let db: Database.Database | null = null;
  const conn = () => (db ??= new Database(file));
  return {
    workspaceId, dir, file,
    async open() { return new SqliteEventStore({ file, workspaceId }); },
    async row(p) { return toRaw(conn().prepare('SELECT * FROM events WHERE global_position = ?').get(p) as Record<string, unknown>); },
    async setData(p, data) { conn().prepare('UPDATE events SET data = ? WHERE global_position = ?').run(data, p); },
    async setHash(p, hash) { conn().prepare('UPDATE events SET hash = ? WHERE global_position = ?').run(bytes(hash), p); },
    async remove(p) { conn().prepare('DELETE FROM events WHERE global_position = ?').run(p); },
    async shift(from, delta) {
      const d = conn();
      d.transaction(() => {
        d.prepare('UPDATE events SET global_position = -(global_position + ?) WHERE global_position >= ?').run(delta, from);
        d.prepare('UPDATE events SET global_position = -global_position WHERE global_position < 0').run();
      })();
    },
    async insert(r) {
      conn().prepare('INSERT INTO events (global_position, event_id, stream_id, stream_revision, type, schema_version, data, metadata, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)')
        .run(r.position, r.eventId, r.streamId, r.streamRevision, r.type, r.schemaVersion, r.data, r.metadata, bytes(r.hash));
    },
    async swap(a, b) {
      const d = conn();
      d.transaction(() => {
        const ra = d.prepare('SELECT * FROM events WHERE global_position = ?').get(a) as Record<string, unknown>;
        const rb = d.prepare('SELECT * FROM events WHERE global_position = ?').get(b) as Record<string, unknown>;
        d.prepare('DELETE FROM events WHERE global_position IN (?, ?)').run(a, b);
        const ins = d.prepare(`INSERT INTO events (global_position, ${SWAP_COLS.join(', ')}) VALUES (?, ${SWAP_COLS.map(() => '?').join(', ')})`);
        ins.run(a, ...SWAP_COLS.map((c) => rb[c]));
        ins.run(b, ...SWAP_COLS.map((c) => ra[c]));
      })();
    },
    async truncateFrom(p) { conn().prepare('DELETE FROM events WHERE global_position >= ?').run(p); },
    async addCheckpoint(seq, body) { conn().prepare('INSERT INTO audit_checkpoints (seq, body) VALUES (?, ?)').run(seq, body); },
    async clearCheckpoints() { conn().prepare('DELETE FROM audit_checkpoints').run(); },
    async removeCheckpointsFrom(seq) { conn().prepare('DELETE FROM audit_checkpoints WHERE seq >= ?').run(seq); },
    async close() {
      db?.close();
      db = null;
    },
  };
}

export function postgresBackdoor(backend: PostgresBackend, workspaceId: string): Backdoor {
  const s = `"${backend.schema}"`;
  let client: Client | null = null;
  const q = async (text: string, values: unknown[] = []) => {
    if (!client) {
      client = new Client({ connectionString: DATABASE_URL });
      await client.connect();
    }
    return client.query(text, values);
  };
  return {
    workspaceId,
    async open() { return new PostgresEventStore({ backend, workspaceId }); },
    async row(p) { return toRaw((await q(`SELECT * FROM ${s}.events WHERE workspace_id = $1 AND global_position = $2`, [workspaceId, p])).rows[0]); },
    async setData(p, data) { await q(`UPDATE ${s}.events SET data = $3 WHERE workspace_id = $1 AND global_position = $2`, [workspaceId, p, data]); },
    async setHash(p, hash) { await q(`UPDATE ${s}.events SET hash = decode($3, 'hex') WHERE workspace_id = $1 AND global_position = $2`, [workspaceId, p, hash]); },
    async remove(p) { await q(`DELETE FROM ${s}.events WHERE workspace_id = $1 AND global_position = $2`, [workspaceId, p]); },
    async shift(from, delta) {
      await q(`UPDATE ${s}.events SET global_position = -(global_position + $3) WHERE workspace_id = $1 AND global_position >= $2`, [workspaceId, from, delta]);
      await q(`UPDATE ${s}.events SET global_position = -global_position WHERE workspace_id = $1 AND global_position < 0`, [workspaceId]);
    },
    async insert(r) {
      await q(`INSERT INTO ${s}.events (workspace_id, global_position, event_id, stream_id, stream_revision, type, schema_version, data, metadata, hash) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, decode($10, 'hex'))`,
        [workspaceId, r.position, r.eventId, r.streamId, r.streamRevision, r.type, r.schemaVersion, r.data, r.metadata, r.hash]);
    },
    async swap(a, b) {
      // Through a free position: (workspace, event_id) and (workspace, stream, revision) are unique.
      await q('BEGIN');
      await q(`UPDATE ${s}.events SET global_position = -1 WHERE workspace_id = $1 AND global_position = $2`, [workspaceId, a]);
      await q(`UPDATE ${s}.events SET global_position = $2 WHERE workspace_id = $1 AND global_position = $3`, [workspaceId, a, b]);
      await q(`UPDATE ${s}.events SET global_position = $2 WHERE workspace_id = $1 AND global_position = -1`, [workspaceId, b]);
      // Now the rows sit at each other's positions; the positions are what the chain must catch.
      await q('COMMIT');
    },
    async truncateFrom(p) { await q(`DELETE FROM ${s}.events WHERE workspace_id = $1 AND global_position >= $2`, [workspaceId, p]); },
    async addCheckpoint(seq, body) { await q(`INSERT INTO ${s}.audit_checkpoints (workspace_id, seq, body) VALUES ($1, $2, $3)`, [workspaceId, seq, body]); },
    async clearCheckpoints() { await q(`DELETE FROM ${s}.audit_checkpoints WHERE workspace_id = $1`, [workspaceId]); },
    async removeCheckpointsFrom(seq) { await q(`DELETE FROM ${s}.audit_checkpoints WHERE workspace_id = $1 AND seq >= $2`, [workspaceId, seq]); },
    async close() {
      await (client as Client | null)?.end();
      client = null;
    },
  };
}
