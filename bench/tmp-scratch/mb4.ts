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
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mb4-'));
  const sync = (process.argv[2] ?? 'NORMAL') as 'NORMAL';
  const stores = { on: new SqliteEventStore({ file: path.join(dir, 'on.db'), workspaceId: 'b', synchronous: sync, chain: true }), off: new SqliteEventStore({ file: path.join(dir, 'off.db'), workspaceId: 'b', synchronous: sync, chain: false }) };
  const res: Record<string, number[]> = { on: [], off: [], onw: [], offw: [] };
  const per = 400, producers = 50;
  for (let r = 0; r < 8; r++) for (const k of (r % 2 ? ['on', 'off'] : ['off', 'on']) as Array<'on' | 'off'>) {
    const store = stores[k];
    const t = process.cpuUsage(); const w = performance.now();
    await Promise.all(Array.from({ length: producers }, async (_, p) => { for (let i = 0; i < per; i++) await store.append(`p-${p}-${i % 20}`, 'any', [makeEvent()]); }));
    const u = process.cpuUsage(t);
    res[k].push((u.user + u.system) / (per * producers)); res[k + 'w'].push((performance.now() - w) * 1000 / (per * producers));
  }
  const med = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
  console.log(sync, 'cpu µs/ev on', med(res.on).toFixed(2), 'off', med(res.off).toFixed(2), 'ratio(off/on)', (med(res.off) / med(res.on)).toFixed(3), '| wall on', med(res.onw).toFixed(2), 'off', med(res.offw).toFixed(2), 'ratio', (med(res.offw) / med(res.onw)).toFixed(3));
  await stores.on.close(); await stores.off.close(); fs.rmSync(dir, { recursive: true, force: true });
}
main();
