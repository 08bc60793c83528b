/**
 * Side-by-side rounds for benches that compare our code with a raw reference in one process (issue #39
 * item 4): the sides run A B A B … (each round runs every side once, in the same order), each run timed
 * in wall time and in CPU time of the whole process — every thread, exited ones included.
 *
 * CPU: process.cpuUsage() is getrusage(RUSAGE_SELF), which on Linux sums all threads of the process and
 * keeps the time of threads that already exited (SQLite's and libuv's helpers, worker threads), at
 * microsecond resolution. /proc/self/stat holds the same sum in 10 ms ticks (bench/support/server-child.ts
 * processCpuMs reads it for another process); procStatCpuMs below reads it for this one, so a run can
 * show both agree over its whole length.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import { median, round } from './report';

/** One side of a comparison: `run` does one round's work and returns how many events it handled. */
export interface Side {
  name: string;
  run: () => Promise<number> | number;
}

export interface Spread {
  min: number;
  median: number;
  max: number;
}

export interface SideStats {
  name: string;
  /** Events per second of wall time, per round. */
  wallRate: Spread;
  /** Wall microseconds per event, per round. */
  wallUs: Spread;
  /** CPU microseconds per event (whole process), per round. */
  cpuUs: Spread;
  rounds: Array<{ events: number; wallMs: number; cpuMs: number }>;
}

const spread = (xs: number[], digits: number): Spread => ({ min: round(Math.min(...xs), digits), median: round(median(xs), digits), max: round(Math.max(...xs), digits) });

/** CPU milliseconds of this process so far, all threads (getrusage). */
export function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/** The same sum from /proc/self/stat (utime + stime, exited threads included), in 10 ms ticks; null off Linux. */
export function procStatCpuMs(): number | null {
  try {
    const stat = fs.readFileSync('/proc/self/stat', 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * 10;
  } catch {
    return null;
  }
}

export const loadAverage = (): number[] => os.loadavg().map((l) => round(l, 2));

/** Runs `rounds` rounds of every side in order (A B A B …) and returns each side's spreads. */
export async function alternate(rounds: number, sides: Side[]): Promise<SideStats[]> {
  const runs: Array<Array<{ events: number; wallMs: number; cpuMs: number }>> = sides.map(() => []);
  for (let r = 0; r < rounds; r++) {
    for (let s = 0; s < sides.length; s++) {
      const c = cpuMs();
      const t = performance.now();
      const events = await sides[s].run();
      const wallMs = performance.now() - t;
      runs[s].push({ events, wallMs, cpuMs: cpuMs() - c });
    }
  }
  return sides.map((side, s) => ({
    name: side.name,
    wallRate: spread(runs[s].map((x) => (x.events / x.wallMs) * 1000), 0),
    wallUs: spread(runs[s].map((x) => (x.wallMs * 1000) / x.events), 2),
    cpuUs: spread(runs[s].map((x) => (x.cpuMs * 1000) / x.events), 2),
    rounds: runs[s],
  }));
}

/**
 * Ratios of `ours` against `ref` as "how many times ref's cost": CPU and wall µs per event, median over
 * median, and the median of the per-round ratios (each round's two runs were back to back).
 */
export function costRatios(ours: SideStats, ref: SideStats): { cpu: number; wall: number; cpuPaired: number; wallPaired: number } {
  const per = (k: 'cpuMs' | 'wallMs') => median(ours.rounds.map((o, i) => o[k] / o.events / (ref.rounds[i][k] / ref.rounds[i].events)));
  return {
    cpu: round(ours.cpuUs.median / ref.cpuUs.median, 3),
    wall: round(ours.wallUs.median / ref.wallUs.median, 3),
    cpuPaired: round(per('cpuMs'), 3),
    wallPaired: round(per('wallMs'), 3),
  };
}

export const fmtSpread = (s: Spread): string => `${s.min} / ${s.median} / ${s.max}`;
