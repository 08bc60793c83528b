/**
 * bench:visual — the visual diff engine against pixelmatch (the reference for every count) and odiff
 * (SPEC §12, issues 6 and 18).
 *
 * Fixtures are screenshots of a web-app screen drawn by a real 2D canvas (Skia via @napi-rs/canvas; see
 * bench/support/ui-renders.ts): gradients, shadows, anti-aliased shapes and text, encoded by Skia.
 *   1080p identical — byte-identical files;
 *   1080p scattered1pct — 1 % of the pixels changed at pseudo-random positions all over the image;
 *   1080p block1pct — a solid banner over ~1 % of the image;
 *   1080p textShift — every text run drawn half a pixel to the right (re-rasterised glyphs everywhere);
 *   4K cardChange — a 3840×2160 screenshot of the same layout with the text of one card changed.
 * Per pair, in one loop that rotates the four run by run (so a noisy neighbour weighs on all): our end
 * to end in-process (read both files, hash, decode, compare, encode the diff PNG, with the WebAssembly
 * kernel; a pair of ≥ 1 Mpx is split with the band helper thread), the same with the helper off (one
 * thread), the same with the TypeScript engine (match.ts, what ran before the kernel; helper on), and
 * odiff-bin in its persistent --server mode with anti-aliasing detection on (reads, decodes, compares,
 * writes its diff PNG). Wall time and CPU time: ours is this process's (every thread: the helper,
 * libuv's inflate), odiff's is its server process's (/proc/<pid>/stat: every thread, exited ones too), so on a shared
 * machine the CPU ratio says what the wall ratio would be without the neighbours' load. Before timing,
 * our count is checked against pixelmatch over the whole decoded image.
 * Then a 50-snapshot PR (1080p and 390×844 renders), one thread vs the worker pool.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import { PNG } from 'pngjs';
import pixelmatch from 'pixelmatch';
import { decode as fastPngDecode } from 'fast-png';
import { compareImages, VISUAL_DIFF_OPTIONS, type DiffJob } from '../src/axes/visual/diff';
import { decodePng } from '../src/axes/visual/png';
import { closeSharedDiffPools, DiffPool, runDiffJobs } from '../src/axes/visual/pool';
import { closeBandHelper } from '../src/axes/visual/split';
import { renderUi, scatterPixels, type Rendered } from './support/ui-renders';
// odiff's CPU from /proc/<pid>/stat (every thread, exited ones too; 10 ms ticks, so per-comparison means).
import { processCpuMs } from './support/server-child';

// odiff-bin is CommonJS without an ESM entry; its server class drives one native process over stdio.
// It is not a devDependency: its lock entries for other platforms' binaries are missing from the
// registry metadata, which makes `npm ci` refuse the lock. The bench installs it on first use into the
// gitignored .bench-cache/ (npm registry only) and loads it from there.
const { ODiffServer } = loadOdiff() as { ODiffServer: new () => { compare(a: string, b: string, out: string, o: object): Promise<{ match: boolean; diffCount?: number }>; stop(): void; process: { pid?: number } | null } };

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
const ownCpuMs = () => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
};

function loadOdiff(): unknown {
  const prefix = path.join(__dirname, '..', '.bench-cache', 'odiff');
  const entry = path.join(prefix, 'node_modules', 'odiff-bin');
  if (!fs.existsSync(entry)) {
    console.log('installing odiff-bin@4.5.0 into .bench-cache/odiff (once)…');
    fs.mkdirSync(prefix, { recursive: true });
    execFileSync('npm', ['install', '--no-save', '--no-audit', '--no-fund', '--prefix', prefix, 'odiff-bin@4.5.0'], { stdio: 'inherit' });
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require(entry);
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const now = () => Number(process.hrtime.bigint()) / 1e6;
async function timeIt(runs: number, f: () => unknown): Promise<number> {
  await f(); // warm-up
  const t: number[] = [];
  for (let i = 0; i < runs; i++) {
    const s = now();
    await f();
    t.push(now() - s);
  }
  return median(t);
}

/**
 * How many cores this machine gives us right now: `cores` threads spin for `ms` and we measure the
 * CPU time they got per wall time. On a shared machine this bounds any worker-pool speed-up.
 */
