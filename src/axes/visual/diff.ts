import { createHash } from 'node:crypto';
import { decodePng, decodePngInto, decodePngPair, decodePngSharedAsync, deflateIndexSegment, encodePalettePngStream, fastPathDimensions, joinIndexSegments, MalformedPngError, pngDimensions, type IndexSegment, type RgbaImage } from './png';
import { bandHelper, SPLIT_MIN_PIXELS, splitStats, type BandHelper } from './split';
import { acquireWorkspace, kernelAdlerRows, kernelIndexRows, kernelMatchRows, kernelUnfilter, releaseWorkspace, type Workspace } from './kernel';

export { VISUAL_DIFF_OPTIONS } from './options';
import { matchRows } from './match';
import { VISUAL_DIFF_OPTIONS } from './options';

export interface ImageComparison {
  state: 'unchanged' | 'changed';
  baseHash: string;
  headHash: string;
  /** Of the head image. */
  width?: number;
  height?: number;
  changedPixels: number;
  changedRatio: number;
  /** Set when the images differ in size (then there is no pixel diff image). */
  sizeChanged?: { base: { width: number; height: number }; head: { width: number; height: number } };
  /** The diff image (only for a pixel change); store it under `sha256(diffPng)`. */
  diffPng?: Buffer;
}

export function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

export interface CompareOptions {
  /**
   * Whether one large pair may be split with the band helper thread (split.ts): 'auto' (default) for
   * pairs of at least `SPLIT_MIN_PIXELS` on the main thread of a multi-core process, 'never', or
   * 'always' (any size, wherever a helper can start; the tests use it on small images).
   */
  split?: 'auto' | 'never' | 'always';
  /**
   * 'auto' (default): the WebAssembly kernel (kernel.ts) for same-sized pairs on the PNG fast path,
   * the TypeScript engine (match.ts) otherwise; 'typescript' forces the latter (tests compare both).
   */
  engine?: 'auto' | 'typescript';
  /** Inflate in this thread rather than on libuv's pool (the diff pool's workers; png.ts `inline`). */
  inline?: boolean;
  /** Wall-time budget of one comparison in ms (default `DEFAULT_DIFF_TIME_BUDGET_MS`), see `checkTime`. */
  timeBudgetMs?: number;
}

/**
 * Wall time one comparison may take. The decode budget (png.ts `maxDecodedBytes`) already bounds the
 * work: this is the second bound, checked between phases (after decoding, after comparing), since a
 * synchronous inflate or compare cannot be interrupted; past it the comparison fails `image_too_large`.
 */
export const DEFAULT_DIFF_TIME_BUDGET_MS = 30_000;

function checkTime(startedMs: number, budgetMs: number, phase: string): void {
  const spent = performance.now() - startedMs;
  if (spent >= budgetMs) throw new MalformedPngError(`comparing the images took ${Math.round(spent)} ms by the end of ${phase}, over the per-diff time budget of ${budgetMs} ms`, 'image_too_large');
}

/**
 * Compares a base and a head PNG. Byte-identical files are settled by their hash without decoding;
 * otherwise both are decoded and compared with pixelmatch's comparison (`VISUAL_DIFF_OPTIONS`, see
 * match.ts). A size mismatch is a change of every pixel. Images whose pixels all match within the
 * threshold are `unchanged` even when their bytes differ (a re-encode, an anti-aliasing shift). Throws
 * `MalformedPngError` naming the side for a PNG that does not decode; callers turn that into a
 * per-snapshot error.
 */
export async function compareImages(base: Uint8Array, head: Uint8Array, options: CompareOptions = {}): Promise<ImageComparison> {
  // A memcmp first: identical files (the common case) then cost one hash, not two.
  if (Buffer.from(base.buffer, base.byteOffset, base.byteLength).equals(Buffer.from(head.buffer, head.byteOffset, head.byteLength))) {
    const hash = sha256(head);
    return { state: 'unchanged', baseHash: hash, headHash: hash, ...dimensionsOrUndefined(head), changedPixels: 0, changedRatio: 0 };
  }
  const started = performance.now();
  const budgetMs = options.timeBudgetMs ?? DEFAULT_DIFF_TIME_BUDGET_MS;
  const result = await compareWithin(base, head, options, () => checkTime(started, budgetMs, 'decoding'));
  checkTime(started, budgetMs, 'comparing');
  return result;
}

