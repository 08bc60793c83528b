// npm run bench:rpc [-- --duration 20 --rounds 5 --connections 50 --subscribers 1000 --watch-seconds 10 --only http --server-cpu-prof <dir> --commands-only]
// (a) addReviewNode over HTTP JSON-RPC (autocannon, loopback, 50 connections) against the transport's no-op
//     ceiling, alternating in --rounds rounds of duration/rounds seconds (ABAB), with the server's CPU per
//     request; then the same command run in-process through the kernel (the store + command path, no HTTP);
// (b) 1,000 WebSocket subscribers on one PR's verdict while addReviewNode commands flow: delay from the
//     acknowledged append to delivery, and lost / out-of-order updates.
// The server runs in a child process (`review-ledger serve`), so client work does not steal its event loop.
import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { WebSocket } from 'ws';
import { newUuidV7 } from '../src/events/ids';
import { loadConfig } from '../src/config';
import { Ledger, LOCAL_OPERATOR } from '../src/ledger';
import { argValue, median, percentile, round, table } from './support/report';
import { benchNode, processCpuMs, rpc, startServeChild } from './support/server-child';
import { loadAverage } from './support/abab';

// autocannon ships no type declarations; this is the slice of its result the bench reads.
const autocannon = require('autocannon') as (opts: object) => Promise<{ requests: { average: number; total: number }; latency: { p50: number; p99: number }; non2xx: number; errors: number }>;

const ROOT = path.resolve(__dirname, '..');
const REPO = 'bench-repo';
const SHA_BASE = 'c'.repeat(40);
const SHA_HEAD = 'a'.repeat(40);
const PRS_FOR_FILING = 100;
const WATCHED_PR = 100_000;

const node = benchNode;

function startChild(dataDir: string, cpuProfDir?: string): Promise<{ child: ChildProcess; url: string }> {
  // --server-cpu-prof: the server child writes a V8 CPU profile on exit (open it in Chrome DevTools).
  return startServeChild(dataDir, { nodeArgs: cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', cpuProfDir] : [] });
}


/** The raw limit: the same command through the kernel in-process, same concurrency, no HTTP. */
async function inProcess(seconds: number, concurrency: number): Promise<{ perSecond: number; p50: number; p99: number }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-bench-rpc-raw-'));
  const ledger = new Ledger(loadConfig({ dataDir }, {}));
  try {
    await ledger.createWorkspace({ ...LOCAL_OPERATOR, idempotencyKey: newUuidV7() }, { workspaceId: 'raw' });
    for (let pr = 1; pr <= PRS_FOR_FILING; pr++) await ledger.run('requestReview', 'raw', { ...LOCAL_OPERATOR, idempotencyKey: newUuidV7() }, { repoId: REPO, prNumber: pr, baseSha: SHA_BASE, headSha: SHA_HEAD });
    const agent = { principal: 'agent:bench' as const, role: 'member' as const };
    const latencies: number[] = [];
    let n = 0;
    const end = performance.now() + seconds * 1000;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (performance.now() < end) {
          const i = n++;
          const t = performance.now();
          await ledger.run('addReviewNode', 'raw', { ...agent, idempotencyKey: newUuidV7() }, { repoId: REPO, prNumber: 1 + (i % PRS_FOR_FILING), node: node(`raw ${i}`) });
          latencies.push(performance.now() - t);
        }
      }),
    );
    return { perSecond: latencies.length / seconds, p50: median(latencies), p99: percentile(latencies, 99) };
  } finally {
    await ledger.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The JSON-RPC transport's own ceiling on this machine, same run: a method that touches no store. */
async function transportCeiling(url: string, token: string, seconds: number, connections: number) {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'unwatch', params: { subscription: 'none' } });
  const result = await autocannon({ url: `${url}/rpc`, connections, duration: seconds, method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body });
  return { perSecond: result.requests.average, total: result.requests.total, p50: result.latency.p50, p99: result.latency.p99 };
}

async function httpLoad(url: string, token: string, seconds: number, connections: number) {
  let i = 0;
  let rpcErrors = 0;
  const result = await autocannon({
    url: `${url}/rpc`,
    connections,
    duration: seconds,
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    requests: [
      {
        setupRequest: (req: any) => {
          const n = i++;
          req.body = JSON.stringify({ jsonrpc: '2.0', id: n, method: 'addReviewNode', params: { workspace_id: 'default', idempotencyKey: newUuidV7(), repoId: REPO, prNumber: 1 + (n % PRS_FOR_FILING), node: node(`http ${n}`) } });
          return req;
        },
        onResponse: (_status: number, body: string) => {
          if (body.includes('"error"')) rpcErrors++;
        },
      },
    ],
  });
  return { perSecond: result.requests.average, total: result.requests.total, p50: result.latency.p50, p99: result.latency.p99, non2xx: result.non2xx, errors: result.errors + rpcErrors };
}

