import { createHash } from 'node:crypto';
import { decodePng, decodePngPair, encodePng, MalformedPngError, PaletteBuilder, pngDimensions, type RgbaImage } from './png';

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

/** The diff image as RGBA, exactly as one pixelmatch call over the whole image would draw it. */
export function renderDiff(diff: MarkedDiff): RgbaImage {
  const { width, height, marks } = diff;
  const out = new Uint8Array(width * height * 4);
  drawFadedBackground(diff.base.data, out, 0, width * height);
  const out32 = new Int32Array(out.buffer, out.byteOffset, width * height);
  for (let y = 0; y < height; y++) {
    if (!diff.markedRows[y]) continue;
    for (let i = y * width; i < (y + 1) * width; i++) if (marks[i]) out32[i] = MARK_WORD[marks[i]];
  }
  return { width, height, data: out };
}

/**
 * Encodes the diff image as a palette PNG straight from its parts, in raster order (so the palette,
 * the indices and the bytes are those of encoding `renderDiff`'s image): rows without marks are
 * indexed from the base pixels (one luma computation per run of equal pixels, a row equal to the one
 * above copied), marked rows pixel by pixel. Falls back to RGBA (via `renderDiff`) past 256 colours.
 */
export function encodeDiffPng(diff: MarkedDiff): Buffer {
  const { width, height, marks, markedRows } = diff;
  const palette = new PaletteBuilder();
  const indices = new Uint8Array(width * height);
  const img = diff.base.data;
  const src32 = new Int32Array(img.buffer, img.byteOffset, width * height);
  const markIndex = new Int16Array(MARK_RGBA.length).fill(-1);
  let fits = true;
  for (let y = 0; y < height && fits; ) {
    if (!markedRows[y]) {
      let end = y + 1;
      while (end < height && !markedRows[end]) end++;
      fits = indexFadedBackground(img, y * width, end * width, width, palette, indices);
      y = end;
      continue;
    }
    let last = 0;
    let lastIndex = -1;
    for (let i = y * width; i < (y + 1) * width; i++) {
      const m = marks[i];
      if (m) {
        if (markIndex[m] < 0) {
          const [r, g, b, a] = MARK_RGBA[m];
          const idx = palette.word(MARK_WORD[m], r, g, b, a);
          if (idx < 0) {
            fits = false;
            break;
          }
          markIndex[m] = idx;
        }
        indices[i] = markIndex[m];
        continue;
      }
      const c = src32[i];
      if (c !== last || lastIndex < 0) {
        lastIndex = palette.grey(fadedGrey(img, i * 4));
        if (lastIndex < 0) {
          fits = false;
          break;
        }
        last = c;
      }
      indices[i] = lastIndex;
    }
    y++;
  }
  return fits ? palette.encode(indices, width, height) : encodePng(renderDiff(diff));
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
