import '../axes/visual/support/esm';
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { PNG } from 'pngjs';
import { compareImages, runDiffJob } from '../../src/axes/visual/diff';
import { DEFAULT_MAX_DECODED_BYTES, decodedBytesOf, MalformedPngError } from '../../src/axes/visual/png';
import { closeSharedDiffPools } from '../../src/axes/visual/pool';
import { pngBomb } from '../axes/visual/support/png-bomb';

/**
 * Issue 36: two ~2 MB PNGs (16-bit RGBA 16384×16384, under the old pixel cap) committed as goldens took
 * the server to 4–6.9 GB for minutes, and `visual-diff` on the pair 108 s and 7.4 GB; the 8-bit 16384²
 * pair failed with an internal WebAssembly error and exit 1 ("changed"). A decode is now refused from
 * its IHDR, before anything is inflated, when it would need more than the decode budget.
 * No time is asserted; memory is, as the growth of this process's peak RSS.
 */
afterAll(() => closeSharedDiffPools());

const peakRss = () => process.resourceUsage().maxRSS * 1024;

describe('PNG decompression bombs are refused from the header', () => {
  it("the issue's 2 MB 16-bit RGBA 16384² pair: image_too_large, and the process's peak memory does not grow by the 2 GiB it announces", async () => {
    const base = pngBomb(16384, 16384, 16, 6, 1);
    const head = pngBomb(16384, 16384, 16, 6, 2);
    expect(base.length).toBeLessThan(3 * 1024 * 1024);
    const before = peakRss();
    const err = await compareImages(base, head).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MalformedPngError);
    expect(err).toMatchObject({
      code: 'image_too_large',
      message: `base image: PNG is too large to decode: 16384×16384 at 16 bits × 4 channel(s) needs ${16384 * (16384 * 8 + 1)} bytes, over the decode budget of ${DEFAULT_MAX_DECODED_BYTES} bytes (REVIEW_LEDGER_MAX_IMAGE_BYTES)`,
    });
    expect(peakRss() - before).toBeLessThan(256 * 1024 * 1024);
  });

  it('the 8-bit 16384² pair (an internal WebAssembly error before) is image_too_large too', async () => {
    const err = await compareImages(pngBomb(16384, 16384, 8, 6, 1), pngBomb(16384, 16384, 8, 6, 2)).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'image_too_large', message: expect.stringMatching(/^base image: PNG is too large to decode: 16384×16384 at 8 bits/) });
  });

  it('a smaller bomb just over the budget (16-bit RGBA 4096², 128 MiB of scanlines) is refused; in the server it is a per-snapshot error', async () => {
    const bomb = pngBomb(4096, 4096, 16, 6);
    expect(decodedBytesOf(4096, 4096, 16, 6)).toBeGreaterThan(DEFAULT_MAX_DECODED_BYTES);
    const ok = PNG.sync.write(Object.assign(new PNG({ width: 4, height: 4 }), { data: Buffer.alloc(64, 255) }));
    const r = await runDiffJob({ kind: 'compare', base: ok, head: bomb });
    expect(r).toMatchObject({ ok: false, error: expect.stringMatching(/^head image: PNG is too large to decode: 4096×4096 at 16 bits/) });
  });

  it('4K RGBA at 8 and at 16 bits fits the default budget; 16-bit images under it decode', async () => {
    expect(decodedBytesOf(3840, 2160, 8, 6)).toBeLessThanOrEqual(DEFAULT_MAX_DECODED_BYTES);
    expect(decodedBytesOf(3840, 2160, 16, 6)).toBeLessThanOrEqual(DEFAULT_MAX_DECODED_BYTES);
    const sixteen = (value: number) => {
      const png = new PNG({ width: 8, height: 4, bitDepth: 16, colorType: 6, inputHasAlpha: true });
      png.data = Buffer.alloc(8 * 4 * 4, 255);
      png.data.fill(value, 0, 4 * 3); // the first pixel's RGB
      return PNG.sync.write(png, { bitDepth: 16, colorType: 6, inputColorType: 6 });
    };
    const r = await compareImages(sixteen(255), sixteen(0));
    expect(r).toMatchObject({ state: 'changed', width: 8, height: 4, changedPixels: 1 });
  });

  it('the budget is the operator\'s: REVIEW_LEDGER_MAX_IMAGE_BYTES', async () => {
    const opaque = (v: number) => {
      const data = Buffer.alloc(40_000, v);
      for (let i = 3; i < data.length; i += 4) data[i] = 255;
      return PNG.sync.write(Object.assign(new PNG({ width: 100, height: 100 }), { data }));
    };
    const img = opaque(0);
    const other = opaque(255);
    const saved = process.env.REVIEW_LEDGER_MAX_IMAGE_BYTES;
    process.env.REVIEW_LEDGER_MAX_IMAGE_BYTES = '40099';
    try {
      await expect(compareImages(img, other)).rejects.toMatchObject({ code: 'image_too_large', message: expect.stringContaining('needs 40100 bytes, over the decode budget of 40099 bytes') });
    } finally {
      if (saved === undefined) delete process.env.REVIEW_LEDGER_MAX_IMAGE_BYTES;
      else process.env.REVIEW_LEDGER_MAX_IMAGE_BYTES = saved;
    }
    expect((await compareImages(img, other)).state).toBe('changed');
  });

  it('a header with an invalid bit depth is malformed_png, before any data is read', async () => {
    const bad = pngBomb(10, 10, 8, 6);
    bad[8 + 8 + 8] = 3; // IHDR bit depth: 3 is not a PNG depth
    await expect(compareImages(bad, pngBomb(10, 10, 8, 6, 1))).rejects.toMatchObject({ code: 'malformed_png', message: 'base image: PNG has an invalid bit depth 3 for colour type 6' });
  });

  it('a diff past its wall-time budget is image_too_large (a budget of 0 ms is always spent)', async () => {
    const a = PNG.sync.write(Object.assign(new PNG({ width: 3, height: 3 }), { data: Buffer.alloc(36, 1) }));
    const b = PNG.sync.write(Object.assign(new PNG({ width: 3, height: 3 }), { data: Buffer.alloc(36, 200) }));
    await expect(compareImages(a, b, { timeBudgetMs: 0 })).rejects.toMatchObject({ code: 'image_too_large', message: expect.stringMatching(/^comparing the images took \d+ ms by the end of decoding, over the per-diff time budget of 0 ms$/) });
  });
});

describe('review-ledger visual-diff on a bomb pair', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-bomb-cli-'));
    fs.writeFileSync(path.join(dir, 'base.png'), pngBomb(16384, 16384, 16, 6, 1));
    fs.writeFileSync(path.join(dir, 'head.png'), pngBomb(16384, 16384, 16, 6, 2));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('exits 2 (could not compare), not 1 (changed), with error [image_too_large] naming the file', async () => {
    const bin = path.resolve(__dirname, '../../bin/review-ledger.js');
    const r = await promisify(execFile)('node', [bin, 'visual-diff', path.join(dir, 'base.png'), path.join(dir, 'head.png')], { env: { ...process.env, REVIEW_LEDGER_FROM_SOURCE: '1' } }).then(
      () => ({ code: 0, stderr: '' }),
      (e: { code: number; stderr: string }) => ({ code: e.code, stderr: e.stderr }),
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`error [image_too_large]: ${path.join(dir, 'base.png')}: PNG is too large to decode: 16384×16384 at 16 bits × 4 channel(s) needs ${16384 * (16384 * 8 + 1)} bytes, over the decode budget of ${DEFAULT_MAX_DECODED_BYTES} bytes (REVIEW_LEDGER_MAX_IMAGE_BYTES)\n`);
  });
});
