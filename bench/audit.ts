// npm run bench:audit [-- --events 200000 --rounds 5]   (REVIEW_LEDGER_VERIFY_THREADS=1: the streaming pass only)
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
import { alternate, costRatios, fmtSpread, loadAverage } from './support/abab';
import { argValue, round, table } from './support/report';

const PAYLOAD = { fingerprint: 'f'.repeat(40), nodeId: 'node-0000000000', reason: 'r'.repeat(180), confidence: 'low' };
const META = { principal: 'agent:bench', workspaceId: 'bench', correlationId: 'c', causationId: null, occurredAt: '2026-01-01T00:00:00.000Z' } as const;
const makeEvent = (): NewEvent => ({ eventId: newUuidV7(), type: 'SuppressionFactRecorded', schemaVersion: 1, data: PAYLOAD, metadata: { ...META } });

export async function main(args: string[]) {
  const n = Number(argValue(args, '--events') ?? 200_000);
  const rounds = Number(argValue(args, '--rounds') ?? 5);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-bench-audit-'));
  try {
    const store = new SqliteEventStore({ file: path.join(dir, 'workspace.db'), workspaceId: 'bench', synchronous: 'OFF' });
    for (let i = 0; i < n; i += 100) await store.append(`s-${(i / 100) % 1000}`, 'any', Array.from({ length: Math.min(100, n - i) }, makeEvent));
    const key = generateAuditKey().key;
    await writeCheckpoint(store, key, new Date());
    console.log(`bench:audit — audit verify over ${n.toLocaleString('en-US')} events of ~300 bytes (SQLite), ${rounds} alternating rounds, ${os.cpus().length} cores, Node ${process.version}`);
    const threads = verifyThreadsFrom(process.env);
    const loadAtStart = loadAverage();
    const verifyOnce = (threadCount: number) => async () => {
      const r = await verifyStore(store, key.publicKey, { threads: threadCount });
      if (!r.ok || r.events !== n) throw new Error(`verify (${threadCount} threads) failed: ${JSON.stringify(r.problems[0])}`);
      return n;
    };
    // The raw limit: the same rows read and one bare sha256 each, no verification.
    const rawOnce = async () => {
      let count = 0;
      for await (const page of storePages(store)()) for (const row of page) count += createHash('sha256').update(row.data).digest('hex').length > 0 ? 1 : 0;
      return count;
    };
    // A B C A B C …: the store's verify (its worker threads), the one-thread streaming pass, the raw read.
    const [verifyStats, seqStats, rawStats] = await alternate(rounds, [
      { name: `audit verify (${threads} thread${threads > 1 ? 's' : ''})`, run: verifyOnce(threads) },
      { name: 'audit verify (1 thread, streaming)', run: verifyOnce(1) },
      { name: 'raw read + sha256', run: rawOnce },
    ]);
    await store.close();
    const verify = verifyStats.wallRate.median;
    const seq = seqStats.wallRate.median;
    const cpu = seqStats.cpuUs.median;
    const raw = rawStats.wallRate.median;
    console.log(table([
      { operation: `audit verify (store, ${threads} thread${threads > 1 ? 's' : ''})`, 'events/s': verify, 'raw read + sha256 ev/s': raw, 'verify/raw': round(verify / raw, 2) },
      { operation: 'audit verify (1 thread, streaming)', 'events/s': seq, 'raw read + sha256 ev/s': raw, 'verify/raw': round(seq / raw, 2) },
    ]));
    for (const st of [verifyStats, seqStats, rawStats]) console.log(`${st.name}: wall ev/s ${fmtSpread(st.wallRate)}, CPU µs/event (whole process) ${fmtSpread(st.cpuUs)} (min / median / max)`);
    console.log(`1-thread verify CPU: ${cpu} µs/event (= ${Math.round(1e6 / cpu).toLocaleString('en-US')} events/s of one idle core)`);
    console.log(`target: audit verify ≥ 200,000 events/s; load average now ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
    console.log(JSON.stringify({ bench: 'audit', events: n, rounds, threads, verify_ev_s: verify, verify_1thread_ev_s: seq, verify_1thread_cpu_us: cpu, raw_ev_s: raw, ratio: round(verify / raw, 2), target_ev_s: 200_000, wallEvPerS: { verify: verifyStats.wallRate, verify1thread: seqStats.wallRate, raw: rawStats.wallRate }, cpuUsPerEvent: { verify: verifyStats.cpuUs, verify1thread: seqStats.cpuUs, raw: rawStats.cpuUs }, cpuRatioPaired: costRatios(verifyStats, rawStats).cpuPaired, load: { start: loadAtStart, end: loadAverage() }, targetMet: verify >= 200_000 }));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
