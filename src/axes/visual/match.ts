import { VISUAL_DIFF_OPTIONS } from './options';

/**
 * pixelmatch's comparison (pixelmatch 7.2.0 with `VISUAL_DIFF_OPTIONS`), rewritten to classify pixels
 * instead of drawing them: the same colour delta in the same floating-point operations and order, the
 * same anti-aliasing detector, the same borders (those of the whole image), so it counts exactly what
 * pixelmatch counts (test/axes/visual/oracle.test.ts holds it to that on canvas renders). What it does
 * not do is draw the faded grey of every matching pixel: it writes one byte per pixel that differs
 * (`MARK_DIFF`, `MARK_DIFF_DARKER`, `MARK_AA`) into `marks` and leaves the rest 0, and the diff image
 * encoder derives the grey from the base when it writes the PNG. Rows known to be equal are skipped
 * outright (every pixel of them has a zero delta, so pixelmatch would only draw them grey).
 *
 * Allocation-free in the loop: pixels are read as int32 words (equal words have a zero delta, the
 * common case) and bytes of the same buffers.
 */

/** A pixel above the threshold and not anti-aliasing, head pixel lighter or equal in luma (pixelmatch's `diffColor`). */
export const MARK_DIFF = 1;
/** The same with the head pixel darker (pixelmatch draws `diffColorAlt`, which defaults to `diffColor`). */
export const MARK_DIFF_DARKER = 2;
/** Above the threshold but anti-aliasing in either image: drawn yellow, not counted. */
export const MARK_AA = 3;

/** pixelmatch's `maxDelta`: 35215 is the largest possible YIQ distance. */
const MAX_DELTA = 35215 * VISUAL_DIFF_OPTIONS.threshold * VISUAL_DIFF_OPTIONS.threshold;

/**
 * Compares rows [fromRow, toRow) of two same-sized RGBA images (their whole height is `height`, which
 * the anti-aliasing detector's borders use). `skipRows[y]` = 1 declares row y equal in both images.
 * Writes marks for those rows into `marks` (width × height, zero on entry) and `markedRows`.
 */
export function matchRows(img1: Uint8Array, img2: Uint8Array, width: number, height: number, marks: Uint8Array, markedRows: Uint8Array, fromRow = 0, toRow = height, skipRows?: Uint8Array): number {
  // Int32 views keep the pixel words in int32 registers (Uint32 words above 2^31 become doubles).
  const a32 = new Int32Array(img1.buffer, img1.byteOffset, width * height);
  const b32 = new Int32Array(img2.buffer, img2.byteOffset, width * height);
  let diff = 0;
  for (let y = fromRow; y < toRow; y++) {
    if (skipRows !== undefined && skipRows[y] === 1) continue;
    const rowStart = y * width;
    let marked = 0;
    for (let x = 0; x < width; x++) {
      const i = rowStart + x;
      if (a32[i] === b32[i]) continue;
      const delta = colorDelta(img1, img2, i * 4);
      if (Math.abs(delta) <= MAX_DELTA) continue;
      marked = 1;
      if (antialiased(img1, x, y, width, height, a32, b32) || antialiased(img2, x, y, width, height, b32, a32)) {
        marks[i] = MARK_AA;
      } else {
        marks[i] = delta < 0 ? MARK_DIFF_DARKER : MARK_DIFF;
        diff++;
      }
    }
    if (marked) markedRows[y] = 1;
  }
  return diff;
}

/**
 * pixelmatch's `colorDelta` with `checkerboard: false`: the squared YIQ distance, negative when the
 * second pixel is lighter... precisely, negative when `y > 0` (the first pixel is brighter), exactly as
 * pixelmatch encodes it. Semi-transparent pixels are blended against white.
 */
function colorDelta(img1: Uint8Array, img2: Uint8Array, k: number): number {
  const r1 = img1[k];
  const g1 = img1[k + 1];
  const b1 = img1[k + 2];
  const a1 = img1[k + 3];
  const r2 = img2[k];
  const g2 = img2[k + 1];
  const b2 = img2[k + 2];
  const a2 = img2[k + 3];
  let dr = r1 - r2;
  let dg = g1 - g2;
  let db = b1 - b2;
  const da = a1 - a2;
  if (a1 < 255 || a2 < 255) {
    dr = (r1 * a1 - r2 * a2 - 255 * da) / 255;
    dg = (g1 * a1 - g2 * a2 - 255 * da) / 255;
    db = (b1 * a1 - b2 * a2 - 255 * da) / 255;
  }
  const y = dr * 0.29889531 + dg * 0.58662247 + db * 0.11448223;
  const i = dr * 0.59597799 - dg * 0.2741761 - db * 0.32180189;
  const q = dr * 0.21147017 - dg * 0.52261711 + db * 0.31114694;
  const delta = 0.5053 * y * y + 0.299 * i * i + 0.1957 * q * q;
  return y > 0 ? -delta : delta;
}

