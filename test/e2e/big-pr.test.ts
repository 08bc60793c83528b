import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { newUuidV7 } from '../../src/events/ids';
import { startServer, type RunningServer } from '../../src/server/bootstrap';
import { GitFixture } from '../support/git-fixture';
import { ARTIFACTS, buildWebBundle, launchChromium } from './support';

const FILES = 300;
const LINES = 36;
const CHANGED = 34;
/** First meaningful paint budget (issue 16): the first hunks of the riskiest cohort on screen. */
const PAINT_BUDGET_MS = 1500;
/** The big PR's paint, measured beside a 2-file PR's on the same server and browser, may cost at most this many times as much. */
const MAX_PAINT_RATIO = 4;

/**
 * A PR of 300 changed files and 20,400 changed lines on the Review page: first meaningful paint (the
 * riskiest cohort's first hunk drawn and a frame painted after it, from navigation start) and scroll
 * frame rate over the virtualized code view, measured in Debian chromium. Figures are printed for
 * docs/review-page.md.
 */
describe('Review page on a 300-file PR (browser)', () => {
  let server: RunningServer;
  let dataDir: string;
  let repo: GitFixture;
  let browser: Browser;
  let token: string;
  const ws = 'default';
  const target = { repoId: 'big', prNumber: 1 };
  const small = { repoId: 'big', prNumber: 2 };
  const figures: Record<string, unknown> = {};

  const rpc = async (method: string, params: Record<string, unknown>) => {
    const res = await fetch(`${server.url}/rpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { workspace_id: ws, ...params } }),
    });
    const reply = await res.json();
    if (reply.error) throw new Error(`${method}: ${JSON.stringify(reply.error)}`);
    return reply.result;
  };

  beforeAll(async () => {
    buildWebBundle();
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-e2e-big-'));
    repo = new GitFixture('rl-e2e-big-', path.join(dataDir, 'repos', 'default'));
    repo.git('remote', 'add', 'origin', 'git@github.com:acme/big.git');
    const file = (i: number, head: boolean) => Array.from({ length: LINES }, (_, k) => `export const c${i}_${k} = ${k < CHANGED && head ? `${k} + 1` : k};`).join('\n') + '\n';
    for (let i = 0; i < FILES; i++) repo.write(`src/m${i % 30}/f${i}.ts`, file(i, false));
    const base = repo.commit('base');
    for (let i = 0; i < FILES; i++) repo.write(`src/m${i % 30}/f${i}.ts`, file(i, true));
    const head = repo.commit('head');
    // The baseline: a PR of two of those files, reviewed on the same server.
    repo.git('checkout', '-q', '-b', 'small', base);
    for (let i = 0; i < 2; i++) repo.write(`src/m${i % 30}/f${i}.ts`, file(i, true));
    const smallHead = repo.commit('small');
    const stat = repo.git('diff', '--shortstat', base, head);
    figures.fixture = stat.trim();
    server = await startServer({ dataDir, port: 0 });
    token = fs.readFileSync(path.join(dataDir, 'owner-token'), 'utf8').trim();
    await rpc('registerRepo', { idempotencyKey: newUuidV7(), repoId: target.repoId, path: repo.dir });
    await rpc('requestReview', { idempotencyKey: newUuidV7(), ...target, baseSha: base, headSha: head });
    await rpc('requestReview', { idempotencyKey: newUuidV7(), ...small, baseSha: base, headSha: smallHead });
    await rpc('computeReview', { idempotencyKey: newUuidV7(), ...small });
    const t0 = Date.now();
    const computed = (await rpc('computeReview', { idempotencyKey: newUuidV7(), ...target })).result;
    figures.computeMs = Date.now() - t0;
    figures.cohorts = computed.cohorts.length;
    for (const [name, params] of [['review_studio.cohorts', {}], ['review_studio.reviewDiff', {}], ['review_studio.nodeStatus', {}]] as const) {
      const t = Date.now();
      await rpc(name, { ...target, ...params });
      figures[`${name.slice(14)}Ms`] = Date.now() - t;
    }
    browser = await launchChromium();
  }, 600_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    repo?.cleanup();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    console.log(`big PR figures: ${JSON.stringify(figures)}`);
  });

  const open = async (pr = target): Promise<{ page: Page; paintMs: number }> => {
    const ctx = await browser.newContext({ viewport: { width: 1360, height: 1000 } });
    const page = await ctx.newPage();
    page.on('pageerror', (err) => console.error('page error:', err));
    await page.goto(`${server.url}/workspaces/${ws}/repos/${pr.repoId}/prs/${pr.prNumber}#token=${encodeURIComponent(token)}`);
    await page.waitForSelector('section.file .row.add', { timeout: 30_000 });
    // A frame after the rows were drawn, in the page's clock (0 = navigation start).
    const paintMs = await page.evaluate(() => new Promise<number>((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(performance.now())))));
    figures.marks = [...(figures.marks as unknown[] ?? []), await page.evaluate(() => performance.getEntriesByType('mark').map((m) => `${m.name.slice(12)}@${Math.round(m.startTime)}`).join(' '))];
    return { page, paintMs };
  };

  it('reaches first meaningful paint within 1.5 s, with every one of the 300 files served in bounded pages', async () => {
    expect(figures.fixture).toMatch(/300 files changed, 10200 insertions\(\+\), 10200 deletions\(-\)/);
    const load = os.loadavg()[0] / os.cpus().length;
    figures.loadPerCore = Math.round(load * 10) / 10;
    // Side by side, alternating: the 2-file PR, then the 300-file PR, three times.
    const runs: number[] = [];
    const baseline: number[] = [];
    let last: Page | null = null;
    for (let i = 0; i < 3; i++) {
      const s = await open(small);
      baseline.push(Math.round(s.paintMs));
      await s.page.context().close();
      const { page, paintMs } = await open();
      runs.push(Math.round(paintMs));
      if (last) await last.context().close();
      last = page;
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[1];
    figures.firstPaintMs = runs;
    figures.smallPrFirstPaintMs = baseline;
    figures.firstPaintMedianMs = median(runs);
    figures.paintRatio = Math.round((median(runs) / median(baseline)) * 100) / 100;
    // Virtualized: 150 times the code costs the first paint at most a few times a 2-file PR's.
    expect(median(runs) / median(baseline)).toBeLessThanOrEqual(MAX_PAINT_RATIO);
    // The absolute budget holds on a machine that is not oversubscribed (on a loaded one the ratio speaks).
    if (load <= 1) expect(median(runs)).toBeLessThanOrEqual(PAINT_BUDGET_MS);
    const page = last!;
    // All pages arrive in the background; the DOM holds only the rows near the viewport.
    await page.waitForFunction(() => {
      const code = (window as any).__reviewPage.code;
      return !code.loading && document.querySelectorAll('section.file').length >= 300;
    }, null, { timeout: 60_000 });
    figures.fileBlocks = await page.$$eval('section.file', (els) => els.length);
    figures.rowsInDom = await page.$$eval('.row', (els) => els.length);
    expect(figures.rowsInDom as number).toBeLessThan(5000);

    // Scroll for 3 s, one step per frame: frames per second and the worst frame.
    const scroll = await page.evaluate(
      () =>
        new Promise<{ frames: number; ms: number; worstMs: number; over50: number; maxRows: number }>((resolve) => {
          let frames = 0;
          let worst = 0;
          let over50 = 0;
          let maxRows = 0;
          let start = 0;
          let last = 0;
          const step = (t: number) => {
            if (!start) start = last = t;
            else {
              frames++;
              worst = Math.max(worst, t - last);
              if (t - last > 50) over50++;
              last = t;
            }
            if (frames % 20 === 0) maxRows = Math.max(maxRows, document.querySelectorAll('.row').length);
            window.scrollBy(0, 240);
            if (t - start < 3000) requestAnimationFrame(step);
            else resolve({ frames, ms: t - start, worstMs: Math.round(worst), over50, maxRows });
          };
          requestAnimationFrame(step);
        }),
    );
    figures.scroll = { ...scroll, fps: Math.round((scroll.frames / scroll.ms) * 1000 * 10) / 10 };
    expect(scroll.maxRows).toBeLessThan(5000);
    await page.screenshot({ path: path.join(ARTIFACTS, 'review-page-big-pr.png') });
    await page.context().close();
  }, 180_000);
});
