import { createHash } from 'node:crypto';
import { decodePng, decodePngPair, encodePngCompact, MalformedPngError, pngDimensions, type RgbaImage } from './png';

/**
 * How two images are compared. Every setting is a pixelmatch option, fixed here so that a recompute of
 * the same pair always reaches the same verdict:
 * - `threshold: 0.1` (pixelmatch's default): the YIQ colour distance, 0..1, above which a pixel differs.
 *   It absorbs sub-perceptual noise (re-dithered gradients, GPU rounding) but not a one-step colour
 *   change of a UI element.
 * - `includeAA: false`: pixels pixelmatch recognises as anti-aliasing (a pixel between a darker and a
 *   brighter neighbour, each with 3+ identical siblings) are drawn yellow and not counted, so text that
 *   re-rasterises by a sub-pixel does not hold the gate.
 * - `alpha: 0.1`: the base image is drawn faded to 10 % in the diff image, so the red pixels stand out.
 * - `checkerboard: false`: semi-transparent pixels are blended against white. Pixelmatch's checkerboard
 *   depends on the absolute byte offset of a pixel; blending against white makes the comparison of a
 *   pixel independent of its position, which is what lets us compare only the bands of rows that
 *   differ (see `compareDecoded`) and get exactly the result of comparing the whole image.
 */
export const VISUAL_DIFF_OPTIONS = Object.freeze({ threshold: 0.1, includeAA: false, alpha: 0.1, checkerboard: false });

type Pixelmatch = typeof import('pixelmatch').default;
let pixelmatchFn: Pixelmatch | undefined;

/**
 * pixelmatch 7 is ESM-only. Node ≥ 20.19 `require`s ESM natively (server, CLI, benchmarks, our worker
 * threads), but jest's module system on Node 20 cannot; loading it on first use keeps this module
 * importable everywhere, and `runDiffJobs` sends the work to worker threads (plain Node) when the
 * current runtime cannot load it (see `pixelmatchLoadsInProcess`).
 */
function pixelmatch(...args: Parameters<Pixelmatch>): number {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  pixelmatchFn ??= (require('pixelmatch') as { default: Pixelmatch }).default;
  return pixelmatchFn(...args);
}

export function pixelmatchLoadsInProcess(): boolean {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    pixelmatchFn ??= (require('pixelmatch') as { default: Pixelmatch }).default;
    return typeof pixelmatchFn === 'function';
  } catch {
    return false;
  }
}

/** Pixelmatch's anti-aliasing detector reads neighbours of neighbours: two rows either side. */
const BAND_MARGIN_ROWS = 2;

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

/**
 * Compares a base and a head PNG. Byte-identical files are settled by their hash without decoding;
 * otherwise both are decoded and compared with pixelmatch (`VISUAL_DIFF_OPTIONS`). A size mismatch is a
 * change of every pixel. Images whose pixels all match within the threshold are `unchanged` even when
 * their bytes differ (a re-encode, an anti-aliasing shift). Throws `MalformedPngError` naming the side
 * for a PNG that does not decode; callers turn that into a per-snapshot error.
 */