interface Subscriber {
  ws: WebSocket;
  positions: number[];
  arrivals: Map<number, number>;
  coalesced: number;
}

async function openSubscribers(url: string, token: string, n: number): Promise<Subscriber[]> {
  const subs: Subscriber[] = [];
  const wsUrl = `${url.replace(/^http/, 'ws')}/rpc`;
  const POSITION = /"position":(\d+)/;
  for (let start = 0; start < n; start += 100) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(100, n - start) }, async () => {
        const ws = new WebSocket(wsUrl, { headers: { authorization: `Bearer ${token}` } });
        await new Promise<void>((resolve, reject) => {
          ws.once('open', () => resolve());
          ws.once('error', reject);
        });
        const sub: Subscriber = { ws, positions: [], arrivals: new Map(), coalesced: 0 };
        const subscribed = new Promise<void>((resolve) => {
          ws.on('message', (data) => {
            const text = data.toString();
            // Only the frame head is read: 1,000 clients parsing every verdict would measure the client.
            if (text.startsWith('{"jsonrpc":"2.0","method":"watch.update"')) {
              const p = Number(POSITION.exec(text)![1]);
              sub.positions.push(p);
              sub.arrivals.set(p, performance.now());
              if (text.endsWith(',"coalesced":true}}')) sub.coalesced++;
            } else if (text.includes('"result"')) resolve();
          });
        });
        ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'watchVerdict', params: { workspace_id: 'default', repoId: REPO, prNumber: WATCHED_PR } }));
        await subscribed;
        return sub;
      }),
    );
    subs.push(...batch);
  }
  return subs;
}

async function watchLoad(url: string, token: string, subscribers: number, seconds: number) {
  await rpc(url, token, 'requestReview', { workspace_id: 'default', idempotencyKey: newUuidV7(), repoId: REPO, prNumber: WATCHED_PR, baseSha: SHA_BASE, headSha: SHA_HEAD });
  const t0 = performance.now();
  const subs = await openSubscribers(url, token, subscribers);
  const subscribeSeconds = (performance.now() - t0) / 1000;
  const acks: Array<{ position: number; at: number; sentAt: number }> = [];
  const end = performance.now() + seconds * 1000;
  let n = 0;
  // Two writers on the one watched review: commands keep flowing without turning into a conflict storm.
  await Promise.all(
    [0, 1].map(async () => {
      while (performance.now() < end) {
        const sentAt = performance.now();
        const r = await rpc(url, token, 'addReviewNode', { workspace_id: 'default', idempotencyKey: newUuidV7(), repoId: REPO, prNumber: WATCHED_PR, node: node(`watched ${n++}`) });
        acks.push({ position: r.lastPosition, at: performance.now(), sentAt });
      }
    }),
  );
  const last = Math.max(...acks.map((a) => a.position));
  const deadline = performance.now() + 30_000;
  while (performance.now() < deadline && subs.some((s) => (s.positions.at(-1) ?? 0) < last)) await new Promise((r) => setTimeout(r, 50));
  // Two clocks: from the client seeing the acknowledgement (deliveries usually arrive BEFORE the HTTP
  // answer is read, counted as 0), and from sending the command (an upper bound of append→delivery,
  // since it includes validating, deciding and appending the command itself).
  const delays: number[] = [];
  const fromSend: number[] = [];
  let lost = 0;
  let outOfOrder = 0;
  let coalesced = 0;
  for (const s of subs) {
    coalesced += s.coalesced;
    for (let i = 1; i < s.positions.length; i++) if (s.positions[i] <= s.positions[i - 1]) outOfOrder++;
    for (const a of acks) {
      const arrived = s.arrivals.get(a.position);
      if (arrived === undefined) {
        // Skipped positions are only acceptable when the subscriber was told it got coalesced state.
        if (s.coalesced === 0) lost++;
        continue;
      }
      delays.push(Math.max(0, arrived - a.at));
      fromSend.push(arrived - a.sentAt);
    }
  }
  for (const s of subs) s.ws.terminate();
  return { subscribers: subs.length, subscribeSeconds, commands: acks.length, commandsPerSecond: acks.length / seconds, deliveries: delays.length, p50: median(delays), p99: percentile(delays, 99), max: delays.reduce((m, d) => Math.max(m, d), 0), sendP50: median(fromSend), sendP99: percentile(fromSend, 99), deliveredBeforeAck: delays.filter((d) => d === 0).length, lost, outOfOrder, coalesced };
}

