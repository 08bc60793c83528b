/** What the RPC benches share: a `serve` child process, a JSON-RPC call, the finding they file, a process's CPU. */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { FoldCache } from '../../src/workspaces/fold-cache';

const ROOT = path.resolve(__dirname, '../..');

/** The finding `addReviewNode` files in the RPC benches. */
export const benchNode = (title: string) => ({
  kind: 'bug',
  priority: 'P2',
  triage: { category: 'correctness', severity: 'medium', effort: 'small' },
  confidence: 0.6,
  reasoning: 'The guard is evaluated after the dereference, so an empty list reads index -1.',
  title,
  body: 'Move the length check before the access.',
  brief: 'engineer',
});

/**
 * `review-ledger serve --port 0` in a child process (its own event loop and CPU), resolved with the URL it
 * listens on. `nodeArgs` go to node (e.g. --cpu-prof), `cliArgs` before `serve` (store, keys); `root`: another
 * checkout to run (bench/server-ab.ts).
 */
export async function startServeChild(dataDir: string, options: { nodeArgs?: string[]; cliArgs?: string[]; root?: string } = {}): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), '-r', './tools/ts-register.js', 'src/cli/main.ts', '--data-dir', dataDir, ...(options.cliArgs ?? []), 'serve', '--port', '0'], {
    cwd: options.root ?? ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /listening on (http:\/\/[^\s]+)/.exec(out);
      if (m) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`server exited with ${code}: ${out}`)));
  });
  return { child, url };
}

/** One JSON-RPC call over HTTP; an error answer throws. */
export async function rpc(url: string, token: string, method: string, params: Record<string, unknown>): Promise<any> {
  const res = await fetch(`${url}/rpc`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  const body = (await res.json()) as any;
  if (body.error) throw new Error(`${method}: ${JSON.stringify(body.error)}`);
  return body.result;
}

/**
 * CPU time of a whole process so far, in ms: utime + stime of /proc/<pid>/stat, which count every thread
 * it ever ran, exited ones too (summing live threads' schedstat misses threads that already ended). The
 * unit is the clock tick (USER_HZ, 100 on Linux: 10 ms); 0 once the process is gone.
 */
export function processCpuMs(pid: number): number {
  const [user, system] = statTicks(`/proc/${pid}/stat`);
  return (user + system) * 10;
}

/** utime and stime (clock ticks) of a /proc `stat` file; zeros once the process or thread is gone. */
function statTicks(file: string): [number, number] {
  try {
    const stat = fs.readFileSync(file, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return [Number(fields[11]), Number(fields[12])];
  } catch {
    return [0, 0];
  }
}

/**
 * CPU time (ms) of a process's main thread (the event loop; /proc/<pid>/task/<pid>/stat), user and system
 * apart; the rest of processCpuMs is every other thread's (V8's GC and compiler helpers, libuv's pool,
 * workers). Zeros once the process is gone.
 */
export function mainThreadCpuMs(pid: number): { user: number; system: number } {
  const [user, system] = statTicks(`/proc/${pid}/task/${pid}/stat`);
  return { user: user * 10, system: system * 10 };
}

/**
 * Times the process's main thread was taken off the CPU while it could still run (`nonvoluntary_ctxt_switches`
 * of /proc/<pid>/status: the thread-group leader, i.e. the event loop's thread); 0 once the process is gone.
 * Under load on a shared host this counts the server being preempted — e.g. by the PostgreSQL backend its
 * commit wakes on the same core.
 */
export function involuntarySwitches(pid: number): number {
  return procStatus(pid, 'nonvoluntary_ctxt_switches');
}

/** A numeric field of /proc/<pid>/status (e.g. `VmRSS`, in kB); 0 once the process is gone. */
export function procStatus(pid: number, field: string): number {
  try {
    return Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** Every `postgres` process now, with its CPU so far (ms). */
export function postgresTicks(): Map<number, number> {
  const out = new Map<number, number>();
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (fs.readFileSync(`/proc/${d}/comm`, 'utf8').trim() !== 'postgres') continue;
      out.set(Number(d), processCpuMs(Number(d)));
    } catch {
      // gone
    }
  }
  return out;
}

/** CPU (ms) the `postgres` processes spent since `before` (a backend that exited meanwhile is not counted; `exclude`: the bench's own backends). */
export function postgresDelta(before: Map<number, number>, exclude?: ReadonlySet<number>): number {
  let sum = 0;
  for (const [pid, t] of postgresTicks()) if (!exclude?.has(pid)) sum += t - (before.get(pid) ?? 0);
  return sum;
}

type FoldCacheStats = ReturnType<FoldCache['stats']>;

/** The server's fold cache totals from /health (misses: loads that folded their stream from the start). */
export async function foldCacheOf(url: string): Promise<FoldCacheStats | null> {
  try {
    return ((await (await fetch(`${url}/health`)).json()) as { foldCache?: FoldCacheStats }).foldCache ?? null;
  } catch {
    return null;
  }
}