async function compareWithin(base: Uint8Array, head: Uint8Array, options: CompareOptions, decodedInTime: () => void): Promise<ImageComparison> {
  const baseHash = sha256(base);
  const headHash = sha256(head);
  const mode = options.split ?? 'auto';
  const dims = options.engine === 'typescript' ? undefined : sameFastPathSize(base, head);
  const ws = dims ? acquireWorkspace(dims.width, dims.height) : undefined;
  if (ws) {
    try {
      return await compareInWorkspace(ws, base, head, baseHash, headHash, mode, options.inline ?? false, decodedInTime);
    } finally {
      releaseWorkspace(ws);
    }
  }
  const helper = splitCandidate(base, head, mode) ? bandHelper() : undefined;
  const decoded = helper && sharedPrefix(base, head) < PARALLEL_DECODE_PREFIX ? await decodeInParallel(helper, base, head) : undefined;
  const { base: a, head: b, sameRows } = decoded ?? (await decodePngPair(base, head, { shared: helper !== undefined, inline: options.inline }));
  decodedInTime();
  if (a.width !== b.width || a.height !== b.height) {
    const pixels = Math.max(a.width * a.height, b.width * b.height);
    return {
      state: 'changed',
      baseHash,
      headHash,
      width: b.width,
      height: b.height,
      changedPixels: pixels,
      changedRatio: 1,
      sizeChanged: { base: { width: a.width, height: a.height }, head: { width: b.width, height: b.height } },
    };
  }
  if (helper && isShared(a.data.buffer) && isShared(b.data.buffer)) {
    const same = new Uint8Array(new SharedArrayBuffer(a.height));
    if (sameRows) same.set(sameRows);
    sameRowsOf(a, b, same);
    let differing = 0;
    for (let y = 0; y < a.height; y++) differing += same[y] ? 0 : 1;
    // A change confined to a few rows costs less than the hand-off; a fifth of the rows pays for it.
    if (mode === 'always' || differing * 5 >= a.height) {
      const split = await compareSplit(helper, a, b, same);
      return finish(baseHash, headHash, split.diff, split.indices, split.farSegment);
    }
    return finish(baseHash, headHash, compareDecoded(a, b, same));
  }
  return finish(baseHash, headHash, compareDecoded(a, b, sameRows));
}

/**
 * Below this share of common leading bytes of the two files, the head is decoded by the band helper
 * while this thread decodes the base. Deflate writes the same bytes for the same leading rows, so a
 * long common prefix means the first change comes late and the head will mostly be copied from the
 * base rather than unfiltered (cheaper in one thread); a short one (a change near the top, or all
 * over the image) means the head needs a decode of its own, which then runs in parallel. Only speed
 * depends on it: the pixels decoded are the same either way.
 */
const PARALLEL_DECODE_PREFIX = 0.1;

function sharedPrefix(a: Uint8Array, b: Uint8Array): number {
  const x = Buffer.from(a.buffer, a.byteOffset, a.byteLength);
  const y = Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  let lo = 0;
  let hi = Math.min(x.length, y.length);
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (x.compare(y, 0, mid, 0, mid) === 0) lo = mid;
    else hi = mid - 1;
  }
  return lo / Math.max(x.length, y.length);
}

/**
 * Decodes the base here and the head in the band helper at once, both into shared memory. Undefined
 * when the helper fails (the caller then decodes both here); a PNG that does not decode throws
 * `MalformedPngError` naming the side, the base first, as `decodePngPair` does.
 */
async function decodeInParallel(helper: BandHelper, base: Uint8Array, head: Uint8Array): Promise<{ base: RgbaImage; head: RgbaImage; sameRows?: Uint8Array } | undefined> {
  const headReply = helper.call({ op: 'decode', png: head });
  let a: RgbaImage;
  try {
    a = await decodePngSharedAsync(base);
  } catch (err) {
    await headReply;
    if (err instanceof MalformedPngError) throw err.withSide('base');
    throw err;
  }
  const reply = await headReply;
  if (!reply.ok) {
    if (reply.malformed) throw new MalformedPngError(`head image: ${reply.message}`, reply.code);
    splitStats.helperFailures++;
    return undefined;
  }
  if (!('decoded' in reply)) return undefined;
  return { base: a, head: { width: reply.decoded.width, height: reply.decoded.height, data: new Uint8Array(reply.decoded.data) } };
}

/** Realm-independent (a buffer received from a worker is not an instance of a vm context's class). */
const isShared = (buffer: ArrayBufferLike): boolean => Object.prototype.toString.call(buffer) === '[object SharedArrayBuffer]';

