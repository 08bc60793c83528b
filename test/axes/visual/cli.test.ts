import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { blank, fromPng, setPixel, toPng } from './support/images';

const run = promisify(execFile);
const BIN = path.resolve(__dirname, '../../../bin/review-ledger.js');

async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run('node', [BIN, ...args], { env: { ...process.env, REVIEW_LEDGER_FROM_SOURCE: '1' } });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('review-ledger visual-diff', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-visual-cli-'));
    fs.writeFileSync(path.join(dir, 'a.png'), toPng(blank(30, 20)));
    fs.writeFileSync(path.join(dir, 'b.png'), toPng(setPixel(blank(30, 20), 7, 8, [0, 0, 0, 255])));
    fs.writeFileSync(path.join(dir, 'bad.png'), 'not a png');
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('exits 1 on a change and writes the diff image with --out', async () => {
    const out = path.join(dir, 'diff.png');
    const r = await cli(['visual-diff', path.join(dir, 'a.png'), path.join(dir, 'b.png'), '--out', out]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^changed: 1 pixel\(s\) changed/);
    const diff = fromPng(fs.readFileSync(out));
    expect([...diff.data.subarray((8 * 30 + 7) * 4, (8 * 30 + 7) * 4 + 4)]).toEqual([255, 0, 0, 255]);
  });

  it('exits 0 on identical images and prints JSON with --json', async () => {
    const r = await cli(['visual-diff', path.join(dir, 'a.png'), path.join(dir, 'a.png'), '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ state: 'unchanged', changedPixels: 0, width: 30, height: 20 });
  });

  it('exits 2 with a clear error for a malformed PNG', async () => {
    const r = await cli(['visual-diff', path.join(dir, 'a.png'), path.join(dir, 'bad.png')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('error [malformed_png]');
    expect(r.stderr).toContain('bad.png: not a PNG');
  });
});
