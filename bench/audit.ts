// npm run bench:audit [-- --events 200000 --rounds 5]   (REVIEW_LEDGER_VERIFY_THREADS=1: the streaming pass only)
// How fast `audit verify` recomputes a workspace's chain from a SQLite store (rows read, every hash
// recomputed, links and the signed checkpoint checked), and the raw limit in the same run: reading
// the same rows and computing one bare sha256 per row with no verification. Then the audit read's chain
// status (src/audit/status.ts) under appends: 20 reads, each after 10 more events, against one whole
// verification of the same log (what every such read cost before it verified only what was added).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createHash } from 'node:crypto';
import { SqliteEventStore } from '../src/stores/sqlite/sqlite-event-store';
import type { NewEvent } from '../src/events/envelope';
import { newUuidV7 } from '../src/events/ids';
import { storePages, verifyStore, verifyThreadsFrom, writeCheckpoint } from '../src/audit/checkpointer';
import { generateAuditKey } from '../src/audit/keys';
import { auditChainStatus } from '../src/audit/status';
import { SlotMap } from '../src/slots';
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
    // The audit read under appends: the first read verifies the whole log, each later one what was added.
    const ws = { id: 'bench', dir: path.join(dir, 'bench'), store, cache: new SlotMap() };
    const t0 = performance.now();
    await auditChainStatus(ws, new Date());
    const wholeMs = performance.now() - t0;
    const reads: number[] = [];
    const readCpu0 = process.cpuUsage();
    for (let i = 0; i < 20; i++) {
      for (let j = 0; j < 10; j++) await store.append(`s-${j}`, 'any', [makeEvent()]);
      const t = performance.now();
      const s = await auditChainStatus(ws, new Date());
      reads.push(performance.now() - t);
      if (!s.ok || s.headPosition !== n + 10 * (i + 1)) throw new Error(`audit read under appends: ${JSON.stringify(s)}`);
    }
    const readCpu = process.cpuUsage(readCpu0);
    reads.sort((a, b) => a - b);
    const readMs = round(reads[10], 3);
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
    console.log(`audit read under appends (chain status, 20 reads each after 10 appends): median ${readMs} ms, max ${round(reads[19], 3)} ms, process CPU ${round((readCpu.user + readCpu.system) / 1000 / 20, 2)} ms per read and its appends; its first read (the whole log) ${round(wholeMs, 1)} ms`);
    console.log(`target: audit verify ≥ 200,000 events/s; load average now ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
    console.log(JSON.stringify({ bench: 'audit', events: n, rounds, threads, verify_ev_s: verify, verify_1thread_ev_s: seq, verify_1thread_cpu_us: cpu, raw_ev_s: raw, ratio: round(verify / raw, 2), target_ev_s: 200_000, status_read_median_ms: readMs, status_whole_ms: round(wholeMs, 1), wallEvPerS: { verify: verifyStats.wallRate, verify1thread: seqStats.wallRate, raw: rawStats.wallRate }, cpuUsPerEvent: { verify: verifyStats.cpuUs, verify1thread: seqStats.cpuUs, raw: rawStats.cpuUs }, cpuRatioPaired: costRatios(verifyStats, rawStats).cpuPaired, load: { start: loadAtStart, end: loadAverage() }, targetMet: verify >= 200_000 }));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