async function probeCores(cores: number, ms = 1000): Promise<number> {
  const code = `const end = Date.now() + ${ms}; let x = 0; while (Date.now() < end) x++; require('node:worker_threads').parentPort.postMessage(x);`;
  const c0 = process.cpuUsage();
  const t0 = now();
  await Promise.all(Array.from({ length: cores }, () => new Promise((resolve) => new Worker(code, { eval: true }).once('message', resolve))));
  const cpu = process.cpuUsage(c0);
  return (cpu.user + cpu.system) / 1000 / (now() - t0);
}


interface Case {
  name: string;
  base: Rendered;
  /** The head render, or the base itself for the identical pair (then the files are the same bytes). */
  head: Rendered;
  basePath: string;
  headPath: string;
}

interface Row {
  name: string;
  pixels: number;
  pixelmatchCount: number;
  oursCount: number;
  odiffCount: number | null;
  pixelmatchRawMs: number;
  oursMs: number;
  /** Ours with the band helper off: one thread (plus libuv's inflate). */
  oursOneThreadMs: number;
  /** Ours with the TypeScript engine instead of the WebAssembly kernel (helper on). */
  oursTypescriptMs: number;
  odiffMs: number;
  /** Medians of CPU time per pair: ours (all our threads), ours in one thread, odiff's server process. */
  oursCpuMs: number;
  oursOneThreadCpuMs: number;
  odiffCpuMs: number;
  /** Median of the per-round ratios ours / odiff (each round runs both back to back). */
  pairedRatio: number;
  /** min / median / max over the rounds (issue #39 item 4), wall ms and CPU ms (CPU: odiff in 10 ms ticks). */
  spreads: Record<'oursMs' | 'odiffMs' | 'oursCpuMs' | 'odiffCpuMs', { min: number; median: number; max: number }>;
}