/** Whether a pair may be split (same size on the PNG fast path, large enough unless 'always'). */
function splitCandidate(base: Uint8Array, head: Uint8Array, mode: 'auto' | 'never' | 'always'): boolean {
  if (mode === 'never') return false;
  const dims = sameFastPathSize(base, head);
  return dims !== undefined && (mode === 'always' || dims.width * dims.height >= SPLIT_MIN_PIXELS);
}

/** The common size of two PNGs the fast path decodes; undefined when either is not one or they differ. */
function sameFastPathSize(base: Uint8Array, head: Uint8Array): { width: number; height: number } | undefined {
  const dimsA = fastPathDimensions(base);
  const dimsB = fastPathDimensions(head);
  return dimsA && dimsB && dimsA.width === dimsB.width && dimsA.height === dimsB.height ? dimsA : undefined;
}

/**
 * The kernel path: both images are decoded straight into the workspace's memory (Paeth rows reversed
 * by the kernel), rows equal in both are flagged, and the kernel compares and indexes the rest — split
 * with the band helper thread, which runs the kernel on the same memory, when the pair is large and
 * its change spread over at least a fifth of the rows (as on the TypeScript path).
 */
async function compareInWorkspace(ws: Workspace, base: Uint8Array, head: Uint8Array, baseHash: string, headHash: string, mode: 'auto' | 'never' | 'always', inline: boolean, decodedInTime: () => void): Promise<ImageComparison> {
  const { width, height } = ws.layout;
  const helper = mode === 'always' || (mode === 'auto' && width * height >= SPLIT_MIN_PIXELS) ? bandHelper() : undefined;
  const baseTarget = { out: ws.base, rows: kernelUnfilter(ws, 0) };
  let decoded = false;
  if (helper && sharedPrefix(base, head) < PARALLEL_DECODE_PREFIX) {
    const headReply = helper.call({ op: 'decode', png: head, into: { memory: ws.memory, layout: ws.layout } });
    try {
      decodePngInto(base, baseTarget);
    } catch (err) {
      await headReply;
      if (err instanceof MalformedPngError) throw err.withSide('base');
      throw err;
    }
    const reply = await headReply;
    if (!reply.ok && reply.malformed) throw new MalformedPngError(`head image: ${reply.message}`, reply.code);
    if (!reply.ok) splitStats.helperFailures++;
    decoded = reply.ok;
  }
  if (!decoded) {
    const pair = await decodePngPair(base, head, { inline, targets: { base: baseTarget, head: { out: ws.head, rows: kernelUnfilter(ws, 1) } } });
    if (pair.sameRows) ws.sameRows.set(pair.sameRows);
  }
  decodedInTime();
  const a: RgbaImage = { width, height, data: ws.base };
  sameRowsOf(a, { width, height, data: ws.head }, ws.sameRows);
  const diff: MarkedDiff = { width, height, changedPixels: 0, base: a, marks: ws.marks, markedRows: ws.markedRows };
  let differing = 0;
  for (let y = 0; y < height; y++) differing += ws.sameRows[y] ? 0 : 1;
  if (helper && (mode === 'always' || differing * 5 >= height)) {
    const cut = diffSegmentCut(height);
    const far = helper.call({ op: 'kernel', memory: ws.memory, layout: ws.layout, fromRow: cut, toRow: height });
    diff.changedPixels = kernelMatchRows(ws, 0, cut);
    kernelIndexRows(ws, DIFF_INDEX_PALETTE, 0, cut, 0);
    const reply = await far;
    splitStats.pairs++;
    if (!reply.ok || !('count' in reply)) {
      // The helper died: finish the far band here.
      splitStats.helperFailures++;
      diff.changedPixels += kernelMatchRows(ws, cut, height);
      kernelIndexRows(ws, DIFF_INDEX_PALETTE, cut, height, 1);
      return finish(baseHash, headHash, diff, ws.indices, undefined, ws);
    }
    diff.changedPixels += reply.count;
    const s = reply.segment;
    const farSegment = diff.changedPixels > 0 ? { deflated: Buffer.from(s.deflated.buffer, s.deflated.byteOffset, s.deflated.byteLength), adler: s.adler, length: s.length } : undefined;
    return finish(baseHash, headHash, diff, ws.indices, farSegment, ws);
  }
  diff.changedPixels = kernelMatchRows(ws);
  if (diff.changedPixels > 0) kernelIndexRows(ws, DIFF_INDEX_PALETTE);
  return finish(baseHash, headHash, diff, ws.indices, undefined, ws);
}

