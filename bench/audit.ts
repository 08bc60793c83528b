// npm run bench:audit [-- --events 200000 --rounds 3]   (REVIEW_LEDGER_VERIFY_THREADS=1: the streaming pass only)
// How fast `audit verify` recomputes a workspace's chain from a SQLite store (rows read, every hash
// recomputed, links and the signed checkpoint checked), and the raw limit in the same run: reading
// the same rows and computing one bare sha256 per row with no verification.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createHash } from 'node:crypto';
import { SqliteEventStore } from '../src/stores/sqlite/sqlite-event-store';
import type { NewEvent } from '../src/events/envelope';
import { newUuidV7 } from '../src/events/ids';
import { storePages, verifyStore, verifyThreadsFrom, writeCheckpoint } from '../src/audit/checkpointer';
import { generateAuditKey } from '../src/audit/keys';
import { argValue, median, round, table } from './support/report';

const PAYLOAD = { fingerprint: 'f'.repeat(40), nodeId: 'node-0000000000', reason: 'r'.repeat(180), confidence: 'low' };
const META = { principal: 'agent:bench', workspaceId: 'bench', correlationId: 'c', causationId: null, occurredAt: '2026-01-01T00:00:00.000Z' } as const;
const makeEvent = (): NewEvent => ({ eventId: newUuidV7(), type: 'SuppressionFactRecorded', schemaVersion: 1, data: PAYLOAD, metadata: { ...META } });

export async function main(args: string[]) {
  const n = Number(argValue(args, '--events') ?? 200_000);
  const rounds = Number(argValue(args, '--rounds') ?? 3);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-bench-audit-'));
  try {
    const store = new SqliteEventStore({ file: path.join(dir, 'workspace.db'), workspaceId: 'bench', synchronous: 'OFF' });
    for (let i = 0; i < n; i += 100) await store.append(`s-${(i / 100) % 1000}`, 'any', Array.from({ length: Math.min(100, n - i) }, makeEvent));
    const key = generateAuditKey().key;
    await writeCheckpoint(store, key, new Date());
    console.log(`bench:audit — audit verify over ${n.toLocaleString('en-US')} events of ~300 bytes (SQLite), ${rounds} alternating rounds, ${os.cpus().length} cores, Node ${process.version}`);
    const threads = verifyThreadsFrom(process.env);
    const verifyRates: number[] = [];
    const seqRates: number[] = [];
    const seqCpu: number[] = [];
    const rawRates: number[] = [];
    const timeVerify = async () => {
      const t = performance.now();
      const r = await verifyStore(store, key.publicKey, { threads });
      if (!r.ok || r.events !== n) throw new Error(`verify failed: ${JSON.stringify(r.problems[0])}`);
      verifyRates.push((n / (performance.now() - t)) * 1000);
      // The one-thread streaming pass, for comparison (and its CPU per event, steady under load).
      const t1 = performance.now();
      const c1 = process.cpuUsage();
      const r1 = await verifyStore(store, key.publicKey, { threads: 1 });
      const u1 = process.cpuUsage(c1);
      if (!r1.ok || r1.events !== n) throw new Error(`verify (1 thread) failed: ${JSON.stringify(r1.problems[0])}`);
      seqRates.push((n / (performance.now() - t1)) * 1000);
      seqCpu.push((u1.user + u1.system) / n);
    };
    const timeRaw = async () => {
      const t = performance.now();
      let count = 0;
      for await (const page of storePages(store)()) for (const row of page) count += createHash('sha256').update(row.data).digest('hex').length > 0 ? 1 : 0;
      rawRates.push((count / (performance.now() - t)) * 1000);
    };
    for (let i = 0; i < rounds; i++) {
      if (i % 2 === 0) {
        await timeVerify();
        await timeRaw();
      } else {
        await timeRaw();
        await timeVerify();
      }
    }
    await store.close();
    const verify = Math.round(median(verifyRates));
    const seq = Math.round(median(seqRates));
    const cpu = round(median(seqCpu), 2);
    const raw = Math.round(median(rawRates));
    console.log(table([
      { operation: `audit verify (store, ${threads} thread${threads > 1 ? 's' : ''})`, 'events/s': verify, 'raw read + sha256 ev/s': raw, 'verify/raw': round(verify / raw, 2) },
      { operation: 'audit verify (1 thread, streaming)', 'events/s': seq, 'raw read + sha256 ev/s': raw, 'verify/raw': round(seq / raw, 2) },
    ]));
    console.log(`1-thread verify CPU: ${cpu} µs/event (= ${Math.round(1e6 / cpu).toLocaleString('en-US')} events/s of one idle core)`);
    console.log(`target: audit verify ≥ 200,000 events/s; load average now ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
    console.log(JSON.stringify({ bench: 'audit', events: n, rounds, threads, verify_ev_s: verify, verify_1thread_ev_s: seq, verify_1thread_cpu_us: cpu, raw_ev_s: raw, ratio: round(verify / raw, 2), target_ev_s: 200_000, load: round(os.loadavg()[0], 2), targetMet: verify >= 200_000 }));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
