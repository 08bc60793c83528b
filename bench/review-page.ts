/**
 * bench:review-page — the Review page on the 300-file PR of issue 16 (20,400 changed lines) in Debian
 * chromium (headless, software rendering), as test/e2e/big-pr.test.ts measures it but with more opens and
 * no assertion, for a re-run on a quiet machine:
 *
 *   flock /work/bench.lock npm run bench:review-page -- [--opens 9] [--unthrottled]
 *
 * - server: `review_studio.reviewDiff` first page (32 KiB of hunks) cold (first read after the
 *   computation: git numstat + the page's files) and warm (served from the per-(base, head) cache), and the
 *   `cohorts` snapshot, each with its JSON size;
 * - first meaningful paint (the riskiest cohort's first hunk drawn and one frame after it, from navigation
 *   start) over N fresh opens of the big PR, alternating with N opens of a 2-file PR on the same server:
 *   median, p90 and the ratio of the medians;
 * - rows in the DOM once the whole diff arrived, and at most while scrolling;
 * - frame rate from requestAnimationFrame timestamps: 2 s idle on the page, then 4 s of programmatic scroll
 *   at 6,000 px/s (scroll position set from the elapsed time each frame); fps, p50/p95/worst frame, and
 *   scroll fps / idle fps. `--unthrottled` launches chromium with --disable-gpu-vsync
 *   --disable-frame-rate-limit, so frames are not held to 60 Hz and the figures say how many the page could
 *   draw.
 * The last line is one JSON object, `{"bench":"review-page",...}`, with the load average per core at the
 * start and the end.
 */
import { buildWebBundle, launchChromium } from '../test/e2e/support';
import { traceScroll } from './scroll-trace';
import { BIG, SMALL, loadPerCore, measureScroll, median, openReview, percentile, startBigPr, waitForWholeDiff } from '../test/e2e/big-pr-harness';

export async function main(argv: string[]): Promise<void> {
  const opens = Number(argv[argv.indexOf('--opens') + 1] || 0) || 7;
  const unthrottled = argv.includes('--unthrottled');
  const traceFile = argv.includes('--trace') ? argv[argv.indexOf('--trace') + 1] : null;
  buildWebBundle();
  const loadStart = loadPerCore();
  const s = await startBigPr();
  const timed = async (method: string, params: Record<string, unknown>) => {
    const t = performance.now();
    const r = await s.rpc(method, params);
    return { ms: Math.round(performance.now() - t), bytes: JSON.stringify(r).length };
  };
  const server = {
    reviewDiffFirstPageColdMs: 0,
    reviewDiffFirstPageWarmMs: 0,
    reviewDiffFirstPageBytes: 0,
    cohortsMs: 0,
    cohortsBytes: 0,
  };
  const cold = await timed('review_studio.reviewDiff', { ...BIG, maxBytes: 32 * 1024 });
  const warm = [];
  for (let i = 0; i < 5; i++) warm.push((await timed('review_studio.reviewDiff', { ...BIG, maxBytes: 32 * 1024 })).ms);
  const cohorts = await timed('review_studio.cohorts', BIG);
  Object.assign(server, { reviewDiffFirstPageColdMs: cold.ms, reviewDiffFirstPageWarmMs: median(warm), reviewDiffFirstPageBytes: cold.bytes, cohortsMs: cohorts.ms, cohortsBytes: cohorts.bytes });
  console.log(`fixture: ${s.shortstat}, ${s.cohorts} cohorts, computed in ${s.computeMs} ms`);
  console.log(`server: ${JSON.stringify(server)}`);

  const browser = await launchChromium(unthrottled ? ['--disable-gpu-vsync', '--disable-frame-rate-limit'] : []);
  try {
    const big: number[] = [];
    const small: number[] = [];
    const bigElement: number[] = [];
    const smallElement: number[] = [];
    let last = null as Awaited<ReturnType<typeof openReview>> | null;
    for (let i = 0; i < opens; i++) {
      const a = await openReview(browser, s, SMALL);
      small.push(a.paintMs);
      if (a.elementPaintMs !== null) smallElement.push(a.elementPaintMs);
      await a.page.context().close();
      const b = await openReview(browser, s, BIG);
      big.push(b.paintMs);
      if (b.elementPaintMs !== null) bigElement.push(b.elementPaintMs);
      console.log(`open ${i + 1}: 300-file ${b.paintMs} ms (first line painted @${b.elementPaintMs}; ${b.marks}), 2-file ${a.paintMs} ms (painted @${a.elementPaintMs})`);
      if (last) await last.page.context().close();
      last = b;
    }
    const page = last!.page;
    await waitForWholeDiff(page);
    const fileBlocks = await page.$$eval('section.file', (els) => els.length);
    const rowsInDom = await page.$$eval('.row', (els) => els.length);
    const elementsInDom = await page.evaluate(() => document.getElementsByTagName('*').length);
    let traceSummary: unknown = null;
    const scroll = traceFile ? await traceScroll(page, traceFile, () => measureScroll(page)).then((t) => ((traceSummary = t.summary), t.result)) : await measureScroll(page);
    if (traceSummary) console.log(`trace (${traceFile}): ${JSON.stringify(traceSummary)}`);
    await page.context().close();
    const out = {
      bench: 'review-page',
      fixture: s.shortstat,
      cohorts: s.cohorts,
      opens,
      paintMs: { median: median(big), p90: percentile(big, 90), runs: big },
      smallPrPaintMs: { median: median(small), p90: percentile(small, 90), runs: small },
      paintRatio: Math.round((median(big) / median(small)) * 100) / 100,
      // Element Timing's renderTime of the first code line: when it was painted, without the harness's wait.
      elementPaintMs: bigElement.length ? { median: median(bigElement), p90: percentile(bigElement, 90), runs: bigElement } : null,
      smallPrElementPaintMs: smallElement.length ? { median: median(smallElement), runs: smallElement } : null,
      server,
      fileBlocks,
      rowsInDom,
      maxRowsWhileScrolling: scroll.scroll.maxRows,
      elementsInDom,
      fps: scroll.scroll.fps,
      scroll: scroll.scroll,
      idle: scroll.idle,
      scrollToIdleFps: scroll.ratio,
      chromium: unthrottled ? 'headless, --disable-gpu, --disable-gpu-vsync --disable-frame-rate-limit' : 'headless, --disable-gpu',
      load: { perCoreStart: loadStart, perCoreEnd: loadPerCore() },
    };
    console.log(JSON.stringify(out));
  } finally {
    await browser.close();
    await s.close();
  }
}
