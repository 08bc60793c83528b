import { createHash } from 'node:crypto';
import { decodePng, decodePngPair, encodePng, MalformedPngError, PaletteBuilder, pngDimensions, type RgbaImage } from './png';

export { VISUAL_DIFF_OPTIONS } from './options';
import { VISUAL_DIFF_OPTIONS } from './options';

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
  const diff = compareDecoded(a, b, sameRows);
  const { changedPixels } = diff;
  const changedRatio = changedPixels / (a.width * a.height);
  if (changedPixels === 0) return { state: 'unchanged', baseHash, headHash, width: b.width, height: b.height, changedPixels: 0, changedRatio: 0 };
  return { state: 'changed', baseHash, headHash, width: b.width, height: b.height, changedPixels, changedRatio, diffPng: encodeDiffPng(diff) };
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
 * The outcome of comparing two same-sized images: the changed-pixel count, and the diff image in
 * parts — pixelmatch's output for each band of rows that differ, and the base for the rows between,
 * which the diff image shows as pixelmatch's faded background. `renderDiff` assembles the RGBA image;
 * `encodeDiffPng` encodes it without ever drawing the identical rows.
 */
export interface BandedDiff {
  width: number;
  height: number;
  changedPixels: number;
  base: RgbaImage;
  bands: Array<{ from: number; to: number; out: Uint8Array }>;
}

/**
 * Runs pixelmatch on two same-sized images, only over bands of rows that differ (plus the two rows
 * either side its anti-aliasing detector reads). With a position-independent comparison
 * (`checkerboard: false`) this counts and draws exactly what one pixelmatch call over the whole image
 * would, at the cost of the changed rows instead of all rows.
 */
export function compareDecoded(a: RgbaImage, b: RgbaImage, knownSameRows?: Uint8Array): BandedDiff {
  const { width, height } = a;
  const rowBytes = width * 4;
  const changedRows: number[] = [];
  for (let y = 0; y < height; y++) {
    if (knownSameRows?.[y]) continue;
    const rowA = Buffer.from(a.data.buffer, a.data.byteOffset + y * rowBytes, rowBytes);
    const rowB = Buffer.from(b.data.buffer, b.data.byteOffset + y * rowBytes, rowBytes);
    if (!rowA.equals(rowB)) changedRows.push(y);
  }
  let changedPixels = 0;
  const bands: BandedDiff['bands'] = [];
  const rows = (img: Uint8Array, from: number, to: number) => img.subarray(from * rowBytes, to * rowBytes);
  for (const [from, to] of bandsOf(changedRows, height)) {
    const out = new Uint8Array((to - from) * rowBytes);
    changedPixels += pixelmatch(rows(a.data, from, to), rows(b.data, from, to), out, width, to - from, VISUAL_DIFF_OPTIONS);
    bands.push({ from, to, out });
  }
  return { width, height, changedPixels, base: a, bands };
}

/** The diff image as RGBA, exactly as one pixelmatch call over the whole image would draw it. */
export function renderDiff(diff: BandedDiff): RgbaImage {
  const { width, height } = diff;
  const out = new Uint8Array(width * height * 4);
  let cursor = 0;
  for (const band of diff.bands) {
    if (band.from > cursor) drawFadedBackground(diff.base.data, out, cursor * width, band.from * width);
    out.set(band.out, band.from * width * 4);
    cursor = band.to;
  }
  if (cursor < height) drawFadedBackground(diff.base.data, out, cursor * width, height * width);
  return { width, height, data: out };
}

/**
 * Encodes the diff image as a palette PNG straight from its parts: the identical rows are indexed from
 * the base pixels (one luma computation per run of equal pixels) without drawing them, the bands from
 * pixelmatch's output. Falls back to RGBA (via `renderDiff`) past 256 colours.
 */
export function encodeDiffPng(diff: BandedDiff): Buffer {
  const { width, height } = diff;
  const palette = new PaletteBuilder();
  const indices = new Uint8Array(width * height);
  let cursor = 0;
  let fits = true;
  for (const band of diff.bands) {
    if (band.from > cursor) fits &&= indexFadedBackground(diff.base.data, cursor * width, band.from * width, width, palette, indices);
    fits &&= palette.indexPixels(band.out, 0, (band.to - band.from) * width, indices, band.from * width);
    cursor = band.to;
  }
  if (cursor < height) fits &&= indexFadedBackground(diff.base.data, cursor * width, height * width, width, palette, indices);
  return fits ? palette.encode(indices, width, height) : encodePng(renderDiff(diff));
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
 * towards white by `alpha`, stored into a Uint8Array (so truncated; it always lies in [0, 255]).
 * The tests check both users below stay byte-identical to pixelmatch.
 */
function fadedGrey(img: Uint8Array, o: number): number {
  const val = 255 + (img[o] * 0.29889531 + img[o + 1] * 0.58662247 + img[o + 2] * 0.11448223 - 255) * VISUAL_DIFF_OPTIONS.alpha * img[o + 3] / 255;
  return val | 0;
}

/** Draws the faded background, computing it once per run of equal pixels (long in UI images). */
function drawFadedBackground(img: Uint8Array, out: Uint8Array, fromPixel: number, toPixel: number): void {
  // Int32 views keep the words in int32 registers (Uint32 words above 2^31 become doubles).
  const src32 = new Int32Array(img.buffer, img.byteOffset, img.byteLength >> 2);
  const out32 = new Int32Array(out.buffer, out.byteOffset, out.byteLength >> 2);
  let last = 0;
  let lastWord = 0;
  for (let i = fromPixel; i < toPixel; i++) {
    const c = src32[i];
    if (c !== last || i === fromPixel) {
      const o = i * 4;
      const v = fadedGrey(img, o);
      out[o] = v;
      out[o + 1] = v;
      out[o + 2] = v;
      out[o + 3] = 255;
      last = c;
      lastWord = out32[i];
    } else {
      out32[i] = lastWord;
    }
  }
}

/**
 * Palette indices of the faded background (whole rows), once per run of equal base pixels; a row equal
 * to the one above (flat areas, vertical strokes: most rows of a UI image) copies its indices. False
 * when the palette is full.
 */
function indexFadedBackground(img: Uint8Array, fromPixel: number, toPixel: number, width: number, palette: PaletteBuilder, indices: Uint8Array): boolean {
  const src32 = new Int32Array(img.buffer, img.byteOffset, img.byteLength >> 2);
  const bytes = Buffer.from(img.buffer, img.byteOffset, img.byteLength);
  const rowBytes = width * 4;
  for (let row = fromPixel; row < toPixel; row += width) {
    if (row > fromPixel && bytes.compare(bytes, (row - width) * 4, row * 4, row * 4, row * 4 + rowBytes) === 0) {
      indices.copyWithin(row, row - width, row);
      continue;
    }
    let last = 0;
    let lastIndex = -1;
    for (let i = row; i < row + width; i++) {
      const c = src32[i];
      if (c !== last || lastIndex < 0) {
        lastIndex = palette.grey(fadedGrey(img, i * 4));
        if (lastIndex < 0) return false;
        last = c;
      }
      indices[i] = lastIndex;
    }
  }
  return true;
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