/** `ws`: the indices are that workspace's (the kernel then computes the checksum of their scanlines). */
function finish(baseHash: string, headHash: string, diff: MarkedDiff, indices?: Uint8Array, farSegment?: IndexSegment, ws?: Workspace): ImageComparison {
  const { width, height, changedPixels } = diff;
  if (changedPixels === 0) return { state: 'unchanged', baseHash, headHash, width, height, changedPixels: 0, changedRatio: 0 };
  const adlerOf = ws ? (fromRow: number, toRow: number) => kernelAdlerRows(ws, fromRow, toRow) : undefined;
  return { state: 'changed', baseHash, headHash, width, height, changedPixels, changedRatio: changedPixels / (width * height), diffPng: encodeDiffPng(diff, indices, farSegment, adlerOf) };
}

/**
 * The split comparison of one large decoded pair (split.ts): the helper thread compares, indexes and
 * deflates the lower half of the rows while this thread does the upper half, all in shared memory. If
 * the helper fails, this thread finishes its half.
 */
async function compareSplit(helper: BandHelper, a: RgbaImage, b: RgbaImage, sameRows: Uint8Array): Promise<{ diff: MarkedDiff; indices: Uint8Array; farSegment?: IndexSegment }> {
  const { width, height } = a;
  const shared = (n: number) => new Uint8Array(new SharedArrayBuffer(n));
  const marks = shared(width * height);
  const markedRows = shared(height);
  const indices = shared(width * height);
  const cut = diffSegmentCut(height);
  const far = helper.call({
    op: 'match',
    base: a.data.buffer as SharedArrayBuffer,
    head: b.data.buffer as SharedArrayBuffer,
    width,
    height,
    marks: marks.buffer as SharedArrayBuffer,
    markedRows: markedRows.buffer as SharedArrayBuffer,
    indices: indices.buffer as SharedArrayBuffer,
    sameRows: sameRows.buffer as SharedArrayBuffer,
    fromRow: cut,
    toRow: height,
  });
  const near = matchRows(a.data, b.data, width, height, marks, markedRows, 0, cut, sameRows);
  const diff: MarkedDiff = { width, height, changedPixels: near, base: a, marks, markedRows };
  indexDiffRows(diff, indices, 0, cut);
  const farReply = await far;
  if (!farReply.ok || !('count' in farReply)) {
    // The helper died: finish the far band here.
    splitStats.helperFailures++;
    diff.changedPixels += matchRows(a.data, b.data, width, height, marks, markedRows, cut, height, sameRows);
    indexDiffRows(diff, indices, cut, height);
    splitStats.pairs++;
    return { diff, indices };
  }
  diff.changedPixels += farReply.count;
  splitStats.pairs++;
  // The far segment is only worth its bytes when there is a diff image to encode.
  const s = farReply.segment;
  return { diff, indices, farSegment: diff.changedPixels > 0 ? { deflated: Buffer.from(s.deflated.buffer, s.deflated.byteOffset, s.deflated.byteLength), adler: s.adler, length: s.length } : undefined };
}

function dimensionsOrUndefined(bytes: Uint8Array): { width?: number; height?: number } {
  try {
    return pngDimensions(bytes);
  } catch (err) {
    if (err instanceof MalformedPngError) return {};
    throw err;
  }
}

/**
 * The outcome of comparing two same-sized images: the changed-pixel count and the diff image in parts —
 * the base (which pixelmatch draws faded to grey wherever pixels match) and one mark per pixel that
 * differs beyond the threshold (see match.ts). `renderDiff` assembles the RGBA image pixelmatch would
 * draw; `encodeDiffPng` encodes it straight from the parts.
 */
export interface MarkedDiff {
  width: number;
  height: number;
  changedPixels: number;
  base: RgbaImage;
  /** One byte per pixel: 0, or a MARK_* of match.ts. */
  marks: Uint8Array;
  /** Per row, 1 when it holds a mark. */
  markedRows: Uint8Array;
}

/**
 * Compares two same-sized images as pixelmatch does over the whole image (`VISUAL_DIFF_OPTIONS`), at
 * the cost of the rows that differ: rows that `knownSameRows` declares equal, or whose bytes are equal,
 * are skipped (every pixel of them matches). Exact because the comparison of a pixel is independent
 * of its position (`checkerboard: false`) and the anti-aliasing detector sees the image's own borders.
 */
