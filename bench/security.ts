// npm run bench:security [-- --sockets 50 --frames 40 --flooders 4 --seconds 10]
// The resource bounds of SPEC §16 under attack, against a real server in a child process:
// - 50 WebSockets that never read, each sending batches of rpc.discover (≈140 KB of answer per frame);
// - a discover-batch flood over HTTP (batches of 100 — refused by cost — and of 1) from several clients;
// while /health is polled. Reports the server's RSS growth (target < 64 MiB) and /health p99 (target
// < 100 ms), against /health on the same server idle (the raw limit, measured first in the same run).
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { WebSocket } from 'ws';
import { argValue, median, percentile, round, table } from './support/report';
import { loadAverage } from './support/abab';
import { processCpuMs } from './support/server-child';

const ROOT = path.resolve(__dirname, '..');

async function startChild(dataDir: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ['-r', './tools/ts-register.js', 'src/cli/main.ts', '--data-dir', dataDir, 'serve', '--port', '0'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
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

const rssMiB = (pid: number): number => {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
};

const discover = (id: number) => ({ jsonrpc: '2.0', id, method: 'rpc.discover' });
const post = (url: string, body: unknown) => fetch(`${url}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then((r) => r.arrayBuffer());

async function healthLatencies(url: string, untilMs: number): Promise<number[]> {
  const out: number[] = [];
  while (Date.now() < untilMs) {
    const t = performance.now();
    await fetch(`${url}/health`).then((r) => r.arrayBuffer());
    out.push(performance.now() - t);
    await new Promise((r) => setTimeout(r, 25));
  }
  return out;
}

export async function main(args: string[]): Promise<void> {
  const sockets = Number(argValue(args, '--sockets') ?? 50);
  const frames = Number(argValue(args, '--frames') ?? 40);
  const flooders = Number(argValue(args, '--flooders') ?? 4);
  const seconds = Number(argValue(args, '--seconds') ?? 10);
  const loadAtStart = loadAverage();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-bench-security-'));
  const { child, url } = await startChild(dataDir);
  const opened: WebSocket[] = [];
  try {
    // Warm up (first requests compile and cache), then the idle baseline.
    for (let i = 0; i < 5; i++) await post(url, [discover(1), discover(2)]);
    let cpu0 = processCpuMs(child.pid!);
    const idle = await healthLatencies(url, Date.now() + 3000);
    // The server's CPU (whole process, every thread, 10 ms ticks) while idle-polled, then under attack.
    const idleCpuMs = processCpuMs(child.pid!) - cpu0;
    const rssBefore = rssMiB(child.pid!);

    // The attack: unread WebSockets...
    const frame = JSON.stringify([discover(1)]);
    for (let i = 0; i < sockets; i++) {
      const ws = new WebSocket(`${url.replace('http', 'ws')}/rpc`);
      await new Promise((r, j) => ws.once('open', r).once('error', j));
      (ws as unknown as { _socket: { pause(): void } })._socket.pause();
      ws.on('error', () => undefined);
      for (let f = 0; f < frames; f++) ws.send(frame);
      opened.push(ws);
    }
    // ...and a discover-batch flood over HTTP, while /health is polled and RSS sampled.
    const until = Date.now() + seconds * 1000;
    let flooded = 0;
    const flood = async () => {
      while (Date.now() < until) {
        await post(url, Array.from({ length: 100 }, (_, i) => discover(i)));
        await post(url, [discover(1)]);
        flooded += 2;
      }
    };
    let rssPeak = rssBefore;
    const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, rssMiB(child.pid!))), 100);
    cpu0 = processCpuMs(child.pid!);
    const [loaded] = await Promise.all([healthLatencies(url, until), ...Array.from({ length: flooders }, flood)]);
    clearInterval(sampler);
    const attackCpuMs = processCpuMs(child.pid!) - cpu0;
    rssPeak = Math.max(rssPeak, rssMiB(child.pid!));
    const closedByServer = opened.filter((ws) => ws.readyState !== WebSocket.OPEN).length;

    const growth = rssPeak - rssBefore;
    const p99 = percentile(loaded, 99);
    console.log(
      table([
        { measure: '/health idle (raw limit, same run)', p50_ms: round(median(idle), 2), p99_ms: round(percentile(idle, 99), 2), samples: idle.length },
        { measure: `/health under attack (${sockets} unread WS × ${frames} frames, ${flooders} flooders)`, p50_ms: round(median(loaded), 2), p99_ms: round(p99, 2), samples: loaded.length },
      ]),
    );
    console.log(`server RSS: ${round(rssBefore, 1)} MiB before, ${round(rssPeak, 1)} MiB peak (+${round(growth, 1)} MiB; target < 64); ${flooded} flood batches; ${closedByServer}/${sockets} unread sockets closed by the server`);
    console.log(
      JSON.stringify({
        bench: 'security',
        sockets,
        framesPerSocket: frames,
        flooders,
        seconds,
        floodBatches: flooded,
        rssBeforeMiB: round(rssBefore, 1),
        rssPeakMiB: round(rssPeak, 1),
        rssGrowthMiB: round(growth, 1),
        healthIdleP99Ms: round(percentile(idle, 99), 2),
        healthP50Ms: round(median(loaded), 2),
        healthP99Ms: round(p99, 2),
        healthP99VsIdle: round(p99 / Math.max(percentile(idle, 99), 0.01), 2),
        healthMs: { idle: { min: round(Math.min(...idle), 2), median: round(median(idle), 2), max: round(Math.max(...idle), 2) }, attack: { min: round(Math.min(...loaded), 2), median: round(median(loaded), 2), max: round(Math.max(...loaded), 2) } },
        serverCpuMs: { idle3s: idleCpuMs, attack: attackCpuMs, perFloodBatch: round(attackCpuMs / Math.max(flooded, 1), 3) },
        load: { start: loadAtStart, end: loadAverage() },
        unreadSocketsClosed: closedByServer,
        rssTargetMet: growth < 64,
        healthTargetMet: p99 < 100,
      }),
    );
  } finally {
    for (const ws of opened) ws.terminate();
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
