import * as os from 'node:os';
import { isMainThread, type Worker } from 'node:worker_threads';
import type { Layout } from './kernel';
import type { PngErrorCode } from './png';
import { startVisualWorker } from './threads';

/**
 * One helper thread that takes half of a single large comparison (issue 18): it may decode the head
 * while this thread decodes the base, and it compares, indexes and compresses the lower half of the
 * rows while this thread does the upper half, all in SharedArrayBuffers; nothing is copied back but
 * the compressed half. Exact
 * by construction: the comparison of a pixel reads the whole images (borders included) and writes
 * only its own mark, and a row's palette indices depend on that row alone (diff.ts).
 *
 * Only on the main thread of a process with at least two cores: the pool's workers already keep the
 * cores busy with one pair each, and nested threads would only compete with them.
 */

/** Below this many pixels a pair is compared in one thread (the hand-off costs about a millisecond). */
export const SPLIT_MIN_PIXELS = 1 << 20;

export type BandRequest = { op: 'decode'; png: Uint8Array; into?: { memory: WebAssembly.Memory; layout: Layout } } | BandMatchRequest | BandKernelRequest;

/** Compare, index and compress rows [fromRow, toRow) of a pair in a kernel workspace (kernel.ts). */
export interface BandKernelRequest {
  op: 'kernel';
  memory: WebAssembly.Memory;
  layout: Layout;
  fromRow: number;
  toRow: number;
}

export interface BandMatchRequest {
  op: 'match';
  base: SharedArrayBuffer;
  head: SharedArrayBuffer;
  width: number;
  height: number;
  marks: SharedArrayBuffer;
  markedRows: SharedArrayBuffer;
  indices: SharedArrayBuffer;
  sameRows: SharedArrayBuffer;
  fromRow: number;
  toRow: number;
}
export type BandReply =
  | { ok: true; count: number; segment: { deflated: Uint8Array; adler: number; length: number } }
  | { ok: true; decoded: { width: number; height: number; data: SharedArrayBuffer } }
  | { ok: true; decodedInto: true }
  | { ok: false; malformed?: boolean; code?: PngErrorCode; message: string };

export class BandHelper {
  private readonly worker: Worker;
  private readonly pending = new Map<number, (reply: BandReply) => void>();
  private nextId = 0;
  dead = false;

  constructor() {
    this.worker = startVisualWorker('band-worker');
    this.worker.unref();
    this.worker.on('message', (m: { id: number; reply: BandReply }) => {
      const resolve = this.pending.get(m.id);
      this.pending.delete(m.id);
      if (this.pending.size === 0) this.worker.unref();
      resolve?.(m.reply);
    });
    const fail = (reason: string) => {
      if (this.dead) return;
      this.dead = true;
      for (const resolve of this.pending.values()) resolve({ ok: false, message: `band helper failed: ${reason}` });
      this.pending.clear();
    };
    this.worker.on('error', (err) => fail(err.message));
    this.worker.on('exit', (code) => fail(`exited with code ${code}`));
  }

  call(request: BandRequest): Promise<BandReply> {
    if (this.dead) return Promise.resolve({ ok: false, message: 'band helper failed' });
    return new Promise((resolve) => {
      const id = this.nextId++;
      this.pending.set(id, resolve);
      this.worker.ref();
      this.worker.postMessage({ id, request });
    });
  }

  async close(): Promise<void> {
    this.dead = true;
    await this.worker.terminate();
  }
}

let helper: BandHelper | undefined;

/** Pairs compared split in this process, and how many of them the helper could not finish (diagnostics, tests). */
export const splitStats = { pairs: 0, helperFailures: 0 };

/** The process's helper thread, started on first use; undefined where a split does not pay (see above). */
export function bandHelper(): BandHelper | undefined {
  if (!isMainThread || os.availableParallelism() < 2) return undefined;
  if (!helper || helper.dead) helper = new BandHelper();
  return helper;
}

/** Stops the helper thread (tests, shutdown). */
export async function closeBandHelper(): Promise<void> {
  const h = helper;
  helper = undefined;
  await h?.close();
}
