import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as crypto from 'node:crypto';
import Database from 'better-sqlite3';
import { SqliteEventStore } from '../../src/events/store/sqlite';
import type { NewEvent } from '../../src/events/envelope';
import { newUuidV7 } from '../../src/events/ids';
import { storePages, verifyStore, writeCheckpoint } from '../../src/audit/checkpointer';
import { generateAuditKey } from '../../src/audit/keys';
const PAYLOAD = { fingerprint: 'f'.repeat(40), nodeId: 'node-0000000000', reason: 'r'.repeat(180), confidence: 'low' };
const META = { principal: 'agent:bench', workspaceId: 'bench', correlationId: 'c', causationId: null, occurredAt: '2026-01-01T00:00:00.000Z' } as const;
const makeEvent = (): NewEvent => ({ eventId: newUuidV7(), type: 'SuppressionFactRecorded', schemaVersion: 1, data: PAYLOAD, metadata: { ...META } });
const H = (crypto as any).hash as (a: string, d: Buffer, e: string) => string;
async function main() {
  const n = 100000;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vb-'));
  const file = path.join(dir, 'w.db');
  const store = new SqliteEventStore({ file, workspaceId: 'bench', synchronous: 'OFF' });
  for (let i = 0; i < n; i += 100) await store.append(`s-${(i / 100) % 1000}`, 'any', Array.from({ length: 100 }, makeEvent));
  const key = generateAuditKey().key;
  await writeCheckpoint(store, key, new Date());
  const cpu = async (label: string, f: () => Promise<unknown> | unknown) => { const t = process.cpuUsage(); const w = performance.now(); const r = await f(); const u = process.cpuUsage(t); console.log(label.padEnd(28), 'cpu µs/ev', ((u.user + u.system) / n).toFixed(2), 'wall', ((performance.now() - w) * 1000 / n).toFixed(2), r); };
  const db = new Database(file, { readonly: true });
  const fr = (c: string) => `length(CAST(${c} AS BLOB)) || ':' || ${c}`;
  const mat = `CAST(${fr('prev_hash')} || length(global_position) || ':' || global_position || ${fr('stream_id')} || length(stream_revision) || ':' || stream_revision || ${fr('type')} || length(schema_version) || ':' || schema_version || ${fr('data')} || ${fr('metadata')} || ${fr('event_id')} AS BLOB)`;
  const s = db.prepare(`SELECT global_position, prev_hash, hash, ${mat} FROM events WHERE global_position > ? ORDER BY global_position LIMIT ?`).raw(true);
  const first = (await storePages(store)()[Symbol.asyncIterator]().next()).value![0];
  const r0 = s.all(0, 1)[0] as [number, string, string, Buffer];
  console.log('material ok:', H('sha256', r0[3], 'hex') === first.hash);
  for (let r = 0; r < 3; r++) {
    await cpu('verifyStore', async () => (await verifyStore(store, key.publicKey)).ok);
    for (const page of [1000, 5000]) await cpu('material+hash p' + page, () => { let after = 0; let bad = 0; let prev = ''; for (;;) { const rows = s.all(after, page) as Array<[number, string, string, Buffer]>; if (!rows.length) break; for (const row of rows) { if (H('sha256', row[3], 'hex') !== row[2]) bad++; if (prev && row[1] !== prev) bad++; prev = row[2]; } after = rows[rows.length - 1][0]; } return bad; });
    await cpu('material iterate', () => { let bad = 0; for (const row of s.iterate(0, 1e9) as Iterable<[number, string, string, Buffer]>) if (H('sha256', row[3], 'hex') !== row[2]) bad++; return bad; });
  }
  await store.close(); db.close(); fs.rmSync(dir, { recursive: true, force: true });
}
main();
