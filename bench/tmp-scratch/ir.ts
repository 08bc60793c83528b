import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SqliteEventStore } from '../../src/events/store/sqlite';
import type { NewEvent } from '../../src/events/envelope';
import { newUuidV7 } from '../../src/events/ids';
const PAYLOAD = { fingerprint: 'f'.repeat(40), nodeId: 'node-0000000000', reason: 'r'.repeat(180), confidence: 'low' };
const META = { principal: 'agent:bench', workspaceId: 'bench', correlationId: 'c', causationId: null, occurredAt: '2026-01-01T00:00:00.000Z' } as const;
const makeEvent = (): NewEvent => ({ eventId: newUuidV7(), type: 'SuppressionFactRecorded', schemaVersion: 1, data: PAYLOAD, metadata: { ...META } });
async function main() {
  const [chain, n, sync] = [process.argv[2] === 'on', Number(process.argv[3]), (process.argv[4] ?? 'NORMAL') as 'NORMAL'];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ir-'));
  const store = new SqliteEventStore({ file: path.join(dir, 'x.db'), workspaceId: 'b', synchronous: sync, chain });
  const producers = 50; const per = Math.ceil(n / producers);
  // warm-up: same code paths JIT-compiled in both runs
  await Promise.all(Array.from({ length: producers }, async (_, p) => { for (let i = 0; i < 20; i++) await store.append(`w-${p}`, 'any', [makeEvent()]); }));
  if (n > 0) await Promise.all(Array.from({ length: producers }, async (_, p) => { for (let i = 0; i < per; i++) await store.append(`p-${p}-${i % 20}`, 'any', [makeEvent()]); }));
  await store.close(); fs.rmSync(dir, { recursive: true, force: true });
}
main();
