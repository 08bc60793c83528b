// node bench/run.js server-ab <checkoutA> <checkoutB> [--rounds 8] [--seconds 5] [--connections 50] [--a-args "…"] [--b-args "…"] [--a-node "…"] [--b-node "…"]
// Two `review-ledger serve` children side by side — each from its own checkout (e.g. main and a branch in
// a git worktree), or one checkout with different CLI / node flags — under the same load: addReviewNode over
// HTTP (autocannon, 50 connections unless --connections) on 100 PRs, in rounds alternating A B / B A. Per round: commands/s, p99,
// server CPU per command (/proc/<pid>/stat: every thread, exited ones too), the main thread's preemptions per command and RSS; at the end the paired
// ratio B/A of CPU per command. Both servers grow the same history, so a slowdown with the log's size shows
// on both sides at the same round (how the fold cache's LRU cliff was found, bench/RESULTS.md 2026-12-05).
import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { newUuidV7 } from '../src/events/ids';
import { argValue, median } from './support/report';
import { benchNode, foldCacheOf, involuntarySwitches, processCpuMs, procStatus, rpc, startServeChild } from './support/server-child';
import { loadAverage } from './support/abab';

// autocannon ships no type declarations; this is the slice of its result the bench reads.
const autocannon = require('autocannon') as (opts: object) => Promise<{ requests: { average: number; total: number }; latency: { p99: number } }>;

interface Side {
  name: 'A' | 'B';
  child: ChildProcess;
  url: string;
  token: string;
  dataDir: string;
}

const words = (s: string | undefined): string[] => (s ?? '').split(' ').filter(Boolean);

async function start(name: 'A' | 'B', root: string, cliArgs: string[], nodeArgs: string[]): Promise<Side> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `rl-server-ab-${name}-`));
  const { child, url } = await startServeChild(dataDir, { root, cliArgs, nodeArgs });
  const owner = fs.readFileSync(path.join(dataDir, 'owner-token'), 'utf8').trim();
  await rpc(url, owner, 'addMember', { workspace_id: 'default', idempotencyKey: newUuidV7(), principal: 'agent:bench', role: 'member' });
  const token = (await rpc(url, owner, 'issueToken', { workspace_id: 'default', idempotencyKey: newUuidV7(), principal: 'agent:bench', role: 'member' })).result.token as string;
  for (let pr = 1; pr <= 100; pr++) await rpc(url, token, 'requestReview', { workspace_id: 'default', idempotencyKey: newUuidV7(), repoId: 'r', prNumber: pr, baseSha: 'c'.repeat(40), headSha: 'a'.repeat(40) });
  return { name, child, url, token, dataDir };
}

async function load(side: Side, seconds: number, connections: number): Promise<{ total: number; rate: number; p99: number; errors: number }> {
  let i = 0;
  let errors = 0;
  const r = await autocannon({
    url: `${side.url}/rpc`,
    connections,
    duration: seconds,
    method: 'POST',
    headers: { authorization: `Bearer ${side.token}`, 'content-type': 'application/json' },
    requests: [
      {
        setupRequest: (req: { body?: string }) => {
          const n = i++;
          req.body = JSON.stringify({ jsonrpc: '2.0', id: n, method: 'addReviewNode', params: { workspace_id: 'default', idempotencyKey: newUuidV7(), repoId: 'r', prNumber: 1 + (n % 100), node: benchNode(`n ${n}`) } });
          return req;
        },
        onResponse: (_status: number, body: string) => {
          if (body.includes('"error"')) errors++;
        },
      },
    ],
  });
  return { total: r.requests.total, rate: r.requests.average, p99: r.latency.p99, errors };
}

const rssMiB = (pid: number): number => procStatus(pid, 'VmRSS') / 1024;

export async function main(args: string[]): Promise<void> {
  const [rootA, rootB] = args.filter((a, i) => !a.startsWith('--') && !args[i - 1]?.startsWith('--'));
  if (!rootA || !rootB) throw new Error('usage: node bench/run.js server-ab <checkoutA> <checkoutB> [--rounds N] [--seconds S] [--connections C] [--a-args "…"] [--b-args "…"] [--a-node "…"] [--b-node "…"]');
  const rounds = Number(argValue(args, '--rounds') ?? 8);
  const seconds = Number(argValue(args, '--seconds') ?? 5);
  const connections = Number(argValue(args, '--connections') ?? 50);
  const A = await start('A', path.resolve(rootA), words(argValue(args, '--a-args')), words(argValue(args, '--a-node')));
  const B = await start('B', path.resolve(rootB), words(argValue(args, '--b-args')), words(argValue(args, '--b-node')));
  try {
    await load(A, 2, connections);
    await load(B, 2, connections);
    const cpu: Record<'A' | 'B', number[]> = { A: [], B: [] };
    const rate: Record<'A' | 'B', number[]> = { A: [], B: [] };
    const load0 = loadAverage();
    for (let r = 0; r < rounds; r++) {
      for (const side of r % 2 ? [B, A] : [A, B]) {
        const c0 = processCpuMs(side.child.pid!);
        const s0 = involuntarySwitches(side.child.pid!);
        const f0 = await foldCacheOf(side.url);
        const x = await load(side, seconds, connections);
        const f1 = await foldCacheOf(side.url);
        // Past the fold cache's budget its misses climb and each one folds a PR from its first event.
        const folds = f0 && f1 ? `, fold-cache misses ${f1.misses - f0.misses} (${(f1.bytes / 2 ** 20).toFixed(0)} of ${(f1.budgetBytes / 2 ** 20).toFixed(0)} MiB)` : '';
        const us = ((processCpuMs(side.child.pid!) - c0) * 1000) / Math.max(1, x.total);
        // The main thread taken off a core it could use (e.g. by a co-located PostgreSQL backend), per command.
        const preempted = (involuntarySwitches(side.child.pid!) - s0) / Math.max(1, x.total);
        cpu[side.name].push(us);
        rate[side.name].push(x.rate);
        console.log(`round ${r} ${side.name}: ${Math.round(x.rate)} commands/s, ${us.toFixed(1)} µs server CPU per command, p99 ${x.p99} ms, preempted ${preempted.toFixed(3)}/command, RSS ${rssMiB(side.child.pid!).toFixed(0)} MiB${folds}${x.errors ? `, ${x.errors} errors` : ''}`);
      }
    }
    const load1 = loadAverage();
    const paired = cpu.A.map((a, i) => cpu.B[i] / a);
    console.log(`load ${load0.join(' ')} → ${load1.join(' ')}`);
    console.log(`A ${rootA}: CPU per command median ${median(cpu.A).toFixed(1)} µs, ${Math.round(median(rate.A))}/s; B ${rootB}: ${median(cpu.B).toFixed(1)} µs, ${Math.round(median(rate.B))}/s; B/A paired median ${median(paired).toFixed(3)} [${paired.map((x) => x.toFixed(2)).join(' ')}]`);
    console.log(JSON.stringify({ bench: 'server-ab', rounds, seconds, cpuUsPerCommand: { A: cpu.A.map((x) => +x.toFixed(1)), B: cpu.B.map((x) => +x.toFixed(1)) }, commandsPerSecond: { A: rate.A.map(Math.round), B: rate.B.map(Math.round) }, pairedCpuBOverA: +median(paired).toFixed(3), load: { start: load0, end: load1 } }));
  } finally {
    for (const side of [A, B]) {
      side.child.kill('SIGTERM');
      await new Promise((r) => side.child.once('exit', r));
      fs.rmSync(side.dataDir, { recursive: true, force: true });
    }
  }
}