export function compareDecoded(a: RgbaImage, b: RgbaImage, knownSameRows?: Uint8Array): MarkedDiff {
  const { width, height } = a;
  const skip = sameRowsOf(a, b, knownSameRows);
  const marks = new Uint8Array(width * height);
  const markedRows = new Uint8Array(height);
  const changedPixels = matchRows(a.data, b.data, width, height, marks, markedRows, 0, height, skip);
  return { width, height, changedPixels, base: a, marks, markedRows };
}

/** Per row, 1 when the row is equal in both images (known from decoding, or found by a memcmp). */
export function sameRowsOf(a: RgbaImage, b: RgbaImage, knownSameRows?: Uint8Array, fromRow = 0, toRow = a.height): Uint8Array {
  const rowBytes = a.width * 4;
  const same = knownSameRows ? knownSameRows : new Uint8Array(a.height);
  const bufA = Buffer.from(a.data.buffer, a.data.byteOffset, a.data.byteLength);
  const bufB = Buffer.from(b.data.buffer, b.data.byteOffset, b.data.byteLength);
  for (let y = fromRow; y < toRow; y++) {
    if (same[y]) continue;
    const o = y * rowBytes;
    if (bufA.compare(bufB, o, o + rowBytes, o, o + rowBytes) === 0) same[y] = 1;
  }
  return same;
}

/** The colours pixelmatch draws for each mark: diffColor (diffColorAlt defaults to it) and aaColor. */
const MARK_RGBA: ReadonlyArray<readonly [number, number, number, number]> = [
  [0, 0, 0, 0],
  [255, 0, 0, 255],
  [255, 0, 0, 255],
  [255, 255, 0, 255],
];
const MARK_WORD = (() => {
  const words = new Int32Array(MARK_RGBA.length);
  const bytes = new Uint8Array(words.buffer);
  MARK_RGBA.forEach((c, m) => bytes.set(c, m * 4));
  return words;
})();

const ALPHA = VISUAL_DIFF_OPTIONS.alpha;

/**
 * What pixelmatch draws for a matching pixel (its `drawGrayPixel`): the pixel's YIQ luma blended
 * towards white by `alpha`, stored into a Uint8Array (so truncated; it always lies in [0, 255]).
 * The tests check it stays byte-identical to pixelmatch.
 */
function fadedGrey(img: Uint8Array, o: number): number {
  const val = 255 + (img[o] * 0.29889531 + img[o + 1] * 0.58662247 + img[o + 2] * 0.11448223 - 255) * ALPHA * img[o + 3] / 255;
  return val | 0;
}

/**
 * The diff image's palette, fixed: every grey `fadedGrey` can produce (luma 0..255 blended towards
 * white by alpha: ⌊255 − 255·alpha⌋ … 255, 27 levels at 0.1), ascending, then red and yellow. A fixed
 * palette makes a pixel's index a function of that pixel alone, so rows can be indexed in any order
 * (or copied from the row above) and the encoding stays deterministic.
 */
const GREY_MIN = Math.floor(255 - 255 * ALPHA);
const RED_INDEX = 256 - GREY_MIN;
const YELLOW_INDEX = RED_INDEX + 1;
const MARK_INDEX = [0, RED_INDEX, RED_INDEX, YELLOW_INDEX];
/** The palette's layout as the kernel's `index_rows` takes it (kernel.ts). */
export const DIFF_INDEX_PALETTE = Object.freeze({ greyMin: GREY_MIN, markIndex: MARK_INDEX });
const DIFF_PALETTE: number[] = [];
for (let v = GREY_MIN; v <= 255; v++) DIFF_PALETTE.push(v, v, v, 255);
DIFF_PALETTE.push(...MARK_RGBA[1], ...MARK_RGBA[3]);

/** The diff image as RGBA, exactly as one pixelmatch call over the whole image would draw it. */
export function renderDiff(diff: MarkedDiff): RgbaImage {
  const { width, height, marks } = diff;
  const img = diff.base.data;
  const out = new Uint8Array(width * height * 4);
  for (let i = 0, o = 0; i < width * height; i++, o += 4) {
    const v = fadedGrey(img, o);
    out[o] = out[o + 1] = out[o + 2] = v;
    out[o + 3] = 255;
  }
  const out32 = new Int32Array(out.buffer, out.byteOffset, width * height);
  for (let y = 0; y < height; y++) {
    if (!diff.markedRows[y]) continue;
    for (let i = y * width; i < (y + 1) * width; i++) if (marks[i]) out32[i] = MARK_WORD[marks[i]];
  }
  return { width, height, data: out };
}