export async function main(args: string[]): Promise<void> {
  const runs = Number(args.find((a) => a.startsWith('--runs='))?.slice(7) ?? 15);
  const loadAtStart = os.loadavg().map((l) => +l.toFixed(2));
  // --pairs-only: skip the 50-snapshot PR (a quicker run while working on the engine).
  const pairsOnly = args.includes('--pairs-only');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-bench-visual-'));
  // Started once the synchronous rendering is done: its start-up timeout (5 s) runs on our event loop.
  let odiff: InstanceType<typeof ODiffServer> | undefined;
  try {
    const t0 = now();
    const base1080 = renderUi(1920, 1080);
    const base4k = renderUi(3840, 2160, { scale: 2 });
    const pairs: Array<[string, Rendered, Rendered]> = [
      ['1080p identical', base1080, base1080],
      ['1080p scattered1pct', base1080, scatterPixels(base1080, 0.01)],
      ['1080p block1pct', base1080, renderUi(1920, 1080, { blockFraction: 0.01 })],
      ['1080p textShift', base1080, renderUi(1920, 1080, { textDx: 0.5 })],
      ['4K cardChange', base4k, renderUi(3840, 2160, { scale: 2, changedCard: 4 })],
    ];
    const cases: Case[] = pairs.map(([name, base, head], i) => {
      const basePath = path.join(dir, `${i}-base.png`);
      const headPath = path.join(dir, `${i}-head.png`);
      fs.writeFileSync(basePath, base.png);
      fs.writeFileSync(headPath, head.png);
      return { name, base, head, basePath, headPath };
    });
    const renderMs = now() - t0;

    odiff = new ODiffServer();
    const odiffOpts = { threshold: VISUAL_DIFF_OPTIONS.threshold, antialiasing: true };
    await odiff.compare(cases[0].basePath, cases[0].headPath, path.join(dir, 'warm.png'), odiffOpts);

    const decoders = {
      pngjsMs: await timeIt(runs, () => PNG.sync.read(base1080.png)),
      fastPngMs: await timeIt(runs, () => fastPngDecode(base1080.png)),
      oursMs: await timeIt(runs, () => decodePng(base1080.png)),
    };

    const rows: Row[] = [];
    for (const c of cases) {
      const { width, height } = c.base;
      const out = new Uint8Array(width * height * 4);
      const pixelmatchCount = pixelmatch(c.base.data, c.head.data, out, width, height, VISUAL_DIFF_OPTIONS);
      const pixelmatchRawMs = await timeIt(Math.max(3, Math.round(runs / 3)), () => pixelmatch(c.base.data, c.head.data, out, width, height, VISUAL_DIFF_OPTIONS));
      const ours = async () => compareImages(await fs.promises.readFile(c.basePath), await fs.promises.readFile(c.headPath));
      const oursOneThread = async () => compareImages(await fs.promises.readFile(c.basePath), await fs.promises.readFile(c.headPath), { split: 'never' });
      const oursTypescript = async () => compareImages(await fs.promises.readFile(c.basePath), await fs.promises.readFile(c.headPath), { engine: 'typescript' });
      if ((await oursTypescript()).changedPixels !== pixelmatchCount) throw new Error(`${c.name}: the TypeScript engine disagrees with pixelmatch`);
      const oursCount = (await ours()).changedPixels;
      if (oursCount !== pixelmatchCount) throw new Error(`${c.name}: ours counted ${oursCount} changed pixels, pixelmatch ${pixelmatchCount}`);
      const diffOut = path.join(dir, `${c.name.replace(/\W+/g, '-')}-odiff.png`);
      const o = odiff;
      const odiffResult = await o.compare(c.basePath, c.headPath, diffOut, odiffOpts);
      const oursT: number[] = [];
      const oneT: number[] = [];
      const tsT: number[] = [];
      const odiffT: number[] = [];
      const ratios: number[] = [];
      const cpuT = { ours: [] as number[], one: [] as number[], odiff: [] as number[] };
      const odiffPid = o.process?.pid;
      const who4 = ['ours', 'odiff', 'one', 'ts'];
      for (let i = 0; i < runs; i++) {
        // Rotate which goes first, so none always runs on a cache another warmed.
        const order = who4.map((_, j) => who4[(i + j) % who4.length]);
        const t: Record<string, number> = {};
        for (const who of order) {
          const c0 = who === 'odiff' && odiffPid ? processCpuMs(odiffPid) : ownCpuMs();
          const s = now();
          if (who === 'ours') await ours();
          else if (who === 'one') await oursOneThread();
          else if (who === 'ts') await oursTypescript();
          else await o.compare(c.basePath, c.headPath, diffOut, odiffOpts);
          t[who] = now() - s;
          if (who === 'ours') cpuT.ours.push(ownCpuMs() - c0);
          else if (who === 'one') cpuT.one.push(ownCpuMs() - c0);
          else if (who === 'odiff' && odiffPid) cpuT.odiff.push(processCpuMs(odiffPid) - c0);
        }
        oursT.push(t.ours);
        oneT.push(t.one);
        tsT.push(t.ts);
        odiffT.push(t.odiff);
        ratios.push(t.ours / t.odiff);
      }
      rows.push({
        name: c.name,
        pixels: width * height,
        pixelmatchCount,
        oursCount,
        odiffCount: odiffResult.match ? 0 : (odiffResult.diffCount ?? null),
        pixelmatchRawMs,
        oursMs: median(oursT),
        oursOneThreadMs: median(oneT),
        oursTypescriptMs: median(tsT),
        odiffMs: median(odiffT),
        // Means: odiff's CPU comes in 10 ms ticks (processCpuMs), so ours is averaged the same way.
        oursCpuMs: mean(cpuT.ours),
        oursOneThreadCpuMs: mean(cpuT.one),
        odiffCpuMs: cpuT.odiff.length ? mean(cpuT.odiff) : NaN,
        pairedRatio: median(ratios),
        spreads: { oursMs: spreadOf(oursT), odiffMs: spreadOf(odiffT), oursCpuMs: spreadOf(cpuT.ours), odiffCpuMs: spreadOf(cpuT.odiff.length ? cpuT.odiff : [NaN]) },
      });
    }
    // odiff-bin's stop() clears its own "exiting" flag before the process exits, so it warns
    // "exited unexpectedly" on a normal stop; stopping here keeps that line out of the results.
    odiff.stop();
    odiff = undefined;

    if (pairsOnly) {
      printPairs(rows, runs, renderMs, decoders, odiffOpts);
      return;
    }

    // A 50-snapshot PR: 25 desktop and 25 mobile screenshots, each pair with a different change.
    const jobs: DiffJob[] = [];
    const mobile = renderUi(390, 844);
    for (let i = 0; i < 50; i++) {
      const desktop = i % 2 === 0;
      const [w, h, base] = desktop ? [1920, 1080, base1080] : [390, 844, mobile];
      const kind = i % 5;
      const head =
        kind === 0 ? renderUi(w, h, { blockFraction: 0.004 + (i % 7) * 0.001 }) : kind === 1 ? renderUi(w, h, { textDx: 0.5 }) : kind === 2 ? scatterPixels(base, 0.002, i) : renderUi(w, h, { changedCard: i % 6 });
      jobs.push({ kind: 'compare', base: base.png, head: head.png });
    }
    const cores = os.availableParallelism();
    const prRuns = Math.max(5, Math.round(runs / 3));
    // Serial, warm pool and cold pool run interleaved round by round, so that the noisy neighbours of
    // a shared machine weigh on all three alike; the ratios are of the medians.
    // Warm: the process-wide pool the server keeps (its start-up paid by the warm-up round).
    // Cold: a fresh pool per PR, worker start-up included (from TypeScript sources here, so each
    // worker also loads the swc hook; compiled workers start faster).
    const runPr = {
      // One thread: the band helper too is off, so this is what one core does.
      serial: () => runDiffJobs(jobs, { parallelism: 1, split: 'never' }),
      warm: () => runDiffJobs(jobs, { parallelism: cores }),
      cold: async () => {
        const pool = new DiffPool(cores);
        await Promise.all(jobs.map((j) => pool.run(j)));
        await pool.close();
      },
    };
    const prTimes = { serial: [] as number[], warm: [] as number[], cold: [] as number[] };
    // CPU time of the whole process (all threads) per wall time: how many cores each mode actually got.
    const prCores = { serial: [] as number[], warm: [] as number[], cold: [] as number[] };
    await runPr.serial();
    await runPr.warm();
    for (let round = 0; round < prRuns; round++) {
      for (const kind of ['serial', 'warm', 'cold'] as const) {
        const c0 = process.cpuUsage();
        const s0 = now();
        await runPr[kind]();
        const wall = now() - s0;
        const cpu = process.cpuUsage(c0);
        prTimes[kind].push(wall);
        prCores[kind].push((cpu.user + cpu.system) / 1000 / wall);
      }
    }
    const coresGiven = await probeCores(cores);
    const cpuOf = (kind: 'serial' | 'warm' | 'cold') => median(prTimes[kind].map((wall, i) => wall * prCores[kind][i]));
    const serialMs = median(prTimes.serial);
    const poolMs = median(prTimes.warm);
    const coldMs = median(prTimes.cold);

    printPairs(rows, runs, renderMs, decoders, odiffOpts);
    console.log(`machine probe: ${cores} spinning threads got ${coresGiven.toFixed(2)} cores (load average ${os.loadavg()[0].toFixed(2)})`);
    console.log(`50-snapshot PR, cores actually used (CPU time / wall): serial ${median(prCores.serial).toFixed(2)}, warm pool ${median(prCores.warm).toFixed(2)}, cold pool ${median(prCores.cold).toFixed(2)}`);
    console.log(`50-snapshot PR, CPU time: serial ${cpuOf('serial').toFixed(0)} ms, warm pool ${cpuOf('warm').toFixed(0)} ms (pool/serial ${(cpuOf('warm') / cpuOf('serial')).toFixed(2)}: the pool's overhead in CPU, whatever the machine gives)`);
    console.log(`50-snapshot PR: serial ${serialMs.toFixed(0)} ms, warm worker pool (${cores}) ${poolMs.toFixed(0)} ms → ${(serialMs / poolMs).toFixed(2)}×; cold pool (start-up included) ${coldMs.toFixed(0)} ms → ${(serialMs / coldMs).toFixed(2)}×`);

    const key = (name: string) => name.replace(/\s+/g, '_');
    const summary: Record<string, unknown> = { bench: 'visual', runs, cores, fixtures: 'skia' };
    for (const r of rows) {
      const k = key(r.name);
      Object.assign(summary, {
        [`${k}_changedPixels`]: r.oursCount,
        [`${k}_odiffCount`]: r.odiffCount,
        [`${k}_pixelmatchRawMs`]: +r.pixelmatchRawMs.toFixed(2),
        [`${k}_oursMs`]: +r.oursMs.toFixed(2),
        [`${k}_oursOneThreadMs`]: +r.oursOneThreadMs.toFixed(2),
        [`${k}_oursTypescriptMs`]: +r.oursTypescriptMs.toFixed(2),
        [`${k}_oursCpuMs`]: +r.oursCpuMs.toFixed(2),
        [`${k}_oursOneThreadCpuMs`]: +r.oursOneThreadCpuMs.toFixed(2),
        [`${k}_odiffCpuMs`]: +r.odiffCpuMs.toFixed(2),
        [`${k}_cpuOursOverOdiff`]: +(r.oursCpuMs / r.odiffCpuMs).toFixed(3),
        [`${k}_odiffServerMs`]: +r.odiffMs.toFixed(2),
        [`${k}_oursOverOdiff`]: +(r.oursMs / r.odiffMs).toFixed(3),
        [`${k}_pairedRatio`]: +r.pairedRatio.toFixed(3),
        [`${k}_spreads`]: r.spreads,
      });
    }
    const changed1080 = rows.filter((r) => r.name.startsWith('1080p') && r.name !== '1080p identical');
    Object.assign(summary, {
      decode1080_pngjsMs: +decoders.pngjsMs.toFixed(2),
      decode1080_fastPngMs: +decoders.fastPngMs.toFixed(2),
      decode1080_oursMs: +decoders.oursMs.toFixed(2),
      countsEqualPixelmatch: rows.every((r) => r.oursCount === r.pixelmatchCount),
      identical1080_oursMs: +rows[0].oursMs.toFixed(3),
      identicalTargetMet: rows[0].oursMs <= 2,
      changed1080_worstOursOverOdiff: +Math.max(...changed1080.map((r) => r.oursMs / r.odiffMs)).toFixed(3),
      changed1080TargetMet: changed1080.every((r) => r.oursMs <= r.odiffMs),
      pr50_serialMs: +serialMs.toFixed(1),
      pr50_poolMs: +poolMs.toFixed(1),
      pr50_speedup: +(serialMs / poolMs).toFixed(3),
      pr50_coldPoolMs: +coldMs.toFixed(1),
      pr50_coldSpeedup: +(serialMs / coldMs).toFixed(3),
      pr50_serialCoresUsed: +median(prCores.serial).toFixed(2),
      pr50_poolCoresUsed: +median(prCores.warm).toFixed(2),
      pr50_serialCpuMs: +cpuOf('serial').toFixed(1),
      pr50_poolCpuMs: +cpuOf('warm').toFixed(1),
      pr50_poolOverSerialCpu: +(cpuOf('warm') / cpuOf('serial')).toFixed(3),
      loadAverage1m: +os.loadavg()[0].toFixed(2),
      load: { start: loadAtStart, end: os.loadavg().map((l) => +l.toFixed(2)) },
      coresGivenProbe: +coresGiven.toFixed(2),
      poolTargetMet: serialMs / poolMs >= 1.7,
    });
    console.log(JSON.stringify(summary));
  } finally {
    await closeSharedDiffPools();
    await closeBandHelper();
    odiff?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function spreadOf(xs: number[]): { min: number; median: number; max: number } {
  const r = (x: number) => +x.toFixed(2);
  return { min: r(Math.min(...xs)), median: r(median(xs)), max: r(Math.max(...xs)) };
}

function printPairs(rows: Row[], runs: number, renderMs: number, decoders: Record<string, number>, odiffOpts: object): void {
  const f = (n: number, w = 9) => n.toFixed(2).padStart(w);
  console.log(`bench:visual — medians of ${runs} alternating runs, ${os.availableParallelism()} cores, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}; fixtures rendered by Skia in ${(renderMs / 1000).toFixed(1)} s`);
  console.log(`pixelmatch ${JSON.stringify(VISUAL_DIFF_OPTIONS)}; odiff ${JSON.stringify(odiffOpts)}`);
  console.log(`\ndecode one 1080p base PNG (ms): pngjs ${decoders.pngjsMs.toFixed(2)}, fast-png ${decoders.fastPngMs.toFixed(2)}, ours ${decoders.oursMs.toFixed(2)}`);
  console.log('\npair                   changed px: pixelmatch    ours   odiff | pixelmatch raw   ours e2e  (1 thread) (TS engine)   odiff srv  ours/odiff (paired) | CPU ms: ours (1 thread)  odiff  ours/odiff');
  for (const r of rows) {
    console.log(
      `  ${r.name.padEnd(22)}${String(r.pixelmatchCount).padStart(19)}${String(r.oursCount).padStart(8)}${String(r.odiffCount).padStart(8)} |${f(r.pixelmatchRawMs, 15)}${f(r.oursMs, 11)} (${f(r.oursOneThreadMs, 8)}) (${f(r.oursTypescriptMs, 9)})${f(r.odiffMs, 12)}${f(r.oursMs / r.odiffMs, 8)} (${r.pairedRatio.toFixed(2)}) |${f(r.oursCpuMs, 13)} (${f(r.oursOneThreadCpuMs, 8)})${f(r.odiffCpuMs, 7)}${f(r.oursCpuMs / r.odiffCpuMs, 8)}`,
    );
  }
  console.log('');
}