export async function compareImages(base: Uint8Array, head: Uint8Array): Promise<ImageComparison> {
  // A memcmp first: identical files (the common case) then cost one hash, not two.
  if (Buffer.from(base.buffer, base.byteOffset, base.byteLength).equals(Buffer.from(head.buffer, head.byteOffset, head.byteLength))) {
    const hash = sha256(head);
    return { state: 'unchanged', baseHash: hash, headHash: hash, ...dimensionsOrUndefined(head), changedPixels: 0, changedRatio: 0 };
  }
  const baseHash = sha256(base);
  const headHash = sha256(head);
  const { base: a, head: b, sameRows } = await decodePngPair(base, head);
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
  const { changedPixels, diff } = compareDecoded(a, b, sameRows);
  const changedRatio = changedPixels / (a.width * a.height);
  if (changedPixels === 0) return { state: 'unchanged', baseHash, headHash, width: b.width, height: b.height, changedPixels: 0, changedRatio: 0 };
  return { state: 'changed', baseHash, headHash, width: b.width, height: b.height, changedPixels, changedRatio, diffPng: encodePngCompact(diff) };
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
 * Runs pixelmatch on two same-sized images and draws the diff image. Pixelmatch is only run over bands
 * of rows that differ (plus the two rows either side its anti-aliasing detector reads); the identical
 * rows in between go through pixelmatch's identical-image path, which only draws the faded background.
 * With a position-independent comparison (`checkerboard: false`) this counts and draws exactly what one
 * pixelmatch call over the whole image would, at the cost of the changed rows instead of all rows.
 */
export function compareDecoded(a: RgbaImage, b: RgbaImage, knownSameRows?: Uint8Array): { changedPixels: number; diff: RgbaImage } {
  const { width, height } = a;
  const rowBytes = width * 4;
  const out = new Uint8Array(width * height * 4);
  const changedRows: number[] = [];
  for (let y = 0; y < height; y++) {
    if (knownSameRows?.[y]) continue;
    const start = a.data.byteOffset + y * rowBytes;
    const rowA = Buffer.from(a.data.buffer, start, rowBytes);
    const rowB = Buffer.from(b.data.buffer, b.data.byteOffset + y * rowBytes, rowBytes);
    if (!rowA.equals(rowB)) changedRows.push(y);
  }
  const bands = bandsOf(changedRows, height);
  let changedPixels = 0;
  let cursor = 0;
  const rows = (img: Uint8Array, from: number, to: number) => img.subarray(from * rowBytes, to * rowBytes);
  for (const [from, to] of bands) {
    if (from > cursor) drawFadedBackground(a.data, out, cursor * width, from * width);
    changedPixels += pixelmatch(rows(a.data, from, to), rows(b.data, from, to), rows(out, from, to), width, to - from, VISUAL_DIFF_OPTIONS);
    cursor = to;
  }
  if (cursor < height) drawFadedBackground(a.data, out, cursor * width, height * width);
  return { changedPixels, diff: { width, height, data: out } };
}

/**
 * Half-open row ranges [from, to) covering every changed row with the margin either side. Clusters
 * closer than two margins are merged, so no band's margin reaches into another band's changed rows
 * (which would count them twice).
 */
function bandsOf(changedRows: number[], height: number): Array<[number, number]> {
  const bands: Array<[number, number]> = [];
  for (const y of changedRows) {
    const from = Math.max(0, y - BAND_MARGIN_ROWS);
    const to = Math.min(height, y + BAND_MARGIN_ROWS + 1);
    const last = bands[bands.length - 1];
    if (last && from <= last[1] + BAND_MARGIN_ROWS) last[1] = to;
    else bands.push([from, to]);
  }
  return bands;
}

/**
 * What pixelmatch draws for a matching pixel (its `drawGrayPixel`): the pixel's YIQ luma blended
 * towards white by `alpha`, stored into a Uint8Array (truncating). Computed once per run of equal
 * pixels, which in UI images are long; the band test checks it stays byte-identical to pixelmatch.
 */
function drawFadedBackground(img: Uint8Array, out: Uint8Array, fromPixel: number, toPixel: number): void {
  const alpha = VISUAL_DIFF_OPTIONS.alpha;
  // Int32 views keep the words in int32 registers (Uint32 words above 2^31 become doubles).
  const src32 = new Int32Array(img.buffer, img.byteOffset, img.byteLength >> 2);
  const out32 = new Int32Array(out.buffer, out.byteOffset, out.byteLength >> 2);
  let last = 0;
  let lastWord = 0;
  for (let i = fromPixel; i < toPixel; i++) {
    const c = src32[i];
    if (c !== last || i === fromPixel) {
      const o = i * 4;
      const val = 255 + (img[o] * 0.29889531 + img[o + 1] * 0.58662247 + img[o + 2] * 0.11448223 - 255) * alpha * img[o + 3] / 255;
      out[o] = val;
      out[o + 1] = val;
      out[o + 2] = val;
      out[o + 3] = 255;
      last = c;
      lastWord = out32[i];
    } else {
      out32[i] = lastWord;
    }
  }
}

/** One unit of work for the diff pool: compare a pair, or check that an added image decodes. */
export type DiffJob = { kind: 'compare'; base: Uint8Array; head: Uint8Array } | { kind: 'validate'; head: Uint8Array };
export type DiffJobResult =
  | { ok: true; comparison: ImageComparison }
  | { ok: true; validated: { headHash: string; width: number; height: number } }
  | { ok: false; error: string; baseHash?: string; headHash?: string };

/** Runs one job; a PNG that does not decode becomes an error result naming the side, never a throw. */
export async function runDiffJob(job: DiffJob): Promise<DiffJobResult> {
  try {
    if (job.kind === 'compare') return { ok: true, comparison: await compareImages(job.base, job.head) };
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
