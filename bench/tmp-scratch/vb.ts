import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { SqliteEventStore } from '../../src/events/store/sqlite';
import type { NewEvent } from '../../src/events/envelope';
import { newUuidV7 } from '../../src/events/ids';
import { storePages, verifyStore, writeCheckpoint } from '../../src/audit/checkpointer';
import { generateAuditKey } from '../../src/audit/keys';
import { chainHash } from '../../src/events/chain';
const PAYLOAD = { fingerprint: 'f'.repeat(40), nodeId: 'node-0000000000', reason: 'r'.repeat(180), confidence: 'low' };
const META = { principal: 'agent:bench', workspaceId: 'bench', correlationId: 'c', causationId: null, occurredAt: '2026-01-01T00:00:00.000Z' } as const;
const makeEvent = (): NewEvent => ({ eventId: newUuidV7(), type: 'SuppressionFactRecorded', schemaVersion: 1, data: PAYLOAD, metadata: { ...META } });
async function main() {
  const n = 100000;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vb-'));
  const file = path.join(dir, 'w.db');
  const store = new SqliteEventStore({ file, workspaceId: 'bench', synchronous: 'OFF' });
  for (let i = 0; i < n; i += 100) await store.append(`s-${(i / 100) % 1000}`, 'any', Array.from({ length: 100 }, makeEvent));
  const key = generateAuditKey().key;
  await writeCheckpoint(store, key, new Date());
  const cpu = async (label: string, f: () => Promise<unknown> | unknown) => { const t = process.cpuUsage(); const w = performance.now(); await f(); const u = process.cpuUsage(t); console.log(label.padEnd(28), 'cpu µs/ev', ((u.user + u.system) / n).toFixed(2), 'wall', ((performance.now() - w) * 1000 / n).toFixed(2)); };
  const db = new Database(file, { readonly: true });
  for (let r = 0; r < 2; r++) {
    await cpu('verifyStore', () => verifyStore(store, key.publicKey));
    await cpu('readChainPage pages', async () => { for await (const p of storePages(store)()) void p; });
    await cpu('pages + chainHash', async () => { for await (const p of storePages(store)()) for (const row of p) chainHash(row.prevHash!, row); });
    await cpu('raw iterate all cols', () => { const s = db.prepare('SELECT global_position, event_id, stream_id, stream_revision, type, schema_version, data, metadata, prev_hash, hash FROM events ORDER BY global_position').raw(true); let c = 0; for (const row of s.iterate()) c += (row as unknown[]).length; return c; });
    await cpu('raw all() paged', () => { const s = db.prepare('SELECT global_position, event_id, stream_id, stream_revision, type, schema_version, data, metadata, prev_hash, hash FROM events WHERE global_position > ? ORDER BY global_position LIMIT 1000').raw(true); let after = 0; for (;;) { const rows = s.all(after) as unknown[][]; if (!rows.length) break; after = rows[rows.length - 1][0] as number; } });
  }
  await store.close(); db.close(); fs.rmSync(dir, { recursive: true, force: true });
}
main();
