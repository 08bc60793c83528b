/**
 * The WebAssembly kernel (src/axes/visual/wasm/match.c via kernel.ts) against pixelmatch, the oracle,
 * on random images: counts and diff images identical, in one thread and split, and the same as the
 * TypeScript engine's. Plus: the embedded module is the committed match.wasm with its recorded hash,
 * and PNG rows the kernel unfilters (Sub, Up, Average, Paeth) are pngjs's.
 */
import './support/esm';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import pixelmatch from 'pixelmatch';
import { PNG } from 'pngjs';
import { compareImages, VISUAL_DIFF_OPTIONS } from '../../../src/axes/visual/diff';
import { acquireWorkspace, kernelAdlerRows, kernelAvailable, kernelUnfilter, releaseWorkspace } from '../../../src/axes/visual/kernel';
import { adler32, decodePng, decodePngPair } from '../../../src/axes/visual/png';
import { closeBandHelper, splitStats } from '../../../src/axes/visual/split';
import { KERNEL_BASE64, KERNEL_SHA256 } from '../../../src/axes/visual/wasm/kernel-bytes';
import { prng } from '../../../bench/support/ui-renders';

afterAll(() => closeBandHelper());

interface Img {
  width: number;
  height: number;
  data: Uint8Array;
}

/** PNG bytes by pngjs with one filter type for every row (4 = Paeth), or its adaptive choice (-1). */
function encode(img: Img, filterType: number): Buffer {
  const png = new PNG({ width: img.width, height: img.height });
  png.data = Buffer.from(img.data);
  return PNG.sync.write(png, { filterType, colorType: 6 });
}

/**
 * A random image that exercises the anti-aliasing detector: a few flat colours in rectangles (so
 * pixels have identical siblings), soft ramps between them (so a pixel has darker and brighter
 * neighbours), isolated noise and, when `translucent`, random alpha (the blend-with-white branch).
 */
function randomImage(rand: () => number, width: number, height: number, translucent: boolean): Img {
  const data = new Uint8Array(width * height * 4);
  const colours = Array.from({ length: 4 }, () => [rand() * 256, rand() * 256, rand() * 256].map(Math.floor));
  const bg = colours[0];
  for (let i = 0; i < width * height; i++) data.set([bg[0], bg[1], bg[2], 255], i * 4);
  const rects = 1 + Math.floor(rand() * 6);
  for (let r = 0; r < rects; r++) {
    const c = colours[1 + Math.floor(rand() * 3)];
    const x0 = Math.floor(rand() * width);
    const y0 = Math.floor(rand() * height);
    const w = 1 + Math.floor(rand() * width);
    const h = 1 + Math.floor(rand() * height);
    const ramp = rand() < 0.5;
    for (let y = y0; y < Math.min(height, y0 + h); y++) {
      for (let x = x0; x < Math.min(width, x0 + w); x++) {
        const t = ramp ? (x - x0) / w : 1;
        const o = (y * width + x) * 4;
        for (let k = 0; k < 3; k++) data[o + k] = Math.round(bg[k] + (c[k] - bg[k]) * t);
      }
    }
  }
  for (let n = 0; n < (width * height) / 20; n++) {
    const o = Math.floor(rand() * width * height) * 4;
    data[o + Math.floor(rand() * 3)] = Math.floor(rand() * 256);
  }
  if (translucent) for (let n = 0; n < (width * height) / 3; n++) data[Math.floor(rand() * width * height) * 4 + 3] = Math.floor(rand() * 256);
  return { width, height, data };
}

/** The head: the base with some pixels changed (slightly or a lot) and sometimes a row band shifted. */
function mutate(rand: () => number, img: Img): Img {
  const data = new Uint8Array(img.data);
  const { width, height } = img;
  const changes = Math.floor(rand() * width * height * 0.1);
  for (let n = 0; n < changes; n++) {
    const o = Math.floor(rand() * width * height) * 4;
    const k = Math.floor(rand() * 4);
    data[o + k] = rand() < 0.5 ? (data[o + k] + 1 + Math.floor(rand() * 8)) & 255 : Math.floor(rand() * 256);
  }
  if (rand() < 0.5 && width > 2) {
    // Shift a band of rows right by one pixel, as a re-rasterised text run.
    const y0 = Math.floor(rand() * height);
    for (let y = y0; y < Math.min(height, y0 + 3); y++) data.copyWithin(y * width * 4 + 4, y * width * 4, (y + 1) * width * 4 - 4);
  }
  return { width, height, data };
}

