import { decodePng, decodePngPair, encodePng, encodePngCompact, MalformedPngError, pngDimensions } from '../../../src/axes/visual/png';
import { blank, clone, fromPng, setPixel, toPng, uiLike, type Rgba } from './support/images';

/** An image exercising every filter type pngjs's adaptive filter picks, with some transparency. */
function varied(width: number, height: number): Rgba {
  const img = uiLike(width, height);
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x += 5) setPixel(img, x, y, [(x * 7 + y * 3) & 255, (x * y) & 255, (x + 2 * y) & 255, 128 + ((x + y) & 127)]);
  return img;
}

describe('decodePng', () => {
  it('decodes RGBA, RGB, grey and grey+alpha exactly as pngjs does', () => {
    const img = varied(97, 61);
    for (const colorType of [6, 2, 0, 4] as const) {
      const bytes = toPng(img, { colorType });
      expect(Buffer.from(decodePng(bytes).data)).toEqual(Buffer.from(fromPng(bytes).data));
    }
  });

  it('decodes a palette PNG with transparency', () => {
    const img = blank(40, 30, [10, 20, 30, 255]);
    setPixel(img, 3, 4, [255, 0, 0, 255]);
    setPixel(img, 5, 6, [0, 0, 255, 100]);
    const bytes = encodePngCompact(img);
    expect(bytes[25]).toBe(3); // colour type in IHDR: palette
    expect(Buffer.from(decodePng(bytes).data)).toEqual(Buffer.from(img.data));
    expect(Buffer.from(fromPng(bytes).data)).toEqual(Buffer.from(img.data));
  });

  it('falls back to pngjs for 16-bit images', () => {
    const img = varied(33, 17);
    const bytes = toPng(img, { bitDepth: 16 });
    expect(Buffer.from(decodePng(bytes).data)).toEqual(Buffer.from(fromPng(bytes).data));
  });

  it('round-trips its own encoders', () => {
    const img = varied(64, 48);
    expect(Buffer.from(decodePng(encodePng(img)).data)).toEqual(Buffer.from(img.data));
    expect(Buffer.from(fromPng(encodePng(img)).data)).toEqual(Buffer.from(img.data));
    expect(Buffer.from(decodePng(encodePngCompact(img)).data)).toEqual(Buffer.from(img.data));
  });

  it('encodes deterministically (diff images are content-addressed)', () => {
    const img = varied(50, 20);
    expect(encodePngCompact(img).equals(encodePngCompact(clone(img)))).toBe(true);
  });

  it('reads dimensions from IHDR without decoding', () => {
    expect(pngDimensions(toPng(blank(12, 7)))).toEqual({ width: 12, height: 7 });
  });

  it.each([
    ['not a PNG', Buffer.from('hello, not an image'), /bad signature/],
    ['a truncated PNG', toPng(uiLike(64, 64)).subarray(0, 200), /truncated|inflate|too short/],
    ['a PNG with corrupt image data', corruptIdat(toPng(uiLike(64, 64))), /inflate|filter|too short/],
  ])('refuses %s with a MalformedPngError', (_name, bytes, message) => {
    expect(() => decodePng(bytes)).toThrow(MalformedPngError);
    expect(() => decodePng(bytes)).toThrow(message);
  });
});

describe('decodePngPair', () => {
  it('decodes both sides exactly and marks the rows the head shares with the base', async () => {
    const base = varied(80, 60);
    const head = clone(base);
    setPixel(head, 10, 30, [1, 2, 3, 255]);
    const pair = await decodePngPair(toPng(base), toPng(head));
    expect(Buffer.from(pair.base.data)).toEqual(Buffer.from(base.data));
    expect(Buffer.from(pair.head.data)).toEqual(Buffer.from(head.data));
    expect(pair.sameRows?.[30]).toBe(0);
    expect(pair.sameRows?.[0]).toBe(1);
    expect(pair.sameRows?.[59]).toBe(1);
  });

  it('names the side whose PNG is malformed', async () => {
    await expect(decodePngPair(toPng(blank(4, 4)), Buffer.from('nope'))).rejects.toThrow(/^head image: not a PNG/);
    await expect(decodePngPair(Buffer.from('nope'), toPng(blank(4, 4)))).rejects.toThrow(/^base image: not a PNG/);
  });
});

function corruptIdat(png: Buffer): Buffer {
  const out = Buffer.from(png);
  const idat = out.indexOf('IDAT');
  for (let i = idat + 10; i < idat + 60; i++) out[i] ^= 0x5a;
  return out;
}

describe('decompression bombs', () => {
  it('refuses image data that inflates far past the size the header announces', () => {
    // A 4×4 header over 8 MB of zeros: the inflate stops at the announced size instead of allocating.
    const zlib = require('node:zlib') as typeof import('node:zlib');
    const png = Buffer.from(toPng(blank(4, 4)));
    const idatAt = png.indexOf('IDAT') - 4;
    const idatLength = png.readUInt32BE(idatAt);
    const bomb = zlib.deflateSync(Buffer.alloc(8 * 1024 * 1024));
    const chunk = Buffer.alloc(12 + bomb.length);
    chunk.writeUInt32BE(bomb.length, 0);
    chunk.write('IDAT', 4, 'latin1');
    bomb.copy(chunk, 8);
    const forged = Buffer.concat([png.subarray(0, idatAt), chunk, png.subarray(idatAt + 12 + idatLength)]);
    expect(() => decodePng(forged)).toThrow(MalformedPngError);
  });
});
