import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Browser } from 'playwright-core';
import { closeSharedDiffPools } from '../../src/axes/visual/pool';
import { closeSharedExtractPool } from '../../src/codegraph/extract-pool';
import { startServer, type RunningServer } from '../../src/server/bootstrap';
import { ARTIFACTS, buildWebBundle, launchChromium } from './support';

const BIN = path.resolve(__dirname, '..', '..', 'bin', 'review-ledger.js');

/** `review-ledger demo` as a newcomer runs it, against the running server; resolves with its --json line. */
function demo(url: string, dataDir: string): Promise<any> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, '--data-dir', dataDir, 'demo', '--url', url, '--json'], { env: { ...process.env, REVIEW_LEDGER_FROM_SOURCE: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (err += c));
    child.on('exit', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (code === 0 && line) resolve(JSON.parse(line));
      else reject(new Error(`demo exited with ${code}:\n${out}\n${err}`));
    });
  });
}

/**
 * The first five minutes in a real browser: the URL `review-ledger demo` prints opens a signed-in
 * Review page that shows the demo's cohorts, findings and verdict — and a newcomer's click on the
 * changed snapshot moves the verdict live.
 */
describe('the page review-ledger demo prints (browser)', () => {
  let server: RunningServer;
  let dataDir: string;
  let browser: Browser;

  beforeAll(async () => {
    buildWebBundle();
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-e2e-demo-'));
    server = await startServer({ dataDir, port: 0 });
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    await closeSharedDiffPools();
    await closeSharedExtractPool();
  });

  it('shows cohorts, findings and a verdict; approving the snapshot moves the verdict from Block to Hold', async () => {
    const r = await demo(server.url, dataDir);
    expect(r.signInUrl).toContain('#token=');
    const ctx = await browser.newContext({ viewport: { width: 1360, height: 1000 } });
    const page = await ctx.newPage();
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(String(err)));
    await page.goto(r.signInUrl);

    // 'none' is the bar before the verdict's snapshot arrives (subscriptions open after the first code line is painted).
    await page.waitForSelector('#verdict-bar[data-verdict]:not([data-verdict="none"])');
    expect(page.url()).not.toContain('token=');
    expect(await page.getAttribute('#verdict-bar', 'data-verdict')).toBe('Block');
    // The code's first page may draw a bare cohort article before the cohorts snapshot completes its head.
    await page.waitForSelector('article.cohort .cohort-head.built');
    const cohorts = await page.$$eval('article.cohort', (els) => els.map((e) => e.textContent ?? ''));
    expect(cohorts.length).toBe(r.cohorts);
    expect(cohorts[0]).toContain('src/cart.ts');
    await page.waitForSelector('#nodes li.node');
    const titles = await page.$$eval('#nodes li.node .node-title', (els) => els.map((e) => e.textContent));
    expect(titles).toEqual(expect.arrayContaining(['A discount larger than the cart makes the total negative', 'No test for a discount above the subtotal']));
    expect(await page.textContent('#ladder')).toMatch(/awaiting approval/i);
    await page.screenshot({ path: path.join(ARTIFACTS, 'demo-page-01-block.png'), fullPage: true });

    // The demo left the changed golden for a human: the signed-in newcomer approves it on the page.
    await page.click('article.snapshot[data-state="changed"] button.approve-visual');
    await page.waitForSelector('#verdict-bar[data-verdict="Hold"]');
    await page.screenshot({ path: path.join(ARTIFACTS, 'demo-page-02-hold.png'), fullPage: true });
    expect(errors).toEqual([]);
    await ctx.close();
  });
});
