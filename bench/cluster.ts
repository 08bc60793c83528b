// npm run bench:cluster [-- --seconds 8 --rounds 5 --connections 16 --only pg×1,pg×2 --database-url postgres://postgres@127.0.0.1:5432/postgres --server-cpu-prof <dir> --query-every <ms>]
// The multi-server layout of docs/stores.md under one client load, in one run, alternating:
//   pg×1     one server on PostgreSQL (its own data dir; the second one is stopped for these rounds)
//   pg×2     two servers on the same PostgreSQL database, separate data dirs, the documented shared
//            configuration (--audit-key-file, --server-key-file); the clients split across both
//   sqlite×1 one server on SQLite (NORMAL, as the PostgreSQL servers run synchronous_commit=off)
// Load: addReviewNode over HTTP JSON-RPC (autocannon, `connections` concurrent), each configuration on its own
// 100 PRs of one workspace.
// --query-every MS: beside the load, each server is also asked an audit query (review_studio.audit, 20 rows)
// every MS ms, as a UI watching the ledger would: the read models are live on every server that answers.
// Per configuration: commands/s, p99 latency, CPU per command of the servers and of PostgreSQL (every `postgres`
// process's utime+stime from /proc, counted over the round) and the servers' main threads preempted per command
// (/proc/<pid>/status), and the bench database's backends running a statement and waiting for a lock
// (pg_stat_activity, sampled), medians over the rounds.
import type { ChildProcess } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from 'pg';
import { newUuidV7 } from '../src/events/ids';
import { argValue, median, percentile, round, table } from './support/report';
import { loadAverage } from './support/abab';
import { benchNode, foldCacheOf, involuntarySwitches, mainThreadCpuMs, postgresDelta, postgresTicks, processCpuMs, rpc, startServeChild } from './support/server-child';

const autocannon = require('autocannon') as (opts: object) => Promise<{ requests: { total: number }; latency: { p99: number }; non2xx: number; errors: number }>;

const ROOT = path.resolve(__dirname, '..');
const REPO = 'bench-repo';
const PRS = 100;
// Each configuration loads its own 100 PRs (pg×1 and pg×2 share a database; SQLite has its own), so
// every configuration's PR states grow by its own commands only. With one set, pg×1's PRs also grew by
// pg×2's commands — twice the SQLite server's — and pg×1 alone passed the fold cache's budget in the
// last round (misses per command 0.076 against SQLite's 0.004, session 53): a bigger log, not a slower store.
const PG1_PRS = 1;
const PG2_PRS = 1 + PRS;
const node = benchNode;

interface Server {
  child: ChildProcess;
  url: string;
  dataDir: string;
}