describe('the WebAssembly kernel', () => {
  it('runs here, from the committed match.wasm whose sha256 the build recorded', () => {
    expect(kernelAvailable()).toBe(true);
    const bytes = Buffer.from(KERNEL_BASE64, 'base64');
    const file = fs.readFileSync(path.join(__dirname, '../../../src/axes/visual/wasm/match.wasm'));
    expect(bytes.equals(file)).toBe(true);
    expect(crypto.createHash('sha256').update(file).digest('hex')).toBe(KERNEL_SHA256);
  });

  it('reverses every PNG filter as pngjs does, straight into its memory', async () => {
    const rand = prng(7);
    for (const [w, h] of [[1, 1], [3, 5], [37, 11], [200, 40]]) for (const filter of [0, 1, 2, 3, 4, -1]) {
      const a = randomImage(rand, w, h, true);
      const b = mutate(rand, a);
      const ws = acquireWorkspace(w, h)!;
      try {
        const pair = await decodePngPair(encode(a, filter), encode(b, filter), { targets: { base: { out: ws.base, rows: kernelUnfilter(ws, 0) }, head: { out: ws.head, rows: kernelUnfilter(ws, 1) } } });
        expect(pair.base.data).toBe(ws.base);
        expect(Buffer.from(ws.base).equals(Buffer.from(a.data))).toBe(true);
        expect(Buffer.from(ws.head).equals(Buffer.from(b.data))).toBe(true);
      } finally {
        releaseWorkspace(ws);
      }
    }
  });

  it('computes the Adler-32 of diff scanlines (filter byte 0 + indices per row) as the byte loop does', () => {
    const rand = prng(13);
    // Widths below, at and above one 16-byte chunk, odd tails, and past 256 chunks a row (a mid-row
    // reduction); all-255 rows for the largest partial sums.
    for (const [w, h, fill] of [[1, 3, -1], [15, 4, -1], [16, 7, -1], [37, 50, -1], [1920, 9, -1], [4200, 6, -1], [5000, 5, 255], [4096, 40, 255]]) {
      const ws = acquireWorkspace(w, h)!;
      try {
        for (let i = 0; i < w * h; i++) ws.indices[i] = fill >= 0 ? fill : Math.floor(rand() * 256);
        const raw = Buffer.alloc(h * (w + 1));
        for (let y = 0; y < h; y++) raw.set(ws.indices.subarray(y * w, (y + 1) * w), y * (w + 1) + 1);
        expect(kernelAdlerRows(ws, 0, h)).toBe(adler32(raw));
        const cut = h >> 1;
        expect(kernelAdlerRows(ws, cut, h)).toBe(adler32(raw.subarray(cut * (w + 1))));
      } finally {
        releaseWorkspace(ws);
      }
    }
  });

  it('counts and draws exactly what pixelmatch does on random images (property test)', async () => {
    const rand = prng(2026);
    let withAa = 0;
    for (let run = 0; run < 60; run++) {
      // Sizes vary from one run to the next, so reused workspaces change layout too.
      const width = run === 0 ? 1 : 1 + Math.floor(rand() * 48);
      const height = run === 1 ? 1 : 1 + Math.floor(rand() * 30);
      const a = randomImage(rand, width, height, run % 3 === 0);
      const b = mutate(rand, a);
      const filter = [4, -1, 1, 3][run % 4];
      const expectedImage = new Uint8Array(a.data.length);
      const expected = pixelmatch(a.data, b.data, expectedImage, width, height, VISUAL_DIFF_OPTIONS);
      if (pixelmatch(a.data, b.data, undefined, width, height, { ...VISUAL_DIFF_OPTIONS, includeAA: true }) > expected) withAa++;
      const pa = encode(a, filter);
      const pb = encode(b, filter);
      for (const split of ['never', 'always'] as const) {
        const before = splitStats.helperFailures;
        const kernel = await compareImages(pa, pb, { split });
        expect(splitStats.helperFailures).toBe(before);
        expect({ run, split, count: kernel.changedPixels }).toEqual({ run, split, count: expected });
        if (expected > 0) expect(Buffer.from(decodePng(kernel.diffPng!).data).equals(Buffer.from(expectedImage))).toBe(true);
        else expect(kernel.diffPng).toBeUndefined();
        expect(await compareImages(pa, pb, { split, engine: 'typescript' })).toEqual(kernel);
      }
    }
    // The images do reach the anti-aliasing detector's "yes" often enough to test it.
    expect(withAa).toBeGreaterThan(10);
  });
});
