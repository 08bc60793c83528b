import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { newUuidV7 } from '../../src/events/ids';
import { startServer, type RunningServer } from '../../src/server/bootstrap';
import { GitFixture } from '../support/git-fixture';
import { rpcClient } from './support';

/**
 * The 300-file PR of issue 16 on a real server, and the measurements taken of it in a real Chromium —
 * shared by test/e2e/big-pr.test.ts (which asserts on them) and bench/review-page.ts (which only prints
 * them, for a re-run on a quiet machine).
 */

export const FILES = 300;
const LINES = 36;
const CHANGED = 34;
export const WORKSPACE = 'default';
export const BIG = { repoId: 'big', prNumber: 1 };
/** The baseline: two of those files, reviewed on the same server. */
export const SMALL = { repoId: 'big', prNumber: 2 };
export const VIEWPORT = { width: 1360, height: 1000 };

export interface BigPrServer {
  server: RunningServer;
  token: string;
  /** `git diff --shortstat` of the big PR. */
  shortstat: string;
  computeMs: number;
  cohorts: number;
  rpc(method: string, params: Record<string, unknown>): Promise<any>;
  close(): Promise<void>;
}

export async function startBigPr(): Promise<BigPrServer> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-e2e-big-'));
  const repo = new GitFixture('rl-e2e-big-', path.join(dataDir, 'repos', WORKSPACE));
  repo.git('remote', 'add', 'origin', 'git@github.com:acme/big.git');
  const file = (i: number, head: boolean) => Array.from({ length: LINES }, (_, k) => `export const c${i}_${k} = ${k < CHANGED && head ? `${k} + 1` : k};`).join('\n') + '\n';
  for (let i = 0; i < FILES; i++) repo.write(`src/m${i % 30}/f${i}.ts`, file(i, false));
  const base = repo.commit('base');
  for (let i = 0; i < FILES; i++) repo.write(`src/m${i % 30}/f${i}.ts`, file(i, true));
  const head = repo.commit('head');
  repo.git('checkout', '-q', '-b', 'small', base);
  for (let i = 0; i < 2; i++) repo.write(`src/m${i % 30}/f${i}.ts`, file(i, true));
  const smallHead = repo.commit('small');
  const shortstat = repo.git('diff', '--shortstat', base, head).trim();
  const server = await startServer({ dataDir, port: 0 });
  const token = fs.readFileSync(path.join(dataDir, 'owner-token'), 'utf8').trim();
  const client = rpcClient(() => server.url, WORKSPACE, {});
  const rpc = (method: string, params: Record<string, unknown>) => client.rpc(token, method, params);
  await rpc('registerRepo', { idempotencyKey: newUuidV7(), repoId: BIG.repoId, path: repo.dir });
  await rpc('requestReview', { idempotencyKey: newUuidV7(), ...BIG, baseSha: base, headSha: head });
  await rpc('requestReview', { idempotencyKey: newUuidV7(), ...SMALL, baseSha: base, headSha: smallHead });
  await rpc('computeReview', { idempotencyKey: newUuidV7(), ...SMALL });
  const t0 = Date.now();
  const computed = (await rpc('computeReview', { idempotencyKey: newUuidV7(), ...BIG })).result;
  const computeMs = Date.now() - t0;
  return {
    server,
    token,
    shortstat,
    computeMs,
    cohorts: computed.cohorts.length,
    rpc,
    close: async () => {
      await server.close();
      repo.cleanup();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Load average (1 min) per core, one decimal. */
export const loadPerCore = () => Math.round((os.loadavg()[0] / os.cpus().length) * 100) / 100;

const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
export const median = (xs: number[]) => {
  const s = sorted(xs);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
/** Nearest-rank percentile. */
export const percentile = (xs: number[], p: number) => sorted(xs)[Math.min(xs.length - 1, Math.max(0, Math.ceil((p / 100) * xs.length) - 1))];

export interface Opened {
  page: Page;
  /** First meaningful paint: the riskiest cohort's first hunk drawn and a frame after it, from navigation start. */
  paintMs: number;
  /** When the first code line was painted, from Element Timing (its `renderTime`); null if not reported. */
  elementPaintMs: number | null;
  /** The page's own performance marks (`review-page:*`) as `name@ms`. */
  marks: string;
}

/** Opens the Review page of `pr` in a fresh browser context and waits for its first meaningful paint. */
export async function openReview(browser: Browser, s: BigPrServer, pr: { repoId: string; prNumber: number }): Promise<Opened> {
  const ctx = await browser.newContext({ viewport: VIEWPORT });
  const page = await ctx.newPage();
  page.on('pageerror', (err) => console.error('page error:', err));
  await page.goto(`${s.server.url}/workspaces/${WORKSPACE}/repos/${pr.repoId}/prs/${pr.prNumber}#token=${encodeURIComponent(s.token)}`);
  await page.waitForSelector('section.file .row.add', { timeout: 30_000 });
  // A frame after the rows were drawn, in the page's clock (0 = navigation start).
  const paintMs = await page.evaluate(() => new Promise<number>((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(performance.now())))));
  const elementPaintMs = await page.evaluate(
    () =>
      new Promise<number | null>((resolve) => {
        const done = (v: number | null) => resolve(v === null ? null : Math.round(v));
        // The first line may be drawn more than once before a paint (findings arriving redraw it): the earliest paint counts.
        new PerformanceObserver((list) => {
          const times = list
            .getEntries()
            .filter((x) => (x as PerformanceEntry & { identifier?: string }).identifier === 'first-code')
            .map((x) => (x as PerformanceEntry & { renderTime: number }).renderTime || x.startTime);
          if (times.length) done(Math.min(...times));
        }).observe({ type: 'element', buffered: true });
        setTimeout(() => done(null), 5000);
      }),
  );
  const marks = await page.evaluate(() => performance.getEntriesByType('mark').map((m) => `${m.name.replace('review-page:', '')}@${Math.round(m.startTime)}`).join(' '));
  return { page, paintMs: Math.round(paintMs), elementPaintMs, marks };
}

/** Waits until every page of the diff arrived and all file blocks are in the document. */
export async function waitForWholeDiff(page: Page): Promise<void> {
  await page.waitForFunction(
    (files) => {
      const code = (window as any).__reviewPage.code;
      return !code.loading && document.querySelectorAll('section.file').length >= files;
    },
    FILES,
    { timeout: 60_000 },
  );
}

export interface FrameStats {
  frames: number;
  ms: number;
  fps: number;
  p50FrameMs: number;
  p95FrameMs: number;
  worstFrameMs: number;
  /** Frames longer than 1.5 × 16.7 ms: at least one vsync missed. */
  longFrames: number;
}

export interface ScrollStats {
  /** requestAnimationFrame on the same page for the same time, not scrolling: what the browser and machine give at all right now. */
  idle: FrameStats;
  scroll: FrameStats & { pxPerSecond: number; scrolledPx: number; maxRows: number };
  /** scroll fps / idle fps: the page's own cost, as independent of the machine's load as one run allows. */
  ratio: number;
}

/**
 * Frame times from requestAnimationFrame timestamps. Idle first (no scrolling, `idleMs`), then a
 * programmatic scroll at a constant speed: each frame sets the scroll position from the time since the
 * start (`pxPerSecond`), so a slow frame jumps further, as a fling does, and the distance covered does
 * not depend on the frame rate. Rows in the DOM are sampled every 10th frame.
 */
export async function measureScroll(page: Page, opts: { idleMs?: number; scrollMs?: number; pxPerSecond?: number } = {}): Promise<ScrollStats> {
  const { idleMs = 2000, scrollMs = 4000, pxPerSecond = 6000 } = opts;
  return page.evaluate(
    ({ idleMs, scrollMs, pxPerSecond }) => {
      const stats = (deltas: number[], ms: number) => {
        const s = [...deltas].sort((a, b) => a - b);
        const pick = (p: number) => Math.round((s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? 0) * 10) / 10;
        return { frames: deltas.length, ms: Math.round(ms), fps: Math.round((deltas.length / ms) * 10000) / 10, p50FrameMs: pick(50), p95FrameMs: pick(95), worstFrameMs: Math.round(s[s.length - 1] ?? 0), longFrames: deltas.filter((d) => d > 25).length };
      };
      const run = (ms: number, onFrame: (elapsed: number, n: number) => void) =>
        new Promise<{ deltas: number[]; ms: number }>((resolve) => {
          const deltas: number[] = [];
          let start = 0;
          let last = 0;
          const step = (t: number) => {
            if (!start) start = last = t;
            else {
              deltas.push(t - last);
              last = t;
            }
            onFrame(t - start, deltas.length);
            if (t - start < ms) requestAnimationFrame(step);
            else resolve({ deltas, ms: t - start });
          };
          requestAnimationFrame(step);
        });
      return (async () => {
        window.scrollTo(0, 0);
        const idle = await run(idleMs, () => undefined);
        const top = document.getElementById('cohorts')!.getBoundingClientRect().top + window.scrollY;
        let maxRows = 0;
        let scrolledPx = 0;
        const scroll = await run(scrollMs, (elapsed, n) => {
          scrolledPx = Math.round((elapsed * pxPerSecond) / 1000);
          window.scrollTo(0, top + scrolledPx);
          if (n % 10 === 0) maxRows = Math.max(maxRows, document.querySelectorAll('.row').length);
        });
        const i = stats(idle.deltas, idle.ms);
        const sc = stats(scroll.deltas, scroll.ms);
        return { idle: i, scroll: { ...sc, pxPerSecond, scrolledPx, maxRows }, ratio: Math.round((sc.fps / i.fps) * 100) / 100 };
      })();
    },
    { idleMs, scrollMs, pxPerSecond },
  );
}
