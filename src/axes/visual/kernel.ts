import { createHash } from 'node:crypto';
import { VISUAL_DIFF_OPTIONS } from './options';
import { KERNEL_BASE64, KERNEL_SHA256 } from './wasm/kernel-bytes';

/**
 * The WebAssembly kernel of the visual engine (wasm/match.c, built by tools/build-visual-wasm.sh):
 * pixelmatch's comparison (`match_rows`, the same algorithm as match.ts) and the diff image's palette
 * indices (`index_rows`, as diff.ts `indexDiffRows`), with SIMD to skip equal pixels and equal rows.
 *
 * A comparison runs in a `Workspace`: one shared WebAssembly memory holding both decoded images, the
 * marks, the row flags and the palette indices, so PNG decoding writes the pixels straight where the
 * kernel reads them (no copy) and the band helper thread (split.ts) runs the kernel on the same memory
 * for its rows. Memories are sized for one pair and never grow (views into them never detach); a
 * thread keeps a few idle ones for the next pair of the same size, which saves the page faults of
 * fresh memory.
 */

export interface Layout {
  width: number;
  height: number;
  base: number;
  head: number;
  marks: number;
  markedRows: number;
  sameRows: number;
  indices: number;
  /** Two rows of scratch, one per band (the kernel's `background`). */
  background: [number, number];
  /** Two 128 KiB grey caches for `index_rows`, one per band. */
  greyCaches: [number, number];
  /** Two rows of filtered PNG bytes, one per decoding thread (base here, head in the helper). */
  rawRows: [number, number];
  bytes: number;
}

/** The first 64 KiB stay unused: the module's (unused) stack pointer points there. */
const RESERVED = 65536;
const PAGE = 65536;
/** Pairs whose workspace would exceed this are compared by the TypeScript engine (match.ts). */
const MAX_WORKSPACE_BYTES = 2 ** 31;

const align = (n: number) => (n + 15) & ~15;

export function layoutFor(width: number, height: number): Layout {
  const pixels = width * height;
  let at = RESERVED;
  const take = (n: number) => {
    const o = at;
    at = align(at + n);
    return o;
  };
  const base = take(pixels * 4);
  const head = take(pixels * 4);
  const marks = take(pixels);
  const markedRows = take(height);
  const sameRows = take(height);
  const indices = take(pixels);
  const background: [number, number] = [take(width), take(width)];
  const greyCaches: [number, number] = [take(131072), take(131072)];
  // 8 bytes of slack: a row is copied in at the source's own alignment modulo 8 (kernelUnfilter).
  const rawRows: [number, number] = [take(width * 4 + 8), take(width * 4 + 8)];
  return { width, height, base, head, marks, markedRows, sameRows, indices, background, greyCaches, rawRows, bytes: at };
}

export interface Workspace {
  memory: WebAssembly.Memory;
  layout: Layout;
  base: Uint8Array;
  head: Uint8Array;
  marks: Uint8Array;
  markedRows: Uint8Array;
  sameRows: Uint8Array;
  indices: Uint8Array;
}

interface KernelExports {
  match_rows(img1: number, img2: number, width: number, height: number, marks: number, markedRows: number, fromRow: number, toRow: number, skip: number, maxDelta: number): number;
  unfilter_rgba(src: number, out: number, prev: number, stride: number, filter: number, first: number): void;
  index_rows(base: number, width: number, marks: number, markedRows: number, indices: number, background: number, cache: number, fromRow: number, toRow: number, alpha: number, greyMin: number, mark1: number, mark2: number, mark3: number): void;
  adler_rows(indices: number, width: number, fromRow: number, toRow: number, adler: number): number;
}

let compiled: WebAssembly.Module | null | undefined;

/** The compiled kernel of this thread; null where WebAssembly SIMD or threads are unavailable. */
function kernelModule(): WebAssembly.Module | null {
  if (compiled !== undefined) return compiled;
  const bytes = Buffer.from(KERNEL_BASE64, 'base64');
  if (createHash('sha256').update(bytes).digest('hex') !== KERNEL_SHA256) throw new Error('visual kernel: the embedded match.wasm does not match its recorded sha256');
  try {
    compiled = new WebAssembly.Module(bytes);
  } catch {
    compiled = null;
  }
  return compiled;
}

/** Whether the kernel runs here (tests assert it does on Node 20). */
export function kernelAvailable(): boolean {
  return kernelModule() !== null && typeof SharedArrayBuffer === 'function';
}

const instances = new WeakMap<WebAssembly.Memory, KernelExports>();

function kernelOn(memory: WebAssembly.Memory): KernelExports {
  let k = instances.get(memory);
  if (!k) {
    k = new WebAssembly.Instance(kernelModule()!, { env: { memory } }).exports as unknown as KernelExports;
    instances.set(memory, k);
  }
  return k;
}

function viewsOf(memory: WebAssembly.Memory, layout: Layout): Workspace {
  const buf = memory.buffer;
  const { width, height } = layout;
  const pixels = width * height;
  return {
    memory,
    layout,
    base: new Uint8Array(buf, layout.base, pixels * 4),
    head: new Uint8Array(buf, layout.head, pixels * 4),
    marks: new Uint8Array(buf, layout.marks, pixels),
    markedRows: new Uint8Array(buf, layout.markedRows, height),
    sameRows: new Uint8Array(buf, layout.sameRows, height),
    indices: new Uint8Array(buf, layout.indices, pixels),
  };
}

/**
 * Idle memories of this thread, each with the layout it was last used with (whose marks and row flags
 * `releaseWorkspace` cleared); reused by `acquireWorkspace`.
 */
const idle: Array<{ memory: WebAssembly.Memory; layout: Layout }> = [];
const MAX_IDLE = 2;
const MAX_IDLE_BYTES = 64 << 20;

