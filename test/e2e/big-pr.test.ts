import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { ARTIFACTS, buildWebBundle, launchChromium } from './support';
import { BIG, FILES, SMALL, loadPerCore, measureScroll, median, openReview, startBigPr, waitForWholeDiff, type BigPrServer, type Opened } from './big-pr-harness';

/** First meaningful paint budget (issue 16): the first hunks of the riskiest cohort on screen. */
const PAINT_BUDGET_MS = 1500;
/** The big PR's paint, measured beside a 2-file PR's on the same server and browser, may cost at most this many times as much. */
const MAX_PAINT_RATIO = 4;
const OPENS = 3;

/**
 * A PR of 300 changed files and 20,400 changed lines on the Review page: first meaningful paint (when the
 * riskiest cohort's first code line is painted, by Element Timing — or, where the browser does not report
 * it, a frame after the rows were drawn — from navigation start) and the frame rate while scrolling the
 * virtualized code view, measured in Debian chromium. Figures are printed for docs/review-page.md;
 * `npm run bench:review-page` takes the same measurements with more opens (test/e2e/big-pr-harness.ts).
 */
describe('Review page on a 300-file PR (browser)', () => {
  let s: BigPrServer;
  let browser: Browser;
  const figures: Record<string, unknown> = {};

  beforeAll(async () => {
    buildWebBundle();
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    s = await startBigPr();
    figures.fixture = s.shortstat;
    figures.computeMs = s.computeMs;
    figures.cohorts = s.cohorts;
    for (const [name, params] of [['review_studio.cohorts', {}], ['review_studio.reviewDiff', { maxBytes: 32 * 1024 }], ['review_studio.nodeStatus', {}]] as const) {
      const t = Date.now();
      await s.rpc(name, { ...BIG, ...params });
      figures[`${name.slice(14)}Ms`] = Date.now() - t;
    }
    browser = await launchChromium();
  }, 600_000);

  afterAll(async () => {
    await browser?.close();
    await s?.close();
    console.log(`big PR figures: ${JSON.stringify(figures)}`);
  });

  const paintOf = (o: Opened) => o.elementPaintMs ?? o.paintMs;

  it('reaches first meaningful paint within 1.5 s, with every one of the 300 files served in bounded pages', async () => {
    expect(figures.fixture).toMatch(/300 files changed, 10200 insertions\(\+\), 10200 deletions\(-\)/);
    const load = loadPerCore();
    figures.loadPerCore = load;
    // Side by side, alternating: the 2-file PR, then the 300-file PR, three times.
    const runs: Opened[] = [];
    const baseline: Opened[] = [];
    let last: Page | null = null;
    for (let i = 0; i < OPENS; i++) {
      const small = await openReview(browser, s, SMALL);
      baseline.push(small);
      await small.page.context().close();
      const big = await openReview(browser, s, BIG);
      runs.push(big);
      if (last) await last.context().close();
      last = big.page;
    }
    // Debian chromium reports Element Timing: the first code line carries `elementtiming` and is timed by it.
    expect(runs.map((r) => r.elementPaintMs).filter((ms) => ms === null)).toEqual([]);
    figures.firstPaintMs = runs.map(paintOf);
    figures.smallPrFirstPaintMs = baseline.map(paintOf);
    figures.frameAfterRowsMs = runs.map((r) => r.paintMs);
    figures.marks = runs.map((r) => r.marks);
    const big = median(runs.map(paintOf));
    const ratio = big / median(baseline.map(paintOf));
    figures.firstPaintMedianMs = big;
    figures.paintRatio = Math.round(ratio * 100) / 100;
    // Virtualized: 150 times the code costs the first paint at most a few times a 2-file PR's.
    expect(ratio).toBeLessThanOrEqual(MAX_PAINT_RATIO);
    // The absolute budget holds on a machine that is not oversubscribed (on a loaded one the ratio speaks).
    if (load <= 1) expect(big).toBeLessThanOrEqual(PAINT_BUDGET_MS);

    // All pages arrive in the background; the DOM holds only the rows near the viewport.
    const page = last!;
    await waitForWholeDiff(page);
    figures.fileBlocks = await page.$$eval('section.file', (els) => els.length);
    figures.rowsInDom = await page.$$eval('.row', (els) => els.length);
    expect(figures.fileBlocks).toBe(FILES);
    expect(figures.rowsInDom as number).toBeLessThan(5000);

    // A placeholder is exactly as tall as the rows that replace it: drawing a block moves nothing below it.
    const sizes = await page.evaluate(async () => {
      const bodies = [...document.querySelectorAll<HTMLElement>('section.file .file-body')].filter((b) => !b.querySelector('.inline-finding'));
      const far = bodies.filter((b) => !b.querySelector('.row')).slice(100, 103);
      const before = far.map((b) => b.getBoundingClientRect().height);
      const out: Array<{ placeholder: number; drawn: number; rows: number }> = [];
      for (const [i, b] of far.entries()) {
        b.scrollIntoView();
        for (let t = 0; t < 100 && !b.querySelector('.row'); t++) await new Promise((r) => requestAnimationFrame(r));
        out.push({ placeholder: before[i], drawn: b.getBoundingClientRect().height, rows: b.querySelectorAll('.row').length });
      }
      window.scrollTo(0, 0);
      return out;
    });
    expect(sizes).toHaveLength(3);
    for (const x of sizes) {
      expect(x.rows).toBeGreaterThan(0);
      expect(x.drawn).toBe(x.placeholder);
    }

    const scroll = await measureScroll(page);
    figures.scroll = scroll;
    expect(scroll.scroll.scrolledPx).toBeGreaterThan(10_000);
    expect(scroll.scroll.maxRows).toBeLessThan(5000);
    await page.screenshot({ path: path.join(ARTIFACTS, 'review-page-big-pr.png') });
    await page.context().close();
  }, 180_000);
});
