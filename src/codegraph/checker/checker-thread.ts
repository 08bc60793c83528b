import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { CheckerJob, CheckerJobResult } from './checker-job';

/**
 * One worker thread running TypeScript's checker (checker-job.ts), kept between computations so its parsed
 * SourceFiles are reused. It is the security bound of type-resolved edges: a job that runs past its
 * wall-clock limit, or past the thread's heap limit, is stopped by terminating the thread (the next job
 * starts a new one), whatever the checker was doing; the caller gets `{ ok: false }` and falls back to
 * the syntactic edges. Jobs run one at a time, so each one's limit counts only its own time.
 */
export type CheckerThreadOutcome = { ok: true; result: CheckerJobResult } | { ok: false; reason: 'time' | 'memory' | 'failed'; message: string };

/** Default heap of the checker's thread (a hostile file can make the checker allocate without bound). */
export const CHECKER_HEAP_MB = 1536;

interface Slot {
  worker: Worker;
  heapMb: number;
  pending?: { resolve: (o: CheckerThreadOutcome) => void; timer: NodeJS.Timeout };
}
let slot: Slot | undefined;
let chain: Promise<unknown> = Promise.resolve();

function start(heapMb: number): Slot {
  const ext = path.extname(__filename);
  const entry = path.join(__dirname, `checker-worker${ext}`);
  const resourceLimits = { maxOldGenerationSizeMb: heapMb };
  // From TypeScript sources (tests, benchmarks) through the swc require hook, as the other workers do.
  const worker =
    ext !== '.ts'
      ? new Worker(entry, { resourceLimits })
      : new Worker(`require(${JSON.stringify(path.resolve(__dirname, '../../../tools/ts-register.js'))}); require(${JSON.stringify(entry)});`, { eval: true, resourceLimits });
  const s: Slot = { worker, heapMb };
  worker.unref();
  const finish = (o: CheckerThreadOutcome) => {
    const p = s.pending;
    if (!p) return;
    s.pending = undefined;
    clearTimeout(p.timer);
    worker.unref();
    p.resolve(o);
  };
  worker.on('message', (m: { result?: CheckerJobResult; error?: string }) => finish(m.result ? { ok: true, result: m.result } : { ok: false, reason: 'failed', message: m.error ?? 'no result' }));
  worker.on('error', (err: Error & { code?: string }) => {
    if (slot === s) slot = undefined;
    finish({ ok: false, reason: err.code === 'ERR_WORKER_OUT_OF_MEMORY' ? 'memory' : 'failed', message: err.message });
  });
  worker.on('exit', (code) => {
    if (slot === s) slot = undefined;
    finish({ ok: false, reason: 'failed', message: `checker thread exited with code ${code}` });
  });
  return s;
}

/**
 * Runs `job` on the checker thread, stopping it after `limitMs` of wall-clock time, or when `signal`
 * aborts (the computation was stopped: its caller throws the reason). The thread's heap is `heapMb`: a
 * thread kept from a job with another limit is replaced first.
 */
export function runOnCheckerThread(job: CheckerJob, limitMs: number, signal?: AbortSignal, heapMb: number = CHECKER_HEAP_MB): Promise<CheckerThreadOutcome> {
  const run = () =>
    new Promise<CheckerThreadOutcome>((resolve) => {
      if (signal?.aborted) return resolve({ ok: false, reason: 'failed', message: 'computation stopped' });
      if (slot && slot.heapMb !== heapMb) {
        void slot.worker.terminate();
        slot = undefined;
      }
      const s = (slot ??= start(heapMb));
      const stop = (outcome: CheckerThreadOutcome) => {
        if (!s.pending) return;
        clearTimeout(s.pending.timer);
        s.pending = undefined;
        if (slot === s) slot = undefined;
        void s.worker.terminate();
        resolve(outcome);
      };
      const onAbort = () => stop({ ok: false, reason: 'failed', message: 'computation stopped' });
      const timer = setTimeout(() => stop({ ok: false, reason: 'time', message: `stopped after ${limitMs} ms` }), limitMs);
      s.pending = {
        resolve: (o) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(o);
        },
        timer,
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      s.worker.ref();
      s.worker.postMessage({ job });
    });
  const next = chain.then(run, run);
  chain = next;
  return next;
}

/** Forgets the parsed SourceFiles the checker thread keeps between Programs (benchmarks measure the cold path with it). */
export function clearCheckerThreadCache(): void {
  slot?.worker.postMessage({ clear: true });
}

/** Stops the checker thread (the next job starts a new one). */
export async function closeCheckerThread(): Promise<void> {
  const s = slot;
  slot = undefined;
  if (s) await s.worker.terminate();
}
