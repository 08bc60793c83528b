import * as fs from 'node:fs';
import * as path from 'node:path';
import { PNG } from 'pngjs';
import { gitSync } from '../git/git-sync';

/**
 * The demo's pull request, built on the fly as a real git repository: a base commit on `main` and two
 * commits on `feature/discount`. It holds everything a review computes something from — source files
 * that call each other (one semantic cohort), a test that exercises them, an OpenAPI spec with a
 * breaking and an additive change, a committed golden PNG that changes, and a dependency bump.
 */
export interface DemoRepo {
  dir: string;
  baseSha: string;
  headSha: string;
  /** `origin`: the forge the repo is registered under (nothing is ever fetched from or posted to it). */
  origin: string;
}

const PRICE_BASE = `export function price(qty: number, unit: number): number {
  return qty * unit;
}
`;
const PRICE_HEAD = `/** Line price, rounded to cents unless asked not to. */
export function price(qty: number, unit: number, roundToCents = true): number {
  const raw = qty * unit;
  return roundToCents ? Math.round(raw * 100) / 100 : raw;
}
`;
const CART_BASE = `import { price } from './price';

export function total(lines: Array<[number, number]>): number {
  let sum = 0;
  for (const [q, u] of lines) sum += price(q, u);
  return sum;
}
`;
const CART_HEAD = `import { price } from './price';

export function total(lines: Array<[number, number]>, discount = 0): number {
  let sum = 0;
  for (const [q, u] of lines) sum += price(q, u, true);
  return sum - discount;
}
`;
const CART_TEST = `import { total } from '../src/cart';

test('total sums the line prices', () => {
  expect(total([[2, 1.5], [1, 3]])).toBe(6);
});
`;
const CART_TEST_HEAD = `import { total } from '../src/cart';

test('total sums the line prices', () => {
  expect(total([[2, 1.5], [1, 3]])).toBe(6);
});

test('total subtracts the discount', () => {
  expect(total([[1, 10]], 2)).toBe(8);
});
`;
const OPENAPI_BASE = `openapi: 3.0.3
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
/** `limit` becomes required (breaking), DELETE /items/{id} is removed (breaking), GET /cart/total is added. */
const OPENAPI_HEAD = `openapi: 3.0.3
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
  /cart/total:
    get:
      parameters:
        - { name: discount, in: query, required: false, schema: { type: number } }
      responses:
        '200':
          description: the cart total
          content:
            application/json:
              schema: { type: number }
`;

const manifest = (version: string, express: string) => `${JSON.stringify({ name: 'shop', version, dependencies: { express, leftpad: '^1.0.0' } }, null, 2)}\n`;

/** A solid w×h PNG with an optional rectangle of another colour: a stand-in for a UI golden. */
export function solidPng(w: number, h: number, fill: [number, number, number], patch?: { x: number; y: number; w: number; h: number; rgb: [number, number, number] }): Buffer {
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

/** Builds the demo repository in `dir` (which must not exist yet) with the real git binary. */
export function buildDemoRepo(dir: string, origin = 'https://github.com/review-ledger/demo-shop.git'): DemoRepo {
  if (fs.existsSync(dir)) throw new Error(`demo repo: ${dir} already exists`);
  fs.mkdirSync(dir, { recursive: true });
  // A fixed identity and dates: the same demo builds the same commits on every machine.
  const env = { ...process.env, GIT_AUTHOR_NAME: 'Demo Author', GIT_AUTHOR_EMAIL: 'demo@example.com', GIT_COMMITTER_NAME: 'Demo Author', GIT_COMMITTER_EMAIL: 'demo@example.com', GIT_CONFIG_NOSYSTEM: '1' };
  const git = (...args: string[]): string => gitSync(dir, args, env);
  const write = (file: string, content: string | Buffer) => {
    const abs = path.join(dir, file);
    fs.mkdirSync(path.dirname(abs), { recursive: true });
    fs.writeFileSync(abs, content);
  };
  const commit = (message: string, date: string): string => {
    git('add', '-A');
    gitSync(dir, ['-c', 'commit.gpgsign=false', 'commit', '-q', '-m', message], { ...env, GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date });
    return git('rev-parse', 'HEAD');
  };

  git('init', '-q', '-b', 'main');
  git('remote', 'add', 'origin', origin);
  write('src/price.ts', PRICE_BASE);
  write('src/cart.ts', CART_BASE);
  write('test/cart.test.ts', CART_TEST);
  write('openapi.yaml', OPENAPI_BASE);
  write('goldens/checkout-button.png', solidPng(48, 24, [200, 40, 40]));
  write('package.json', manifest('1.0.0', '^4.18.0'));
  const baseSha = commit('shop: prices, cart and the items API', '2026-01-05T09:00:00Z');

  git('checkout', '-q', '-b', 'feature/discount');
  write('src/price.ts', PRICE_HEAD);
  write('src/cart.ts', CART_HEAD);
  write('test/cart.test.ts', CART_TEST_HEAD);
  commit('cart: a discount on the total; prices rounded to cents', '2026-01-06T10:00:00Z');
  write('openapi.yaml', OPENAPI_HEAD);
  write('goldens/checkout-button.png', solidPng(48, 24, [200, 40, 40], { x: 6, y: 6, w: 16, h: 10, rgb: [40, 40, 200] }));
  write('package.json', manifest('1.1.0', '^5.1.0'));
  const headSha = commit('api: GET /cart/total, limit required, DELETE /items/{id} gone; new button golden', '2026-01-06T11:00:00Z');
  return { dir: fs.realpathSync(dir), baseSha, headSha, origin };
}