/**
 * Writes the palette indices of rows [fromRow, toRow) of the diff image into `indices`: the faded grey
 * of the base pixel (computed once per run of equal pixels; a base row equal to the one above copies
 * its indices), the mark's colour where there is one.
 */
export function indexDiffRows(diff: MarkedDiff, indices: Uint8Array, fromRow = 0, toRow = diff.height): void {
  const { width, marks, markedRows } = diff;
  const img = diff.base.data;
  const src32 = new Int32Array(img.buffer, img.byteOffset, width * diff.height);
  const bytes = Buffer.from(img.buffer, img.byteOffset, img.byteLength);
  const rowBytes = width * 4;
  // The background (unmarked) indices of the row above, which marks overwrite in `indices`.
  const background = new Uint8Array(width);
  for (let y = fromRow; y < toRow; y++) {
    const row = y * width;
    const target = indices.subarray(row, row + width);
    if (y > fromRow && bytes.compare(bytes, row * 4 - rowBytes, row * 4, row * 4, row * 4 + rowBytes) === 0) {
      target.set(background);
    } else {
      let last = 0;
      let lastIndex = -1;
      for (let i = row; i < row + width; i++) {
        const c = src32[i];
        if (c !== last || lastIndex < 0) {
          lastIndex = fadedGrey(img, i * 4) - GREY_MIN;
          last = c;
        }
        indices[i] = lastIndex;
      }
      background.set(target);
    }
    if (markedRows[y]) for (let i = row; i < row + width; i++) if (marks[i] !== 0) indices[i] = MARK_INDEX[marks[i]];
  }
}

/**
 * Where the diff image's IDAT stream is cut in two independently compressed segments (so the split
 * comparison compresses the halves in two threads): always the middle row, on every path, so a pair
 * gives the same PNG bytes whether it was compared in one thread or split.
 */
export function diffSegmentCut(height: number): number {
  return height >= 2 ? height >> 1 : height;
}

/**
 * Encodes the diff image (pixelmatch's, pixel for pixel) as a palette PNG straight from its parts.
 * `indices` and the far segment (rows from `diffSegmentCut` on) when the split comparison made them;
 * `adlerOf` the checksum of a segment's scanlines when something faster than png.ts's loop has it.
 */
export function encodeDiffPng(diff: MarkedDiff, indices?: Uint8Array, farSegment?: IndexSegment, adlerOf?: (fromRow: number, toRow: number) => number): Buffer {
  const { width, height } = diff;
  if (!indices) {
    indices = new Uint8Array(width * height);
    indexDiffRows(diff, indices);
  }
  const cut = diffSegmentCut(height);
  const segments = [deflateIndexSegment(indices, width, 0, cut, cut === height, adlerOf?.(0, cut))];
  if (cut < height) segments.push(farSegment ?? deflateIndexSegment(indices, width, cut, height, true, adlerOf?.(cut, height)));
  return encodePalettePngStream(joinIndexSegments(segments), width, height, DIFF_PALETTE);
}

/** One unit of work for the diff pool: compare a pair, or check that an added image decodes. */
export type DiffJob = { kind: 'compare'; base: Uint8Array; head: Uint8Array } | { kind: 'validate'; head: Uint8Array };
export type DiffJobResult =
  | { ok: true; comparison: ImageComparison }
  | { ok: true; validated: { headHash: string; width: number; height: number } }
  | { ok: false; error: string; baseHash?: string; headHash?: string };

/** Runs one job; a PNG that does not decode becomes an error result naming the side, never a throw. */
export async function runDiffJob(job: DiffJob, options: CompareOptions = {}): Promise<DiffJobResult> {
  try {
    if (job.kind === 'compare') return { ok: true, comparison: await compareImages(job.base, job.head, options) };
    const { width, height } = decodePng(job.head);
    return { ok: true, validated: { headHash: sha256(job.head), width, height } };
  } catch (err) {
    const message = err instanceof MalformedPngError ? err.message : `diff failed: ${(err as Error).message ?? String(err)}`;
    return {
      ok: false,
      error: job.kind === 'validate' && !message.startsWith('head') ? `head image: ${message}` : message,
      baseHash: job.kind === 'compare' ? sha256(job.base) : undefined,
      headHash: sha256(job.head),
    };
  }
}