async function startServer(args: string[], dataDir: string, cpuProfDir?: string): Promise<Server> {
  return { ...(await startServeChild(dataDir, { cliArgs: args, nodeArgs: cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', cpuProfDir] : [] })), dataDir };
}

async function stop(s: Server): Promise<void> {
  if (s.child.exitCode !== null) return;
  s.child.kill('SIGTERM');
  await new Promise((r) => s.child.once('exit', r));
}



/** Asks `url` an audit query every `everyMs` until `until` resolves; the answers' errors are counted, their latencies kept. */
async function queryLoop(url: string, token: string, everyMs: number, until: Promise<unknown>): Promise<{ queries: number; errors: number; ms: number[] }> {
  let done = false;
  void until.finally(() => (done = true));
  let queries = 0;
  let errors = 0;
  const ms: number[] = [];
  while (!done) {
    const t = performance.now();
    const r = await rpc(url, token, 'review_studio.audit', { workspace_id: 'default', limit: 20 }).catch((e: unknown) => ({ error: e }));
    ms.push(performance.now() - t);
    queries++;
    if ((r as { error?: unknown }).error) errors++;
    await new Promise((res) => setTimeout(res, everyMs));
  }
  return { queries, errors, ms };
}

async function load(urls: string[], token: string, seconds: number, connections: number, firstPr: number, queryEveryMs = 0): Promise<{ total: number; p99: number; errors: number }> {
  let i = 0;
  let rpcErrors = 0;
  const per = Math.max(1, Math.floor(connections / urls.length));
  const loads = Promise.all(
    urls.map((url) =>
      autocannon({
        url: `${url}/rpc`,
        connections: per,
        duration: seconds,
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        requests: [
          {
            setupRequest: (req: any) => {
              const n = i++;
              req.body = JSON.stringify({ jsonrpc: '2.0', id: n, method: 'addReviewNode', params: { workspace_id: 'default', idempotencyKey: newUuidV7(), repoId: REPO, prNumber: firstPr + (n % PRS), node: node(`cluster ${n}`) } });
              return req;
            },
            onResponse: (_status: number, body: string) => {
              if (body.includes('"error"')) rpcErrors++;
            },
          },
        ],
      }),
    ),
  );
  const queries = queryEveryMs > 0 ? urls.map((url) => queryLoop(url, token, queryEveryMs, loads)) : [];
  const results = await loads;
  const queryMs: number[] = [];
  for (const q of await Promise.all(queries)) {
    rpcErrors += q.errors;
    queryMs.push(...q.ms);
  }
  if (queryMs.length) process.stderr.write(`audit queries: ${queryMs.length}, p50 ${round(percentile(queryMs, 50), 1)} ms, p99 ${round(percentile(queryMs, 99), 1)} ms\n`);
  return { total: results.reduce((a, r) => a + r.requests.total, 0), p99: Math.max(...results.map((r) => r.latency.p99)), errors: rpcErrors + results.reduce((a, r) => a + r.errors + r.non2xx, 0) };
}

interface Figures {
  perSecond: number;
  p99: number;
  serverCpuMs: number;
  /** Of serverCpuMs: the servers' main threads, user and system time, per command (the rest: their other threads). */
  serverMainUserMs: number;
  serverMainSysMs: number;
  dbCpuMs: number;
  /** This process's CPU per command: the load generator (autocannon), which shares the two cores. */
  clientCpuMs: number;
  errors: number;
  /** Loads that found no folded state (the fold cache's misses) per command, all servers of the round. */
  foldMisses: number;
  /** Times a server's main thread was preempted, per command, all servers of the round (involuntarySwitches). */
  preemptions: number;
  /** Mean backends of the bench database running a statement, and of those waiting for a lock (sampleBackends). */
  dbActive: number;
  dbLockWaits: number;
  /** The bench database's committed transactions (every autocommit statement is one: the round trips) and rows read, per command. */
  dbXacts: number;
  dbRowsRead: number;
}

/** pg_stat_database's counters for the bench database (flushed by each backend at its transactions' end). */
async function databaseCounters(db: Client, dbName: string): Promise<{ xacts: number; rows: number }> {
  const r = await db.query(`SELECT xact_commit + xact_rollback AS xacts, tup_returned + tup_fetched AS rows FROM pg_stat_database WHERE datname = $1`, [dbName]);
  return { xacts: Number(r.rows[0].xacts), rows: Number(r.rows[0].rows) };
}

/** Resolves once the process has used under 5 % of a core over a whole second (at most 120 s). */
async function settled(pid: number): Promise<void> {
  const until = Date.now() + 120_000;
  let last = processCpuMs(pid);
  while (Date.now() < until) {
    await new Promise((r) => setTimeout(r, 1000));
    const now = processCpuMs(pid);
    if (now - last < 50) return;
    last = now;
  }
}

/**
 * What the bench database's backends are doing over a round, sampled every SAMPLE_MS from pg_stat_activity
 * (no extension needed): the mean number running a statement, and of those the mean number waiting for a
 * lock — on this workload the workspace's head row, which every group commit locks until it commits, so
 * two servers' commits queue behind each other. Each sample is a pg_stat_activity query of this process's
 * own backend, ~1 ms of PostgreSQL's CPU: every 25 ms that was ~10 % of pg×1's PostgreSQL CPU, counted
 * as the servers' and taken from the cores they share (SQLite's rounds have no sampler). Every 100 ms
 * now, and that backend's CPU is left out of the PostgreSQL column (round1).
 */
const SAMPLE_MS = 100;
function sampleBackends(db: Client, dbName: string): () => Promise<{ active: number; lockWaits: number }> {
  let stop = false;
  let samples = 0;
  let active = 0;
  let waits = 0;
  const loop = (async () => {
    while (!stop) {
      const r = await db.query(`SELECT count(*) FILTER (WHERE state = 'active')::int AS active, count(*) FILTER (WHERE state = 'active' AND wait_event_type = 'Lock')::int AS waits FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, [dbName]);
      samples++;
      active += r.rows[0].active;
      waits += r.rows[0].waits;
      await new Promise((res) => setTimeout(res, SAMPLE_MS));
    }
  })();
  return async () => {
    stop = true;
    await loop;
    return { active: active / Math.max(1, samples), lockWaits: waits / Math.max(1, samples) };
  };
}

/** --query-every: ms between one server's audit queries during a round (0: none). */
let queryEveryMs = 0;

async function round1(servers: Server[], token: string, seconds: number, connections: number, db: { client: Client; name: string; pid: number } | null, firstPr: number): Promise<Figures> {
  const before = servers.map((s) => processCpuMs(s.child.pid!));
  const mainBefore = servers.map((s) => mainThreadCpuMs(s.child.pid!));
  const switchesBefore = servers.map((s) => involuntarySwitches(s.child.pid!));
  const missesNow = async () => (await Promise.all(servers.map((s) => foldCacheOf(s.url)))).reduce((a, f) => a + (f?.misses ?? 0), 0);
  const missesBefore = await missesNow();
  const pgBefore = db ? postgresTicks() : new Map<number, number>();
  const countersBefore = db ? await databaseCounters(db.client, db.name) : null;
  const clientBefore = process.cpuUsage();
  const backends = db ? sampleBackends(db.client, db.name) : null;
  const r = await load(
    servers.map((s) => s.url),
    token,
    seconds,
    connections,
    firstPr,
    queryEveryMs,
  );
  const sampled = backends ? await backends() : { active: 0, lockWaits: 0 };
  const serverMs = servers.reduce((a, s, k) => a + processCpuMs(s.child.pid!) - before[k], 0);
  const switches = servers.reduce((a, s, k) => a + involuntarySwitches(s.child.pid!) - switchesBefore[k], 0);
  const mainAfter = servers.map((s) => mainThreadCpuMs(s.child.pid!));
  const mainUser = mainAfter.reduce((a, m, k) => a + m.user - mainBefore[k].user, 0);
  const mainSys = mainAfter.reduce((a, m, k) => a + m.system - mainBefore[k].system, 0);
  const dbMs = db ? postgresDelta(pgBefore, new Set([db.pid])) : 0;
  // A backend flushes its statistics at most once a second while busy (PostgreSQL 15+): wait for them.
  if (db) await new Promise((res) => setTimeout(res, 1100));
  const countersAfter = db ? await databaseCounters(db.client, db.name) : null;
  const client = process.cpuUsage(clientBefore);
  const perCommand = (ms: number) => ms / Math.max(1, r.total);
  const foldMisses = perCommand((await missesNow()) - missesBefore);
  return { perSecond: r.total / seconds, p99: r.p99, serverCpuMs: perCommand(serverMs), serverMainUserMs: perCommand(mainUser), serverMainSysMs: perCommand(mainSys), dbCpuMs: perCommand(dbMs), clientCpuMs: perCommand((client.user + client.system) / 1000), errors: r.errors, foldMisses, preemptions: perCommand(switches), dbActive: sampled.active, dbLockWaits: sampled.lockWaits, dbXacts: countersAfter && countersBefore ? perCommand(countersAfter.xacts - countersBefore.xacts) : 0, dbRowsRead: countersAfter && countersBefore ? perCommand(countersAfter.rows - countersBefore.rows) : 0 };
}

export async function main(args: string[]): Promise<void> {
  const seconds = Number(argValue(args, '--seconds') ?? 8);
  const rounds = Number(argValue(args, '--rounds') ?? 5);
  const loadAtStart = loadAverage();
  const connections = Number(argValue(args, '--connections') ?? 16);
  queryEveryMs = Number(argValue(args, '--query-every') ?? 0);
  const adminUrl = argValue(args, '--database-url') ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const dbName = `rl_bench_cluster_${process.pid}`;
  const admin = new Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${dbName}`);
  const dbUrl = new URL(adminUrl);
  dbUrl.pathname = `/${dbName}`;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-bench-cluster-'));
  const servers: Server[] = [];
  try {
    // The documented shared configuration: one audit key and one token secret for every server.
    const auditKey = path.join(tmp, 'audit-ed25519.pem');
    fs.writeFileSync(auditKey, generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    const serverKey = path.join(tmp, 'server.key');
    fs.writeFileSync(serverKey, randomBytes(32), { mode: 0o600 });
    // The sampler's and counters' backend: its CPU is the bench's, not the servers' (postgresDelta leaves it out).
    const sampler = { client: admin, name: dbName, pid: Number((await admin.query('SELECT pg_backend_pid() AS pid')).rows[0].pid) };
    const pgArgs = ['--store', 'postgres', '--database-url', dbUrl.toString(), '--synchronous', 'NORMAL', '--audit-key-file', auditKey, '--server-key-file', serverKey];
    // --server-cpu-prof DIR: both PostgreSQL servers write a V8 CPU profile on exit (B serves only in pg×2).
    const cpuProf = argValue(args, '--server-cpu-prof');
    const pgA = await startServer(pgArgs, path.join(tmp, 'pg-a'), cpuProf && path.resolve(cpuProf, 'a'));
    let pgB: Server | null = await startServer(pgArgs, path.join(tmp, 'pg-b'), cpuProf && path.resolve(cpuProf, 'b'));
    const lite = await startServer(['--synchronous', 'NORMAL'], path.join(tmp, 'sqlite'));
    servers.push(pgA, pgB, lite);
    const pgToken = fs.readFileSync(path.join(pgA.dataDir, 'owner-token'), 'utf8').trim();
    const liteToken = fs.readFileSync(path.join(lite.dataDir, 'owner-token'), 'utf8').trim();
    for (const [url, token, first, count] of [
      [pgA.url, pgToken, PG1_PRS, 2 * PRS],
      [lite.url, liteToken, PG1_PRS, PRS],
    ] as const) {
      for (let pr = first; pr < first + count; pr++) await rpc(url, token, 'requestReview', { workspace_id: 'default', idempotencyKey: newUuidV7(), repoId: REPO, prNumber: pr, baseSha: 'c'.repeat(40), headSha: 'a'.repeat(40) });
    }
    // One warm-up round each (JIT, caches), not counted.
    await round1([pgA], pgToken, 2, connections, null, PG1_PRS);
    await round1([pgA, pgB], pgToken, 2, connections, null, PG2_PRS);
    await round1([lite], liteToken, 2, connections, null, PG1_PRS);
    // pg×1 is one server: B is stopped for its rounds and started again (warmed up) for pg×2's. A second
    // server that listens is announced to even while it serves nothing, and a server alone on the channel
    // announces nothing once it has heard nobody for ALONE_AFTER_MS (5 s): pg×1 waits that out.
    const stopB = async () => {
      if (!pgB) return;
      await stop(pgB);
      servers.splice(servers.indexOf(pgB), 1);
      pgB = null;
      await new Promise((r) => setTimeout(r, 5500));
    };
    const startB = async (): Promise<Server> => {
      if (pgB) return pgB;
      const b = await startServer(pgArgs, path.join(tmp, 'pg-b'), cpuProf && path.resolve(cpuProf, 'b'));
      servers.push((pgB = b));
      // A restarted B first catches up on everything A appended while it was stopped (its subscriptions
      // read the log from their checkpoints): measured, that catch-up was pg×2's, and it grew round by
      // round with the log (pg×2 / pg×1 per round 0.60 0.54 0.47 0.37 0.42). Steady state is measured.
      await settled(b.child.pid!);
      await round1([pgA, b], pgToken, 2, connections, null, PG2_PRS);
      return b;
    };
    const configs: Array<{ name: string; run: () => Promise<Figures> }> = [
      {
        name: 'pg×1',
        run: async () => {
          await stopB();
          return round1([pgA], pgToken, seconds, connections, sampler, PG1_PRS);
        },
      },
      { name: 'pg×2', run: async () => round1([pgA, await startB()], pgToken, seconds, connections, sampler, PG2_PRS) },
      { name: 'sqlite×1', run: () => round1([lite], liteToken, seconds, connections, null, PG1_PRS) },
    ];
    // --only pg×2[,pg×1]: the rounds of these configurations alone (a profile of one; no ratio without the other).
    const only = argValue(args, '--only')?.split(',');
    const unknown = only?.filter((name) => !configs.some((c) => c.name === name)) ?? [];
    if (unknown.length) throw new Error(`--only: unknown configuration ${unknown.join(', ')} (known: ${configs.map((c) => c.name).join(', ')})`);
    if (only) configs.splice(0, configs.length, ...configs.filter((c) => only.includes(c.name)));
    const figures = new Map<string, Figures[]>(configs.map((c) => [c.name, []]));
    for (let r = 0; r < rounds; r++) {
      // Alternated: each round starts with the next configuration.
      for (let k = 0; k < configs.length; k++) {
        const c = configs[(r + k) % configs.length];
        figures.get(c.name)!.push(await c.run());
      }
    }
    const spreadOf = (xs: number[], digits: number) => ({ min: round(Math.min(...xs), digits), median: round(median(xs), digits), max: round(Math.max(...xs), digits) });
    const med = (name: string, f: keyof Figures) => (figures.has(name) ? median(figures.get(name)!.map((x) => x[f])) : NaN);
    const rows = configs.map((c) => ({
      configuration: c.name,
      'commands/s': round(med(c.name, 'perSecond'), 0),
      'p99 ms': round(med(c.name, 'p99'), 0),
      'server CPU ms/cmd': round(med(c.name, 'serverCpuMs'), 2),
      // Where the servers' CPU goes: their event-loop threads (user / system) and everything else (GC and compiler helpers).
      'main user / sys / other threads': `${round(med(c.name, 'serverMainUserMs'), 2)} / ${round(med(c.name, 'serverMainSysMs'), 2)} / ${round(med(c.name, 'serverCpuMs') - med(c.name, 'serverMainUserMs') - med(c.name, 'serverMainSysMs'), 2)}`,
      'PostgreSQL CPU ms/cmd': round(med(c.name, 'dbCpuMs'), 2),
      'client CPU ms/cmd': round(med(c.name, 'clientCpuMs'), 2),
      // The servers' main threads taken off a core they could still use, per command: on one 2-core host the
      // PostgreSQL backend a commit wakes most likely preempts the server (session 54: ~1 per group commit; SQLite ~0.01).
      'server preemptions/cmd': round(med(c.name, 'preemptions'), 3),
      // Backends running a statement, and waiting for a lock (the workspace's head row, held by each group
      // commit until it commits): two servers' commits wait for each other's.
      'PG backends active / lock-waiting': c.name === 'sqlite×1' ? '' : `${round(med(c.name, 'dbActive'), 2)} / ${round(med(c.name, 'dbLockWaits'), 2)}`,
      'PG xacts / rows read per cmd': c.name === 'sqlite×1' ? '' : `${round(med(c.name, 'dbXacts'), 3)} / ${round(med(c.name, 'dbRowsRead'), 1)}`,
      // Per round, not a median: a round past the fold cache's budget shows here (a load that missed folds its PR again).
      'fold-cache misses/cmd per round': figures.get(c.name)!.map((x) => round(x.foldMisses, 3)).join(' '),
      errors: figures.get(c.name)!.reduce((a, x) => a + x.errors, 0),
    }));
    console.log(`bench:cluster — addReviewNode over HTTP, ${connections} connections, ${rounds} rounds of ${seconds}s per configuration, alternating${queryEveryMs ? `, an audit query every ${queryEveryMs} ms per server` : ''}; ${os.cpus().length} cores, Node ${process.version}`);
    console.log(table(rows));
    const pgOne = med('pg×1', 'perSecond');
    const pgTwo = med('pg×2', 'perSecond');
    const liteOne = med('sqlite×1', 'perSecond');
    const perRound = figures.has('pg×2') && figures.has('pg×1') ? figures.get('pg×2')!.map((x, k) => round(x.perSecond / figures.get('pg×1')![k].perSecond, 2)) : [];
    console.log(`pg×1 / sqlite×1 = ${round(pgOne / liteOne, 2)} (target ≥ 0.8); pg×2 / pg×1 = ${round(pgTwo / pgOne, 2)} (target ≥ 0.9; per round ${perRound.join(', ')})`);
    console.log(
      JSON.stringify({
        bench: 'cluster',
        seconds,
        rounds,
        connections,
        query_every_ms: queryEveryMs,
        pg1_per_s: round(pgOne, 0),
        pg2_per_s: round(pgTwo, 0),
        sqlite1_per_s: round(liteOne, 0),
        pg1_over_sqlite: round(pgOne / liteOne, 2),
        pg2_over_pg1: round(pgTwo / pgOne, 2),
        pg1_p99_ms: med('pg×1', 'p99'),
        pg2_p99_ms: med('pg×2', 'p99'),
        sqlite1_p99_ms: med('sqlite×1', 'p99'),
        pg1_server_cpu_ms: round(med('pg×1', 'serverCpuMs'), 2),
        pg2_server_cpu_ms: round(med('pg×2', 'serverCpuMs'), 2),
        sqlite1_server_cpu_ms: round(med('sqlite×1', 'serverCpuMs'), 2),
        pg1_db_cpu_ms: round(med('pg×1', 'dbCpuMs'), 2),
        pg2_db_cpu_ms: round(med('pg×2', 'dbCpuMs'), 2),
        client_cpu_ms: Object.fromEntries(configs.map((c) => [c.name, round(med(c.name, 'clientCpuMs'), 2)])),
        server_main_thread_ms: Object.fromEntries(configs.map((c) => [c.name, { user: round(med(c.name, 'serverMainUserMs'), 3), system: round(med(c.name, 'serverMainSysMs'), 3) }])),
        server_preemptions_per_cmd: Object.fromEntries(configs.map((c) => [c.name, round(med(c.name, 'preemptions'), 3)])),
        pg_backends_active: { 'pg×1': round(med('pg×1', 'dbActive'), 2), 'pg×2': round(med('pg×2', 'dbActive'), 2) },
        pg_backends_lock_waiting: { 'pg×1': round(med('pg×1', 'dbLockWaits'), 2), 'pg×2': round(med('pg×2', 'dbLockWaits'), 2) },
        pg_xacts_per_cmd: { 'pg×1': round(med('pg×1', 'dbXacts'), 3), 'pg×2': round(med('pg×2', 'dbXacts'), 3) },
        pg_rows_read_per_cmd: { 'pg×1': round(med('pg×1', 'dbRowsRead'), 1), 'pg×2': round(med('pg×2', 'dbRowsRead'), 1) },
        // min / median / max over the rounds, per configuration (issue #39 item 4), and the paired ratios.
        spreads: Object.fromEntries(configs.map((c) => [c.name, { perSecond: spreadOf(figures.get(c.name)!.map((x) => x.perSecond), 0), p99Ms: spreadOf(figures.get(c.name)!.map((x) => x.p99), 1), serverCpuMs: spreadOf(figures.get(c.name)!.map((x) => x.serverCpuMs), 3), dbCpuMs: spreadOf(figures.get(c.name)!.map((x) => x.dbCpuMs), 3) }])),
        pg1_over_sqlite_per_round: figures.has('pg×1') && figures.has('sqlite×1') ? figures.get('pg×1')!.map((x, k) => round(x.perSecond / figures.get('sqlite×1')![k].perSecond, 2)) : [],
        fold_cache_misses_per_cmd_per_round: Object.fromEntries(configs.map((c) => [c.name, figures.get(c.name)!.map((x) => round(x.foldMisses, 3))])),
        pg2_over_pg1_per_round: perRound,
        load: { start: loadAtStart, end: loadAverage() },
      }),
    );
  } finally {
    for (const s of servers) await stop(s);
    await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => undefined);
    await admin.end();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}
