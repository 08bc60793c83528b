import * as os from 'node:os';
import type { Worker } from 'node:worker_threads';
import { runDiffJob, type CompareOptions, type DiffJob, type DiffJobResult } from './diff';
import { startVisualWorker } from './threads';

interface Pending {
  resolve: (r: DiffJobResult) => void;
}
interface Queued extends Pending {
  job: DiffJob;
}
type Slot = { worker: Worker; inFlight: Map<number, Pending>; dead: boolean };

/**
 * Jobs in flight per worker: two, so a worker starts its next decode while the previous result travels
 * back, yet a PR with hundreds of 1080p snapshots never has more than two decoded pairs per worker in
 * memory.
 */
const MAX_IN_FLIGHT = 2;

/**
 * A fixed set of worker threads running diff jobs. Decoding and comparing are CPU-bound, synchronous
 * JavaScript, so a PR with many snapshots only uses more than one core through workers. A worker that
 * dies fails its in-flight job with an error result (a per-snapshot error), never the computation.
 */
export class DiffPool {
  private readonly workers: Slot[] = [];
  private readonly queue: Queued[] = [];
  private nextId = 0;

  constructor(size: number) {
    for (let i = 0; i < size; i++) {
      const worker = startVisualWorker('worker');
      const slot: Slot = { worker, inFlight: new Map<number, Pending>(), dead: false };
      // Idle workers must not keep the process alive (the pool outlives computations); busy ones must.
      worker.unref();
      worker.on('message', (m: { id: number; result: DiffJobResult }) => {
        const pending = slot.inFlight.get(m.id);
        slot.inFlight.delete(m.id);
        pending?.resolve(m.result);
        this.dispatch();
        if (slot.inFlight.size === 0) worker.unref();
      });
      const fail = (reason: string) => {
        if (slot.dead) return;
        slot.dead = true;
        for (const p of slot.inFlight.values()) p.resolve({ ok: false, error: `diff worker failed: ${reason}` });
        slot.inFlight.clear();
        this.dispatch();
      };
      worker.on('error', (err) => fail(err.message));
      worker.on('exit', (code) => fail(`exited with code ${code}`));
      this.workers.push(slot);
    }
  }

  run(job: DiffJob): Promise<DiffJobResult> {
    return new Promise((resolve) => {
      this.queue.push({ job, resolve });
      this.dispatch();
    });
  }

  /** Hands queued jobs to live workers with room; with no live worker left, runs them in this thread. */
  private dispatch(): void {
    const live = this.workers.filter((w) => !w.dead);
    if (live.length === 0) {
      for (const q of this.queue.splice(0)) void runDiffJob(q.job).then(q.resolve);
      return;
    }
    for (const slot of live) {
      while (slot.inFlight.size < MAX_IN_FLIGHT && this.queue.length > 0) {
        const { job, resolve } = this.queue.shift()!;
        const id = this.nextId++;
        slot.inFlight.set(id, { resolve });
        slot.worker.ref();
        slot.worker.postMessage({ id, job });
      }
    }
  }

  get live(): number {
    return this.workers.filter((w) => !w.dead).length;
  }

  async close(): Promise<void> {
    for (const w of this.workers) w.dead = true;
    await Promise.all(this.workers.map((w) => w.worker.terminate()));
  }
}

export interface RunDiffJobsOptions {
  /** Worker threads to use; default `os.availableParallelism()`. 1 runs everything in this thread. */
  parallelism?: number;
  /** For jobs run in this thread: whether a large pair may use the band helper thread (diff.ts). */
  split?: CompareOptions['split'];
}

const sharedPools = new Map<number, DiffPool>();

/**
 * The process-wide pool of `size` workers, started on first use and kept (idle workers are unref'd,
 * so they never hold the process open): a server computing PR after PR pays the worker start-up once
 * rather than per computation. A pool whose workers all died is replaced.
 */
export function sharedDiffPool(size: number): DiffPool {
  let pool = sharedPools.get(size);
  if (!pool || pool.live === 0) sharedPools.set(size, (pool = new DiffPool(size)));
  return pool;
}

/** Stops the shared pools (tests, shutdown). */
export async function closeSharedDiffPools(): Promise<void> {
  const pools = [...sharedPools.values()];
  sharedPools.clear();
  await Promise.all(pools.map((p) => p.close()));
}

/** Runs diff jobs, in the shared worker pool when there are at least two and more than one core. Results are in job order. */
export async function runDiffJobs(jobs: DiffJob[], options: RunDiffJobsOptions = {}): Promise<DiffJobResult[]> {
  const parallelism = Math.max(1, options.parallelism ?? os.availableParallelism());
  if (jobs.length === 0) return [];
  if (parallelism === 1 || jobs.length < 2) {
    const results: DiffJobResult[] = [];
    for (const job of jobs) results.push(await runDiffJob(job, { split: options.split }));
    return results;
  }
  const pool = sharedDiffPool(parallelism);
  return Promise.all(jobs.map((job) => pool.run(job)));
}