/** pixelmatch's `brightnessDelta` (checkerboard off): the luma difference of pixel `m` from the centre. */
function brightnessDelta(img: Uint8Array, m: number, r1: number, g1: number, b1: number, a1: number): number {
  const r2 = img[m];
  const g2 = img[m + 1];
  const b2 = img[m + 2];
  const a2 = img[m + 3];
  let dr = r1 - r2;
  let dg = g1 - g2;
  let db = b1 - b2;
  const da = a1 - a2;
  if (!dr && !dg && !db && !da) return 0;
  if (a1 < 255 || a2 < 255) {
    dr = (r1 * a1 - r2 * a2 - 255 * da) / 255;
    dg = (g1 * a1 - g2 * a2 - 255 * da) / 255;
    db = (b1 * a1 - b2 * a2 - 255 * da) / 255;
  }
  return dr * 0.29889531 + dg * 0.58662247 + db * 0.11448223;
}

/**
 * pixelmatch's `antialiased`: the "Anti-aliased Pixel and Intensity Slope Detector" (Vysniauskas,
 * 2009) over the 8 neighbours, in pixelmatch's visiting order (x outer, y inner), which decides which
 * of equal extremes is remembered.
 */
function antialiased(img: Uint8Array, x1: number, y1: number, width: number, height: number, a32: Int32Array, b32: Int32Array): boolean {
  const x0 = x1 > 0 ? x1 - 1 : 0;
  const y0 = y1 > 0 ? y1 - 1 : 0;
  const x2 = x1 < width - 1 ? x1 + 1 : width - 1;
  const y2 = y1 < height - 1 ? y1 + 1 : height - 1;
  const pos4 = (y1 * width + x1) * 4;
  const cr = img[pos4];
  const cg = img[pos4 + 1];
  const cb = img[pos4 + 2];
  const ca = img[pos4 + 3];
  let zeroes = x1 === x0 || x1 === x2 || y1 === y0 || y1 === y2 ? 1 : 0;
  let min = 0;
  let max = 0;
  let minX = 0;
  let minY = 0;
  let maxX = 0;
  let maxY = 0;
  for (let x = x0; x <= x2; x++) {
    for (let y = y0; y <= y2; y++) {
      if (x === x1 && y === y1) continue;
      const delta = brightnessDelta(img, (y * width + x) * 4, cr, cg, cb, ca);
      if (delta === 0) {
        zeroes++;
        if (zeroes > 2) return false;
      } else if (delta < min) {
        min = delta;
        minX = x;
        minY = y;
      } else if (delta > max) {
        max = delta;
        maxX = x;
        maxY = y;
      }
    }
  }
  if (min === 0 || max === 0) return false;
  return (hasManySiblings(a32, minX, minY, width, height) && hasManySiblings(b32, minX, minY, width, height)) || (hasManySiblings(a32, maxX, maxY, width, height) && hasManySiblings(b32, maxX, maxY, width, height));
}

/** pixelmatch's `hasManySiblings`: 3+ of the 8 neighbours (borders count as one) have the same colour. */
function hasManySiblings(img: Int32Array, x1: number, y1: number, width: number, height: number): boolean {
  const x0 = x1 > 0 ? x1 - 1 : 0;
  const y0 = y1 > 0 ? y1 - 1 : 0;
  const x2 = x1 < width - 1 ? x1 + 1 : width - 1;
  const y2 = y1 < height - 1 ? y1 + 1 : height - 1;
  const val = img[y1 * width + x1];
  let zeroes = x1 === x0 || x1 === x2 || y1 === y0 || y1 === y2 ? 1 : 0;
  for (let x = x0; x <= x2; x++) {
    for (let y = y0; y <= y2; y++) {
      if (x === x1 && y === y1) continue;
      if (val === img[y * width + x]) zeroes++;
      if (zeroes > 2) return true;
    }
  }
  return false;
}