export async function main(args: string[]): Promise<void> {
  const seconds = Number(argValue(args, '--duration') ?? 20);
  const rounds = Math.max(1, Number(argValue(args, '--rounds') ?? 5));
  const connections = Number(argValue(args, '--connections') ?? 50);
  const subscribers = Number(argValue(args, '--subscribers') ?? 1000);
  const watchSeconds = Number(argValue(args, '--watch-seconds') ?? 10);
  // --only http: part (a) over HTTP only (no in-process run, no subscribers), e.g. while profiling.
  const httpOnly = argValue(args, '--only') === 'http';
  const cpuProfDir = argValue(args, '--server-cpu-prof');
  // --commands-only: no ceiling rounds (with --server-cpu-prof, a profile of addReviewNode alone).
  const commandsOnly = args.includes('--commands-only');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-bench-rpc-'));
  const { child, url } = await startChild(dataDir, cpuProfDir ? path.resolve(cpuProfDir) : undefined);
  try {
    const owner = fs.readFileSync(path.join(dataDir, 'owner-token'), 'utf8').trim();
    // Principals are provisioned, never asserted: the agent must be a member before it gets a token.
    await rpc(url, owner, 'addMember', { workspace_id: 'default', idempotencyKey: newUuidV7(), principal: 'agent:bench', role: 'member' });
    const agent = (await rpc(url, owner, 'issueToken', { workspace_id: 'default', idempotencyKey: newUuidV7(), principal: 'agent:bench', role: 'member' })).result.token as string;
    for (let pr = 1; pr <= PRS_FOR_FILING; pr++) await rpc(url, agent, 'requestReview', { workspace_id: 'default', idempotencyKey: newUuidV7(), repoId: REPO, prNumber: pr, baseSha: SHA_BASE, headSha: SHA_HEAD });

    // (a) ABAB: the no-op ceiling and addReviewNode alternate in short rounds on the same server, so a
    // neighbour's burst lands on one pair instead of one side. Each round is timed by autocannon (requests/s,
    // latency) and by the server process's CPU (/proc/<pid>/stat: every thread, exited ones too).
    const roundSeconds = Math.max(2, Math.round(seconds / rounds));
    const load0 = loadAverage();
    const ceilings: Array<{ perSecond: number; p50: number; p99: number; cpuUs: number }> = [];
    const commands: Array<{ perSecond: number; p50: number; p99: number; cpuUs: number; errors: number; total: number }> = [];
    for (let r = 0; r < rounds; r++) {
      let cpu0 = processCpuMs(child.pid!);
      if (!commandsOnly) {
        const c = await transportCeiling(url, agent, roundSeconds, connections);
        ceilings.push({ ...c, cpuUs: ((processCpuMs(child.pid!) - cpu0) * 1000) / Math.max(1, c.total) });
      }
      cpu0 = processCpuMs(child.pid!);
      const h = await httpLoad(url, agent, roundSeconds, connections);
      commands.push({ ...h, cpuUs: ((processCpuMs(child.pid!) - cpu0) * 1000) / Math.max(1, h.total), errors: h.errors + h.non2xx });
    }
    const load1 = loadAverage();
    if (commandsOnly) {
      const cpuUs = median(commands.map((x) => x.cpuUs));
      console.log(`addReviewNode over HTTP alone, ${rounds} × ${roundSeconds}s: ${round(median(commands.map((x) => x.perSecond)), 1)}/s, ${round(cpuUs, 1)} µs server CPU per command; load ${load0.join(' ')} → ${load1.join(' ')}`);
      console.log(JSON.stringify({ bench: 'rpc', only: 'commands', commandsPerSecond: Math.round(median(commands.map((x) => x.perSecond))), serverCpuUsPerCommand: round(cpuUs, 1), load: { start: load0, end: load1 } }));
      return;
    }
    const spread = (xs: number[]) => ({ min: round(Math.min(...xs), 1), median: round(median(xs), 1), max: round(Math.max(...xs), 1) });
    const http = {
      perSecond: median(commands.map((x) => x.perSecond)),
      p50: median(commands.map((x) => x.p50)),
      p99: median(commands.map((x) => x.p99)),
      errors: commands.reduce((n, x) => n + x.errors, 0),
      total: commands.reduce((n, x) => n + x.total, 0),
    };
    const ceiling = { perSecond: median(ceilings.map((x) => x.perSecond)), p50: median(ceilings.map((x) => x.p50)), p99: median(ceilings.map((x) => x.p99)) };
    const paired = round(median(commands.map((x, i) => x.perSecond / ceilings[i].perSecond)), 3);
    const rates = { commands: spread(commands.map((x) => x.perSecond)), ceiling: spread(ceilings.map((x) => x.perSecond)) };
    const cpu = { commandUs: spread(commands.map((x) => x.cpuUs)), ceilingUs: spread(ceilings.map((x) => x.cpuUs)) };
    const p99s = spread(commands.map((x) => x.p99));
    console.log(`\n(a) ${rounds} rounds of ${roundSeconds}s, no-op ceiling and addReviewNode alternating, ${connections} connections; load ${load0.join(' ')} → ${load1.join(' ')}`);
    console.log(
      table([
        { side: 'addReviewNode over HTTP', 'req/s min/med/max': `${rates.commands.min} / ${rates.commands.median} / ${rates.commands.max}`, 'server CPU µs/req': `${cpu.commandUs.min} / ${cpu.commandUs.median} / ${cpu.commandUs.max}`, 'p99 ms (median)': http.p99, errors: http.errors },
        { side: 'transport ceiling (no-op method)', 'req/s min/med/max': `${rates.ceiling.min} / ${rates.ceiling.median} / ${rates.ceiling.max}`, 'server CPU µs/req': `${cpu.ceilingUs.min} / ${cpu.ceilingUs.median} / ${cpu.ceilingUs.max}`, 'p99 ms (median)': ceiling.p99, errors: 0 },
      ]),
    );
    console.log(`commands / ceiling, median of the ${rounds} paired rounds: ${paired} (target ≥ 0.25); p99 ${http.p99} ms (target ≤ 50)`);
    const httpJson = { connections, rounds, roundSeconds, commandsPerSecond: Math.round(http.perSecond), p50Ms: http.p50, p99Ms: http.p99, p99MsSpread: p99s, errors: http.errors, rates, serverCpuUsPerRequest: cpu, load: { start: load0, end: load1 } };
    if (httpOnly) {
      console.log(JSON.stringify({ bench: 'rpc', only: 'http', http: httpJson, transportCeiling: { requestsPerSecond: Math.round(ceiling.perSecond), p50Ms: ceiling.p50, p99Ms: ceiling.p99 }, httpVsTransportCeiling: paired, targets: { httpVsTransportCeiling: 0.25, p99Ms: 50 } }));
      return;
    }
    const raw = await inProcess(Math.min(seconds, 10), connections);
    console.log(`kernel in-process (the same command, no HTTP), ${connections} concurrent, ${Math.min(seconds, 10)}s: ${Math.round(raw.perSecond)}/s, p50 ${round(raw.p50, 2)} ms, p99 ${round(raw.p99, 2)} ms`);

    const watch = await watchLoad(url, agent, subscribers, watchSeconds);
    console.log(`\n(b) ${watch.subscribers} WebSocket subscribers on one verdict, ${watch.commands} commands in ${watchSeconds}s (subscribed in ${round(watch.subscribeSeconds, 2)}s)`);
    console.log(
      table([
        { clock: 'ack → delivery', deliveries: watch.deliveries, 'p50 ms': round(watch.p50, 2), 'p99 ms': round(watch.p99, 2), 'delivered before ack': watch.deliveredBeforeAck, lost: watch.lost, 'out of order': watch.outOfOrder, coalesced: watch.coalesced },
        { clock: 'send → delivery (upper bound)', deliveries: watch.deliveries, 'p50 ms': round(watch.sendP50, 2), 'p99 ms': round(watch.sendP99, 2), 'delivered before ack': '', lost: '', 'out of order': '', coalesced: '' },
      ]),
    );

    console.log(
      JSON.stringify({
        bench: 'rpc',
        http: httpJson,
        inProcess: { commandsPerSecond: Math.round(raw.perSecond), p50Ms: round(raw.p50, 2), p99Ms: round(raw.p99, 2) },
        transportCeiling: { requestsPerSecond: Math.round(ceiling.perSecond), p50Ms: ceiling.p50, p99Ms: ceiling.p99 },
        httpVsInProcess: round(http.perSecond / raw.perSecond, 3),
        httpVsTransportCeiling: paired,
        watch: { subscribers: watch.subscribers, commands: watch.commands, deliveries: watch.deliveries, ackToDeliveryP50Ms: round(watch.p50, 2), ackToDeliveryP99Ms: round(watch.p99, 2), sendToDeliveryP50Ms: round(watch.sendP50, 2), sendToDeliveryP99Ms: round(watch.sendP99, 2), deliveredBeforeAck: watch.deliveredBeforeAck, lost: watch.lost, outOfOrder: watch.outOfOrder, coalesced: watch.coalesced },
        targets: { commandsPerSecond: 2000, httpVsTransportCeiling: 0.25, p99Ms: 50, deliveryP99Ms: 100 },
      }),
    );
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
