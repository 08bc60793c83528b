/**
 * bench:visual — the visual diff engine against its limits and against odiff (SPEC §12, issue 6).
 *
 * Pairs at 1920×1080 and 390×844 of a synthetic UI (header, sidebar, cards, lines of text-like glyphs
 * with anti-aliased edges), encoded by pngjs with its adaptive filters like a screenshot tool would:
 *   identical — byte-identical files;
 *   changed1pct — a contiguous block of ~1 % of the pixels recoloured (a badge/card that changed);
 *   textShift — one line of text moved right by one pixel.
 * Measured in one run (medians): raw pixelmatch on already-decoded buffers (the floor for the compare
 * step); our end-to-end per snapshot (read both files, hash, decode, compare, encode the diff PNG);
 * odiff-bin in its persistent --server mode on the same files (reads, decodes, compares, writes its
 * diff PNG); the decoders alone (pngjs, fast-png, ours); and a 50-snapshot PR, serial vs worker pool.
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

// odiff-bin is CommonJS without an ESM entry; its server class drives one native process over stdio.
// eslint-disable-next-line @typescript-eslint/no-require-imports
// It is not a devDependency: its lock entries for other platforms' binaries are missing from the
// registry metadata, which makes `npm ci` refuse the lock. The bench installs it on first use into the
// gitignored .bench-cache/ (npm registry only) and loads it from there.
const { ODiffServer } = loadOdiff() as { ODiffServer: new () => { compare(a: string, b: string, out: string, o: object): Promise<{ match: boolean; diffCount?: number }>; stop(): void } };

function loadOdiff(): unknown {
  const prefix = path.join(__dirname, '..', '.bench-cache', 'odiff');
  const entry = path.join(prefix, 'node_modules', 'odiff-bin');
  if (!fs.existsSync(entry)) {
    console.log('installing odiff-bin@4.5.0 into .bench-cache/odiff (once)…');
    fs.mkdirSync(prefix, { recursive: true });
    execFileSync('npm', ['install', '--no-save', '--no-audit', '--no-fund', '--prefix', prefix, 'odiff-bin@4.5.0'], { stdio: 'inherit' });
  }
  return require(entry);
}

type Rgba = { width: number; height: number; data: Uint8Array };

export function uiImage(width: number, height: number, textShiftLine = -1): Rgba {
  const data = new Uint8Array(width * height * 4);
  const put = (x: number, y: number, r: number, g: number, b: number) => {
    if (x < 0 || y < 0 || x >= width || y >= height) return;
    const o = (y * width + x) * 4;
    data[o] = r;
    data[o + 1] = g;
    data[o + 2] = b;
    data[o + 3] = 255;
  };
  const header = Math.round(height * 0.06);
  const sidebar = width > 800 ? Math.round(width * 0.12) : 0;
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      if (y < header) put(x, y, 28, 58, 118);
      else if (x < sidebar) put(x, y, 232, 234, 238);
      else put(x, y, 247, 248, 250);
    }
  // Cards with a border.
  const cardW = Math.min(420, width - sidebar - 40);
  for (let cy = header + 20, line = 0; cy + 120 < height; cy += 150) {
    for (let cx = sidebar + 20; cx + cardW < width; cx += cardW + 20) {
      for (let y = cy; y < cy + 130; y++)
        for (let x = cx; x < cx + cardW; x++) {
          const border = y === cy || y === cy + 129 || x === cx || x === cx + cardW - 1;
          put(x, y, border ? 210 : 255, border ? 214 : 255, border ? 220 : 255);
        }
      // Text lines: glyphs 6 px wide with a grey anti-aliased left edge, words separated by spaces.
      for (let ty = cy + 16; ty + 12 < cy + 124; ty += 18, line++) {
        const shift = line === textShiftLine ? 1 : 0;
        for (let gx = cx + 14, glyph = 0; gx + 8 < cx + cardW - 14; gx += 7, glyph++) {
          if ((glyph * 31 + line * 7) % 9 === 0) continue;
          const h = 8 + ((glyph * 13 + line) % 4);
          for (let dy = 12 - h; dy < 12; dy++) {
            put(gx + shift, ty + dy, 150, 150, 150);
            put(gx + 1 + shift, ty + dy, 40, 40, 40);
            if ((glyph + dy) % 3 !== 0) put(gx + 2 + shift, ty + dy, 40, 40, 40);
            put(gx + 3 + shift, ty + dy, 190, 190, 190);
          }
        }
      }
    }
  }
  return { width, height, data };
}

export function recolourBlock(img: Rgba, fraction: number): Rgba {
  const out = { ...img, data: new Uint8Array(img.data) };
  const side = Math.round(Math.sqrt(img.width * img.height * fraction));
  const x0 = Math.round(img.width / 2 - side / 2);
  const y0 = Math.round(img.height / 2 - side / 2);
  for (let y = y0; y < y0 + side; y++)
    for (let x = x0; x < x0 + side; x++) {
      const o = (y * img.width + x) * 4;
      out.data[o] = 255 - out.data[o];
      out.data[o + 1] = (out.data[o + 1] + 90) & 255;
    }
  return out;
}

export function encode(img: Rgba): Buffer {
  const png = new PNG({ width: img.width, height: img.height });
  png.data = Buffer.from(img.data);
  return PNG.sync.write(png);
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

interface Row {
  size: string;
  pair: string;
  changedPixels: number;
  odiffCount: number | null;
  pixelmatchRawMs: number;
  oursEndToEndMs: number;
  odiffServerMs: number;
}

export async function main(args: string[]): Promise<void> {
  const runs = Number(args.find((a) => a.startsWith('--runs='))?.slice(7) ?? 15);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-bench-visual-'));
  // Started once the synchronous image generation is done: its start-up timeout (5 s) runs on our
  // event loop, which image generation would otherwise block.
  let odiff: InstanceType<typeof ODiffServer> | undefined;
  try {
    const rows: Row[] = [];
    const decoders: Array<{ size: string; pngjsMs: number; fastPngMs: number; oursMs: number }> = [];
    const sizes: Array<[number, number]> = [
      [1920, 1080],
      [390, 844],
    ];
    const cases: Array<{ size: string; w: number; h: number; pair: string; base: Rgba; head: Rgba; basePath: string; headPath: string }> = [];
    const basePngs = new Map<string, Buffer>();
    for (const [w, h] of sizes) {
      const size = `${w}x${h}`;
      const base = uiImage(w, h);
      const variants: Record<string, Rgba> = { identical: base, changed1pct: recolourBlock(base, 0.01), textShift: uiImage(w, h, 3) };
      const basePng = encode(base);
      basePngs.set(size, basePng);
      const basePath = path.join(dir, `${size}-base.png`);
      fs.writeFileSync(basePath, basePng);
      for (const [pair, head] of Object.entries(variants)) {
        const headPath = path.join(dir, `${size}-${pair}.png`);
        fs.writeFileSync(headPath, pair === 'identical' ? basePng : encode(head));
        cases.push({ size, w, h, pair, base, head, basePath, headPath });
      }
    }
    odiff = new ODiffServer();
    const odiffOpts = { threshold: VISUAL_DIFF_OPTIONS.threshold, antialiasing: true };
    await odiff.compare(cases[0].basePath, cases[0].headPath, path.join(dir, 'warm.png'), odiffOpts);

    for (const [size, basePng] of basePngs) {
      decoders.push({
        size,
        pngjsMs: await timeIt(runs, () => PNG.sync.read(basePng)),
        fastPngMs: await timeIt(runs, () => fastPngDecode(basePng)),
        oursMs: await timeIt(runs, () => decodePng(basePng)),
      });
    }
    for (const { size, w, h, pair, base, head, basePath, headPath } of cases) {
      const out = new Uint8Array(w * h * 4);
      const pixelmatchRawMs = await timeIt(runs, () => pixelmatch(base.data, head.data, out, w, h, VISUAL_DIFF_OPTIONS));
      const ours = async () => compareImages(await fs.promises.readFile(basePath), await fs.promises.readFile(headPath));
      const result = await ours();
      const oursEndToEndMs = await timeIt(runs, ours);
      const diffOut = path.join(dir, `${size}-${pair}-odiff.png`);
      const o = odiff;
      const odiffResult = await o.compare(basePath, headPath, diffOut, odiffOpts);
      const odiffServerMs = await timeIt(runs, () => o.compare(basePath, headPath, diffOut, odiffOpts));
      rows.push({ size, pair, changedPixels: result.changedPixels, odiffCount: odiffResult.match ? 0 : (odiffResult.diffCount ?? null), pixelmatchRawMs, oursEndToEndMs, odiffServerMs });
    }

    // odiff-bin's stop() clears its own "exiting" flag before the process exits, so it warns
    // "exited unexpectedly" on a normal stop; stopping here keeps that line out of the results.
    odiff.stop();
    odiff = undefined;

    // A 50-snapshot PR: 25 desktop and 25 mobile pairs, each with a different 1 % change.
    const jobs: DiffJob[] = [];
    for (let i = 0; i < 50; i++) {
      const [w, h] = sizes[i % 2];
      const base = uiImage(w, h);
      const head = recolourBlock(base, 0.005 + (i % 5) * 0.002);
      jobs.push({ kind: 'compare', base: encode(base), head: encode(head) });
    }
    const cores = os.availableParallelism();
    const prRuns = Math.max(5, Math.round(runs / 3));
    // Serial, warm pool and cold pool run interleaved round by round, so that the noisy neighbours of
    // a shared machine weigh on all three alike; the ratios are of the medians.
    // Warm: the process-wide pool the server keeps (its start-up paid by the warm-up round).
    // Cold: a fresh pool per PR, worker start-up included (from TypeScript sources here, so each
    // worker also loads the swc hook; compiled workers start faster).
    const runPr = {
      serial: () => runDiffJobs(jobs, { parallelism: 1 }),
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
    const serialMs = median(prTimes.serial);
    const poolMs = median(prTimes.warm);
    const coldMs = median(prTimes.cold);

    const f = (n: number) => n.toFixed(2).padStart(8);
    console.log(`bench:visual — medians of ${runs} runs (PR: ${prRuns} runs), ${cores} cores; pixelmatch ${JSON.stringify(VISUAL_DIFF_OPTIONS)}`);
    console.log('\ndecode one base PNG (ms)      pngjs  fast-png      ours');
    for (const d of decoders) console.log(`  ${d.size.padEnd(26)}${f(d.pngjsMs)}${f(d.fastPngMs)}${f(d.oursMs)}`);
    console.log('\nper pair (ms)                    changed px (odiff)  pixelmatch raw  ours end-to-end  odiff --server');
    for (const r of rows) console.log(`  ${`${r.size} ${r.pair}`.padEnd(30)}${String(r.changedPixels).padStart(9)} (${String(r.odiffCount).padStart(6)})${f(r.pixelmatchRawMs).padStart(16)}${f(r.oursEndToEndMs).padStart(17)}${f(r.odiffServerMs).padStart(16)}`);
    console.log(`\nmachine probe: ${cores} spinning threads got ${coresGiven.toFixed(2)} cores (load average ${os.loadavg()[0].toFixed(2)})`);
    console.log(`50-snapshot PR, cores actually used (CPU time / wall): serial ${median(prCores.serial).toFixed(2)}, warm pool ${median(prCores.warm).toFixed(2)}, cold pool ${median(prCores.cold).toFixed(2)}`);
    console.log(`50-snapshot PR: serial ${serialMs.toFixed(0)} ms, warm worker pool (${cores}) ${poolMs.toFixed(0)} ms → ${(serialMs / poolMs).toFixed(2)}×; cold pool (start-up included) ${coldMs.toFixed(0)} ms → ${(serialMs / coldMs).toFixed(2)}×`);

    const get = (size: string, pair: string) => rows.find((r) => r.size === size && r.pair === pair)!;
    const summary: Record<string, unknown> = { bench: 'visual', runs, cores };
    for (const r of rows) {
      const k = `${r.size}_${r.pair}`;
      summary[`${k}_pixelmatchRawMs`] = +r.pixelmatchRawMs.toFixed(2);
      summary[`${k}_oursMs`] = +r.oursEndToEndMs.toFixed(2);
      summary[`${k}_odiffServerMs`] = +r.odiffServerMs.toFixed(2);
      summary[`${k}_changedPixels`] = r.changedPixels;
    }
    for (const d of decoders) Object.assign(summary, { [`${d.size}_decode_pngjsMs`]: +d.pngjsMs.toFixed(2), [`${d.size}_decode_fastPngMs`]: +d.fastPngMs.toFixed(2), [`${d.size}_decode_oursMs`]: +d.oursMs.toFixed(2) });
    const changed1080 = get('1920x1080', 'changed1pct');
    const shift1080 = get('1920x1080', 'textShift');
    Object.assign(summary, {
      identical1080_oursMs: +get('1920x1080', 'identical').oursEndToEndMs.toFixed(2),
      identicalTargetMet: get('1920x1080', 'identical').oursEndToEndMs <= 2 && get('390x844', 'identical').oursEndToEndMs <= 2,
      changed1080_oursOverOdiff: +(changed1080.oursEndToEndMs / changed1080.odiffServerMs).toFixed(3),
      textShift1080_oursOverOdiff: +(shift1080.oursEndToEndMs / shift1080.odiffServerMs).toFixed(3),
      changed1080TargetMet: changed1080.oursEndToEndMs <= changed1080.odiffServerMs && shift1080.oursEndToEndMs <= shift1080.odiffServerMs,
      pr50_serialMs: +serialMs.toFixed(1),
      pr50_poolMs: +poolMs.toFixed(1),
      pr50_speedup: +(serialMs / poolMs).toFixed(3),
      pr50_coldPoolMs: +coldMs.toFixed(1),
      pr50_coldSpeedup: +(serialMs / coldMs).toFixed(3),
      pr50_serialCpuMs: Math.round(serialMs * median(prCores.serial)),
      pr50_poolCpuMs: Math.round(poolMs * median(prCores.warm)),
      pr50_serialCoresUsed: +median(prCores.serial).toFixed(2),
      pr50_poolCoresUsed: +median(prCores.warm).toFixed(2),
      loadAverage1m: +os.loadavg()[0].toFixed(2),
      coresGivenProbe: +coresGiven.toFixed(2),
      poolTargetMet: serialMs / poolMs >= 1.6,
    });
    console.log(JSON.stringify(summary));
  } finally {
    await closeSharedDiffPools();
    odiff?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
