import './support/esm';
import pixelmatch from 'pixelmatch';
import { compareDecoded, compareImages, encodeDiffPng, renderDiff, runDiffJob, sha256, VISUAL_DIFF_OPTIONS } from '../../../src/axes/visual/diff';
import { decodePng, encodePng } from '../../../src/axes/visual/png';
import { blank, clone, fromPng, setPixel, toPng, uiLike, type Rgba } from './support/images';

describe('compareImages', () => {
  it('settles byte-identical files by hash without decoding them', async () => {
    // Not even a PNG: a decode would throw, so an `unchanged` answer proves no decode happened.
    const bytes = Buffer.from('identical bytes that are not a PNG');
    const r = await compareImages(bytes, Buffer.from(bytes));
    expect(r).toMatchObject({ state: 'unchanged', changedPixels: 0, changedRatio: 0, baseHash: sha256(bytes), headHash: sha256(bytes) });
    expect(r.diffPng).toBeUndefined();
  });

  it('finds a one-pixel change, counts it and draws it red in the diff image', async () => {
    const base = uiLike(120, 80);
    const head = setPixel(clone(base), 100, 5, [255, 0, 0, 255]);
    const r = await compareImages(toPng(base), toPng(head));
    expect(r.state).toBe('changed');
    expect(r.changedPixels).toBe(1);
    expect(r.changedRatio).toBeCloseTo(1 / (120 * 80), 10);
    const diff = fromPng(r.diffPng!);
    expect([...diff.data.subarray((5 * 120 + 100) * 4, (5 * 120 + 100) * 4 + 4)]).toEqual([255, 0, 0, 255]);
  });

  it('treats an anti-aliased, text-like sub-pixel shift as unchanged', async () => {
    // The grey anti-aliasing column of every glyph moves from 128 to 190: pixelmatch sees each such pixel
    // between a darker and a brighter neighbour with many equal siblings, i.e. anti-aliasing.
    const base = uiLike(160, 100, 128);
    const head = uiLike(160, 100, 190);
    expect(Buffer.from(base.data).equals(Buffer.from(head.data))).toBe(false);
    const r = await compareImages(toPng(base), toPng(head));
    expect(r).toMatchObject({ state: 'unchanged', changedPixels: 0 });
  });

  it('treats colour noise under the threshold as unchanged, but not a visible change', async () => {
    const base = uiLike(60, 60);
    const noisy = clone(base);
    for (let i = 0; i < noisy.data.length; i += 4) if (noisy.data[i] > 3) noisy.data[i] -= 3;
    expect((await compareImages(toPng(base), toPng(noisy))).state).toBe('unchanged');
    const visible = setPixel(clone(base), 30, 3, [200, 60, 60, 255]);
    expect((await compareImages(toPng(base), toPng(visible))).state).toBe('changed');
  });

  it('treats a re-encoded PNG with the same pixels as unchanged', async () => {
    const img = uiLike(90, 40);
    const a = toPng(img);
    const b = encodePng(img);
    expect(a.equals(b)).toBe(false);
    expect((await compareImages(a, b)).state).toBe('unchanged');
  });

  it('counts a size change as every pixel changed, with no pixel diff image', async () => {
    const r = await compareImages(toPng(blank(40, 30)), toPng(blank(40, 31)));
    expect(r).toMatchObject({ state: 'changed', changedPixels: 40 * 31, changedRatio: 1, width: 40, height: 31 });
    expect(r.sizeChanged).toEqual({ base: { width: 40, height: 30 }, head: { width: 40, height: 31 } });
    expect(r.diffPng).toBeUndefined();
  });
});

describe('banded comparison', () => {
  /** Deterministic pseudo-random images with changes scattered near edges, in clusters and apart. */
  function pair(width: number, height: number, seed: number): [Rgba, Rgba] {
    let s = seed;
    const next = () => ((s = (s * 1103515245 + 12345) >>> 0) >>> 16) & 0xff;
    const base = uiLike(width, height);
    for (let i = 0; i < 200; i++) setPixel(base, next() % width, next() % height, [next(), next(), next(), 100 + (next() % 156)]);
    const head = clone(base);
    const rows = [0, 1, height - 1, 7, 8, 12, 20, 21, 22, 35, height - 3];
    for (const y of rows) for (let k = 0; k < 3; k++) setPixel(head, next() % width, y, [next(), next(), next(), 255]);
    return [base, head];
  }

  it.each([1, 2, 3])('counts and draws exactly what one pixelmatch call over the whole image does (seed %i)', (seed) => {
    const [base, head] = pair(73, 48, seed);
    const whole = new Uint8Array(base.data.length);
    const expected = pixelmatch(base.data, head.data, whole, base.width, base.height, VISUAL_DIFF_OPTIONS);
    const banded = compareDecoded(base, head);
    expect(banded.changedPixels).toBe(expected);
    expect(Buffer.from(renderDiff(banded).data)).toEqual(Buffer.from(whole));
  });

  it.each([1, 2, 3])('encodes the diff image from its parts to exactly the rendered pixels (seed %i)', (seed) => {
    const [base, head] = pair(73, 48, seed);
    const banded = compareDecoded(base, head);
    const png = encodeDiffPng(banded);
    expect(png[25]).toBe(3); // a palette PNG
    expect(Buffer.from(decodePng(png).data)).toEqual(Buffer.from(renderDiff(banded).data));
  });
});

describe('runDiffJob', () => {
  it('turns a malformed head into an error result naming the side, with the content hashes', async () => {
    const good = toPng(blank(8, 8));
    const bad = Buffer.from('\x89PNG\r\n\x1a\n garbage');
    const r = await runDiffJob({ kind: 'compare', base: good, head: bad });
    expect(r).toEqual({ ok: false, error: expect.stringMatching(/^head image: /), baseHash: sha256(good), headHash: sha256(bad) });
  });

  it('validates an added image by decoding it', async () => {
    const bad = Buffer.from('not a png');
    expect(await runDiffJob({ kind: 'validate', head: bad })).toMatchObject({ ok: false, error: expect.stringMatching(/^head image: not a PNG/) });
    expect(await runDiffJob({ kind: 'validate', head: toPng(blank(3, 2)) })).toMatchObject({ ok: true, validated: { width: 3, height: 2 } });
  });
});
