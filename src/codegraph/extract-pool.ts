import * as os from 'node:os';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import { extractFacts } from './extract';
import type { FileFacts } from './facts';
import { loadGrammar } from './languages/grammar-runtime';

/** One blob's facts and their JSON text (what the facts cache stores). */
export interface ExtractedFacts {
  facts: FileFacts;
  json: string;
}

interface Pending {
  resolve: (f: ExtractedFacts) => void;
  reject: (e: Error) => void;
}
interface Job extends Pending {
  language: string;
  text: string;
}
type Slot = { worker: Worker; inFlight: Map<number, Job>; dead: boolean };

/**
 * Small messages: several in flight per worker keep it busy while results travel back and while this
 * thread is busy reading the next blobs (each result is what lets this thread send the next job).
 */
const MAX_IN_FLIGHT = 16;

function startWorker(): Worker {
  const ext = path.extname(__filename);
  const entry = path.join(__dirname, `extract-worker${ext}`);
  if (ext !== '.ts') return new Worker(entry);
  const register = path.resolve(__dirname, '../../tools/ts-register.js');
  return new Worker(`require(${JSON.stringify(register)}); require(${JSON.stringify(entry)});`, { eval: true });
}

/**
 * Parsing and the tags query are CPU-bound and synchronous: a cold index of a whole repository only
 * uses more than one core through worker threads. Each worker loads a grammar once, on first use. A
 * worker that dies hands its jobs back to this thread, so a job never fails because of the pool.
 */
export class ExtractPool {
  private readonly slots: Slot[] = [];
  private readonly queue: Job[] = [];
  private nextId = 0;

  constructor(readonly size: number) {
    for (let i = 0; i < size; i++) {
      const worker = startWorker();
      const slot: Slot = { worker, inFlight: new Map(), dead: false };
      worker.unref();
      worker.on('message', (m: { id: number; json?: string; error?: string }) => {
        const p = slot.inFlight.get(m.id);
        slot.inFlight.delete(m.id);
        if (p) {
          if (m.json !== undefined) p.resolve({ facts: JSON.parse(m.json) as FileFacts, json: m.json });
          else p.reject(new Error(m.error ?? 'extract worker failed'));
        }
        if (slot.inFlight.size === 0) worker.unref();
        this.dispatch();
      });
      const fail = () => {
        if (slot.dead) return;
        slot.dead = true;
        // Its jobs go back to the queue: another worker (or this thread) runs them.
        this.queue.unshift(...slot.inFlight.values());
        slot.inFlight.clear();
        this.dispatch();
      };
      worker.on('error', fail);
      worker.on('exit', fail);
      this.slots.push(slot);
    }
  }

  /** Facts of one text, parsed on a worker, with their JSON text. */
  run(language: string, text: string): Promise<ExtractedFacts> {
    return new Promise((resolve, reject) => {
      this.queue.push({ language, text, resolve, reject });
      this.dispatch();
    });
  }

  private dispatch(): void {
    const live = this.slots.filter((s) => !s.dead);
    if (!live.length) {
      for (const j of this.queue.splice(0)) {
        loadGrammar(j.language).then((g) => {
          const json = JSON.stringify(extractFacts(g, j.text));
          j.resolve({ facts: JSON.parse(json) as FileFacts, json });
        }, j.reject);
      }
      return;
    }
    for (const slot of live) {
      while (this.queue.length && slot.inFlight.size < MAX_IN_FLIGHT) {
        const job = this.queue.shift()!;
        const id = this.nextId++;
        slot.inFlight.set(id, job);
        if (slot.inFlight.size === 1) slot.worker.ref();
        slot.worker.postMessage({ id, language: job.language, text: job.text });
      }
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
  }
}

let shared: ExtractPool | undefined | null;

/** The process-wide pool (one worker per core, at most 4); null on a single core, where it would only add overhead. */
export function sharedExtractPool(): ExtractPool | null {
  if (shared === undefined) {
    const cores = typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length;
    shared = cores > 1 ? new ExtractPool(Math.min(cores, 4)) : null;
  }
  return shared;
}

export async function closeSharedExtractPool(): Promise<void> {
  const pool = shared;
  shared = undefined;
  await pool?.close();
}
