/**
 * pixelmatch is the oracle of the visual engine (issue 18): on screenshots drawn by a real 2D canvas
 * (Skia, bench/support/ui-renders.ts) — gradients, shadows, anti-aliased shapes and text — the engine
 * must count exactly the pixels one pixelmatch call over the whole image counts, and its diff image
 * must be pixelmatch's, byte for byte, both as RGBA and after its PNG round trip — with the WebAssembly
 * kernel and with the TypeScript engine, in one thread and split (wasm-kernel.test.ts adds random images).
 */
import './support/esm';
import pixelmatch from 'pixelmatch';
import { PNG } from 'pngjs';
import { compareDecoded, compareImages, encodeDiffPng, renderDiff, VISUAL_DIFF_OPTIONS } from '../../../src/axes/visual/diff';
import { closeBandHelper, splitStats } from '../../../src/axes/visual/split';
import { decodePng, decodePngPair, encodePng } from '../../../src/axes/visual/png';
import { encodeRgba, renderUi, scatterPixels, type Rendered } from '../../../bench/support/ui-renders';

/**
 * What the PNG holds, decoded by pngjs (an independent decoder): Skia stores premultiplied pixels, so a
 * semi-transparent pixel put into a canvas does not always come back with the same bytes.
 */
function asStored(r: Rendered): Rendered {
  const png = PNG.sync.read(r.png);
  return { ...r, data: new Uint8Array(png.data.buffer, png.data.byteOffset, png.data.byteLength) };
}

/** The same screen with every pixel's alpha lowered in places: exercises the blend-with-white branch. */
function translucent(r: Rendered, seed: number): Rendered {
  const data = new Uint8Array(r.data);
  for (let i = seed % 7; i < r.width * r.height; i += 5) data[i * 4 + 3] = 90 + ((i * 31) % 160);
  return asStored({ width: r.width, height: r.height, data, png: encodeRgba(r.width, r.height, data) });
}

afterAll(() => closeBandHelper());

describe('the engine against pixelmatch on canvas renders', () => {
  const W = 960;
  const H = 600;
  const base = renderUi(W, H);
  const mobile = renderUi(390, 844);
  const cases: Array<[string, Rendered, Rendered]> = [
    ['identical pixels, different bytes', base, { ...base, png: encodePng(base) }],
    ['1 % scattered', base, scatterPixels(base, 0.01)],
    ['1 % block', base, renderUi(W, H, { blockFraction: 0.01 })],
    ['text shifted by half a pixel', base, renderUi(W, H, { textDx: 0.5 })],
    ['text shifted by a third of a pixel at 2× scale', renderUi(W, H, { scale: 2 }), renderUi(W, H, { scale: 2, textDx: 0.33 })],
    ['one card changed', base, renderUi(W, H, { changedCard: 1 })],
    ['mobile layout, scattered', mobile, scatterPixels(mobile, 0.02, 5)],
    ['semi-transparent pixels, scattered', translucent(base, 1), scatterPixels(translucent(base, 1), 0.01, 3)],
    ['semi-transparent vs opaque', base, translucent(base, 2)],
  ];

  it.each(cases)('%s: same count, same diff image', async (_name, renderedA, renderedB) => {
    const a = asStored(renderedA);
    const b = asStored(renderedB);
    expect(a.png.equals(b.png)).toBe(false);
    const expectedImage = new Uint8Array(a.data.length);
    const expected = pixelmatch(a.data, b.data, expectedImage, a.width, a.height, VISUAL_DIFF_OPTIONS);

    const pair = await decodePngPair(a.png, b.png);
    expect(Buffer.from(pair.base.data).equals(Buffer.from(a.data))).toBe(true);
    expect(Buffer.from(pair.head.data).equals(Buffer.from(b.data))).toBe(true);
    const diff = compareDecoded(pair.base, pair.head, pair.sameRows);
    expect(diff.changedPixels).toBe(expected);
    expect(Buffer.from(renderDiff(diff).data).equals(Buffer.from(expectedImage))).toBe(true);

    // In one thread, and split with the band helper thread (two bands of rows); with the WebAssembly
    // kernel (the default for these same-sized PNGs) and with the TypeScript engine.
    for (const [split, engine] of [['never', 'auto'], ['always', 'auto'], ['never', 'typescript'], ['always', 'typescript']] as const) {
      const before = { ...splitStats };
      const result = await compareImages(a.png, b.png, { split, engine });
      expect(splitStats.pairs - before.pairs).toBe(split === 'always' ? 1 : 0);
      expect(splitStats.helperFailures).toBe(before.helperFailures);
      expect(result.changedPixels).toBe(expected);
      if (expected === 0) {
        expect(result.diffPng).toBeUndefined();
      } else {
        expect(Buffer.from(decodePng(result.diffPng!).data).equals(Buffer.from(expectedImage))).toBe(true);
        expect(result.diffPng!.equals(encodeDiffPng(diff))).toBe(true);
      }
    }
  });

  it('splits a large pair by default, with the same result as one thread', async () => {
    const a = renderUi(1280, 820);
    const b = renderUi(1280, 820, { textDx: 0.5 });
    const one = await compareImages(a.png, b.png, { split: 'never' });
    const before = splitStats.pairs;
    const split = await compareImages(a.png, b.png);
    expect(splitStats.pairs).toBe(before + 1);
    expect(split).toEqual(one);
    expect(one.changedPixels).toBe(pixelmatch(asStored(a).data, asStored(b).data, undefined, a.width, a.height, VISUAL_DIFF_OPTIONS));
  });

  it('names the side of a PNG that does not decode when split', async () => {
    const good = renderUi(64, 48).png;
    const broken = Buffer.from(good);
    broken.fill(7, 60, 200); // inside the IDAT data: parses, does not inflate
    await expect(compareImages(good, broken, { split: 'always' })).rejects.toThrow(/^head image: /);
    await expect(compareImages(broken, good, { split: 'always' })).rejects.toThrow(/^base image: /);
    // Image data that ends before the rows the header announces (the streaming decoder's own check).
    const short = encodePng({ width: 64, height: 48, data: new Uint8Array(64 * 48 * 4).fill(200) });
    const tall = Buffer.from(short);
    tall.writeUInt32BE(60, 20); // IHDR height: 60 rows announced, 48 stored
    const other = encodePng({ width: 64, height: 60, data: new Uint8Array(64 * 60 * 4).fill(100) });
    await expect(compareImages(other, tall, { split: 'always' })).rejects.toThrow(/^head image: PNG image data is too short/);
    await expect(compareImages(tall, other, { split: 'always' })).rejects.toThrow(/^base image: PNG image data is too short/);
  });

  it('the fixtures do exercise the anti-aliasing detector and both outcomes', () => {
    const [, , b] = cases[3];
    const a = base;
    const out = new Uint8Array(a.data.length);
    const counted = pixelmatch(a.data, b.data, out, a.width, a.height, VISUAL_DIFF_OPTIONS);
    const withAa = pixelmatch(a.data, b.data, undefined, a.width, a.height, { ...VISUAL_DIFF_OPTIONS, includeAA: true });
    expect(counted).toBeGreaterThan(0);
    expect(withAa).toBeGreaterThan(counted);
  });
});