/**
 * A zeroed workspace for a pair of `width` × `height` (marks, row flags zero), or undefined when the
 * kernel is unavailable or the pair too large for it. Give it back with `releaseWorkspace`.
 */
export function acquireWorkspace(width: number, height: number): Workspace | undefined {
  if (!kernelAvailable()) return undefined;
  const layout = layoutFor(width, height);
  if (layout.bytes > MAX_WORKSPACE_BYTES) return undefined;
  const i = idle.findIndex((m) => m.memory.buffer.byteLength >= layout.bytes && m.memory.buffer.byteLength <= layout.bytes * 2);
  if (i < 0) {
    const pages = Math.ceil(layout.bytes / PAGE);
    return viewsOf(new WebAssembly.Memory({ initial: pages, maximum: pages, shared: true }), layout);
  }
  const reused = idle.splice(i, 1)[0];
  const ws = viewsOf(reused.memory, layout);
  if (reused.layout.width !== width || reused.layout.height !== height) {
    // Another size: what now holds the marks and flags held pixels.
    ws.marks.fill(0);
    ws.markedRows.fill(0);
    ws.sameRows.fill(0);
  }
  return ws;
}

/**
 * Returns a workspace for reuse once nothing reads it any more (the diff PNG is encoded, the helper has
 * answered). Clears what the next pair expects zero: the marks of marked rows and the row flags.
 */
export function releaseWorkspace(ws: Workspace): void {
  if (ws.memory.buffer.byteLength > MAX_IDLE_BYTES) return;
  const { width, height } = ws.layout;
  for (let y = 0; y < height; y++) if (ws.markedRows[y]) ws.marks.fill(0, y * width, (y + 1) * width);
  ws.markedRows.fill(0);
  ws.sameRows.fill(0);
  if (idle.length >= MAX_IDLE) idle.shift();
  idle.push({ memory: ws.memory, layout: ws.layout });
}

/** The views of a workspace received from another thread (the band helper). */
export function attachWorkspace(memory: WebAssembly.Memory, layout: Layout): Workspace {
  return viewsOf(memory, layout);
}

/** pixelmatch's `maxDelta`, computed as pixelmatch computes it (in JavaScript doubles). */
const MAX_DELTA = 35215 * VISUAL_DIFF_OPTIONS.threshold * VISUAL_DIFF_OPTIONS.threshold;

/**
 * match.ts `matchRows` in the kernel over rows [fromRow, toRow) of the workspace's pair (rows with
 * `sameRows[y]` = 1 skipped); marks and `markedRows` are written in the workspace.
 */
export function kernelMatchRows(ws: Workspace, fromRow = 0, toRow = ws.layout.height): number {
  const l = ws.layout;
  return kernelOn(ws.memory).match_rows(l.base, l.head, l.width, l.height, l.marks, l.markedRows, fromRow, toRow, l.sameRows, MAX_DELTA);
}

/**
 * diff.ts `indexDiffRows` in the kernel: palette indices of rows [fromRow, toRow) into the workspace's
 * `indices`; `band` picks the scratch row (0 for this thread, 1 for the helper's band).
 */
export function kernelIndexRows(ws: Workspace, palette: { greyMin: number; markIndex: readonly number[] }, fromRow = 0, toRow = ws.layout.height, band: 0 | 1 = 0): void {
  const l = ws.layout;
  const m = palette.markIndex;
  kernelOn(ws.memory).index_rows(l.base, l.width, l.marks, l.markedRows, l.indices, l.background[band], l.greyCaches[band], fromRow, toRow, VISUAL_DIFF_OPTIONS.alpha, palette.greyMin, m[1], m[2], m[3]);
}

/**
 * The Adler-32 of rows [fromRow, toRow) of the workspace's `indices` as the diff PNG's scanlines hold
 * them (a filter byte 0 before each row): png.ts `deflateIndexSegment`'s checksum, in the kernel.
 */
export function kernelAdlerRows(ws: Workspace, fromRow: number, toRow: number): number {
  const l = ws.layout;
  return kernelOn(ws.memory).adler_rows(l.indices, l.width, fromRow, toRow, 1) >>> 0;
}

/**
 * A row unfilter (png.ts `RowUnfilter`) for an image decoded into this workspace: the filtered row is
 * copied into the workspace's raw row `slot` (0 for the thread decoding the base, 1 for the one
 * decoding the head) and reversed there by the kernel, straight into the image.
 */
export function kernelUnfilter(ws: Workspace, slot: 0 | 1): (raw: Uint8Array, src: number, out: Uint8Array, row: number, stride: number, filter: number, first: boolean) => void {
  const k = kernelOn(ws.memory);
  const at = ws.layout.rawRows[slot];
  // The buffer read once: `memory.buffer` of a shared memory is a runtime call (microseconds) per read.
  const buffer = ws.memory.buffer;
  // A copy into shared memory runs word by word only when source and target agree modulo 8 (V8's
  // relaxed memcpy; else byte by byte, measured 5× slower on 1080p rows, whose raw offsets step by
  // stride + 1): each row lands at `at` + its source's offset modulo 8, one view per offset.
  const rowBytes = ws.layout.width * 4;
  const scratch = Array.from({ length: 8 }, (_, shift) => new Uint8Array(buffer, at + shift, rowBytes));
  return (raw, src, out, row, stride, filter, first) => {
    if (out.buffer !== buffer || stride > rowBytes) throw new Error('kernel unfilter: the image is not in this workspace');
    const shift = (raw.byteOffset + src) & 7;
    scratch[shift].set(raw.subarray(src, src + stride));
    k.unfilter_rgba(at + shift, out.byteOffset + row, out.byteOffset + row - (first ? 0 : stride), stride, filter, first ? 1 : 0);
  };
}
