import * as os from 'node:os';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import { extractFacts, PARSE_BUDGET_MS } from './extract';
import { blankLineNumbers, docLinesWithin } from './doc-lines';
import type { FileFacts } from './facts';
import { loadGrammar, type LoadedGrammar } from './languages/grammar-runtime';

/** One blob's facts and their JSON text (what the facts cache stores). */
export interface ExtractedFacts {
  facts: FileFacts;
  json: string;
}

interface Pending {
  resolve: (json: string) => void;
  reject: (e: Error) => void;
}
interface Job extends Pending {
  /** facts: extractFacts; docLines: docLinesWithin (compute's doc lines of a text too slow to parse on the server's thread). */
  kind: 'facts' | 'docLines';
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
      worker.on('message', (m: { id: number; json?: string; error?: string }) => {
        const p = slot.inFlight.get(m.id);
        slot.inFlight.delete(m.id);
        if (p) {
          if (m.json !== undefined) p.resolve(m.json);
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
      // After the listeners: attaching a 'message' listener refs the worker's port again, and a worker that
      // never got a job then kept the process alive (a CLI that used one worker of two never exited).
      worker.unref();
      this.slots.push(slot);
    }
  }

  /** Facts of one text, parsed on a worker, with their JSON text. */
  async run(language: string, text: string): Promise<ExtractedFacts> {
    const json = await this.submit('facts', language, text);
    return { facts: JSON.parse(json) as FileFacts, json };
  }

  /** docLinesWithin on a worker, with the whole PARSE_BUDGET_MS (blank lines only past it). */
  async docLines(language: string, text: string): Promise<number[]> {
    return JSON.parse(await this.submit('docLines', language, text)) as number[];
  }

  private submit(kind: Job['kind'], language: string, text: string): Promise<string> {
    return new Promise((resolve, reject) => {
      this.queue.push({ kind, language, text, resolve, reject });
      this.dispatch();
    });
  }

  private dispatch(): void {
    const live = this.slots.filter((s) => !s.dead);
    if (!live.length) {
      for (const j of this.queue.splice(0)) loadGrammar(j.language).then((g) => j.resolve(runJob(g, j.kind, j.text)), j.reject);
      return;
    }
    for (const slot of live) {
      while (this.queue.length && slot.inFlight.size < MAX_IN_FLIGHT) {
        const job = this.queue.shift()!;
        const id = this.nextId++;
        slot.inFlight.set(id, job);
        if (slot.inFlight.size === 1) slot.worker.ref();
        slot.worker.postMessage({ id, kind: job.kind, language: job.language, text: job.text });
      }
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
  }
}

/** One job's answer as JSON text, on whichever thread runs it. */
export function runJob(grammar: LoadedGrammar, kind: Job['kind'], text: string): string {
  if (kind === 'facts') return JSON.stringify(extractFacts(grammar, text));
  const lines = docLinesWithin(grammar, text, performance.now() + PARSE_BUDGET_MS);
  return JSON.stringify(lines ? [...lines] : blankLineNumbers(text));
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
