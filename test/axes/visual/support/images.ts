import { PNG } from 'pngjs';

export interface Rgba {
  width: number;
  height: number;
  data: Uint8Array;
}

export function blank(width: number, height: number, rgba: [number, number, number, number] = [255, 255, 255, 255]): Rgba {
  const data = new Uint8Array(width * height * 4);
  for (let i = 0; i < data.length; i += 4) data.set(rgba, i);
  return { width, height, data };
}

export function setPixel(img: Rgba, x: number, y: number, rgba: [number, number, number, number]): Rgba {
  img.data.set(rgba, (y * img.width + x) * 4);
  return img;
}

export function clone(img: Rgba): Rgba {
  return { width: img.width, height: img.height, data: new Uint8Array(img.data) };
}

/**
 * A UI-like image: a header bar, a sidebar and rows of text-like glyphs (dark vertical strokes with
 * anti-aliased grey edges). `edge` is the grey level of the left anti-aliasing column; changing it
 * mimics text re-rasterised at a sub-pixel offset.
 */
export function uiLike(width: number, height: number, edge = 128): Rgba {
  const img = blank(width, height, [246, 247, 249, 255]);
  for (let y = 0; y < Math.min(16, height); y++) for (let x = 0; x < width; x++) setPixel(img, x, y, [30, 60, 120, 255]);
  for (let y = 24; y + 12 < height; y += 16) {
    for (let x = 8; x + 6 < width; x += 7) {
      for (let dy = 0; dy < 10; dy++) {
        setPixel(img, x, y + dy, [edge, edge, edge, 255]);
        setPixel(img, x + 1, y + dy, [20, 20, 20, 255]);
        setPixel(img, x + 2, y + dy, [20, 20, 20, 255]);
        setPixel(img, x + 3, y + dy, [200, 200, 200, 255]);
      }
    }
  }
  return img;
}

export function toPng(img: Rgba, options: { deflateLevel?: number; colorType?: 0 | 2 | 4 | 6; bitDepth?: 8 | 16 } = {}): Buffer {
  const png = new PNG({ width: img.width, height: img.height });
  png.data = Buffer.from(img.data);
  return PNG.sync.write(png, {
    deflateLevel: options.deflateLevel,
    colorType: options.colorType ?? 6,
    inputColorType: 6,
    bitDepth: options.bitDepth ?? 8,
  } as Parameters<typeof PNG.sync.write>[1]);
}

export function fromPng(bytes: Uint8Array): Rgba {
  const png = PNG.sync.read(Buffer.from(bytes));
  return { width: png.width, height: png.height, data: new Uint8Array(png.data) };
}
