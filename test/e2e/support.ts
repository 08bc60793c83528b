import * as fs from 'node:fs';
import * as path from 'node:path';
import { execFileSync } from 'node:child_process';
import { PNG } from 'pngjs';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
export const ARTIFACTS = path.resolve(__dirname, '..', '..', 'test-artifacts');

/** Debian's chromium, headless; never a downloaded browser. */
export async function launchChromium(): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium`);
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}

/** The page bundle exactly as `npm run build` makes it. */
export function buildWebBundle(): void {
  execFileSync(process.execPath, [path.resolve(__dirname, '..', '..', 'tools', 'build-web.js')], { stdio: 'inherit' });
}

/** A solid w×h PNG with an optional rectangle of another colour (a "UI snapshot"). */
export function png(w: number, h: number, fill: [number, number, number], patch?: { x: number; y: number; w: number; h: number; rgb: [number, number, number] }): Buffer {
  const img = new PNG({ width: w, height: h });
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const inPatch = patch && x >= patch.x && x < patch.x + patch.w && y >= patch.y && y < patch.y + patch.h;
      const [r, g, b] = inPatch ? patch!.rgb : fill;
      const i = (y * w + x) * 4;
      img.data[i] = r;
      img.data[i + 1] = g;
      img.data[i + 2] = b;
      img.data[i + 3] = 255;
    }
  }
  return PNG.sync.write(img);
}

export const OPENAPI_BASE = `openapi: 3.0.3
info: { title: shop, version: 1.0.0 }
paths:
  /items:
    get:
      parameters:
        - { name: limit, in: query, required: false, schema: { type: integer } }
      responses:
        '200':
          description: items
          content:
            application/json:
              schema: { type: array, items: { type: string } }
  /items/{id}:
    delete:
      parameters:
        - { name: id, in: path, required: true, schema: { type: string } }
      responses:
        '204': { description: deleted }
`;

/** The PR removes DELETE /items/{id} (breaking) and makes `limit` required (breaking). */
export const OPENAPI_HEAD = `openapi: 3.0.3
info: { title: shop, version: 1.1.0 }
paths:
  /items:
    get:
      parameters:
        - { name: limit, in: query, required: true, schema: { type: integer } }
      responses:
        '200':
          description: items
          content:
            application/json:
              schema: { type: array, items: { type: string } }
`;
