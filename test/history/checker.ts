/**
 * A history checker in the spirit of Jepsen/Elle (issue 34): real `review-ledger serve` processes on one
 * store, concurrent clients sending random commands — fresh keys, retries of a key with the same payload,
 * one key raced with three different payloads — WebSocket subscribers that disconnect and resume with
 * `since`, and a kill -9 of a server mid-run. Every request and every update is recorded, then the
 * history is checked against the log:
 *  - every acknowledged command is stored exactly once, with its own payload, under its key;
 *  - every refused one is absent; a request whose outcome was lost with its server is retried with the
 *    same key and payload until it is answered (what a client does), then counts as answered;
 *  - no key holds events of two payloads;
 *  - every subscriber's updates come in position order, none twice, each equal to the answer `asOf` its
 *    position, and none missing from what another subscriber saw over the same range;
 *  - after the run the read models equal a fresh rebuild from position 0.
 * With `faults` (PostgreSQL), each server reaches the database through its own TCP proxy, and throughout the
 * run the database goes away as servers meet it: one server's or every server's connections reset and
 * refused for 3 s, held without a byte either way for 2 s, or every backend terminated; with SQLite, another
 * process takes the workspace file's write lock and holds it for 1–7 s (past the store's 5 s wait). A server
 * that exits on its own is a violation too.
 * Used by `npm run check:history` (tools/check-history.js) and, smaller, by test/history/history.test.ts.
 */
import { ChildProcess, execSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from 'pg';
import WebSocket from 'ws';
import { loadConfig } from '../../src/config';
import { newUuidV7 } from '../../src/events/ids';
import type { RecordedEvent } from '../../src/events/envelope';
import { collect } from '../../src/events/store/port';
import { Ledger } from '../../src/ledger';
import { readModelHost } from '../../src/readmodels/stored/registry';
import { nodePayload } from '../rpc/support';
import { TcpProxy } from '../support/tcp-proxy';
import { queryByName } from '../../src/readmodels/queries/queries';
import { canonicalJson } from '../../src/events/canonical-json';

const ROOT = path.resolve(__dirname, '../..');
const WS_ID = 'default';
const TARGET = { repoId: 'history-repo', prNumber: 1 };
/**
 * Commands spread over this many PRs (the subscribers watch the first): a review of tens of thousands of
 * findings is not what a resume is for, and replaying each of its verdicts one by one then takes minutes.
 */
const PRS = 4;
const SHA = { baseSha: 'c'.repeat(40), headSha: 'a'.repeat(40) };

export interface HistoryOptions {
  store: 'sqlite' | 'postgres';
  servers: number;
  clients: number;
  subscribers: number;
  durationMs: number;
  /** kill -9 one server halfway, then start it again on the same data dir. */
  kill: boolean;
  /**
   * Faults throughout the run (see the header): on PostgreSQL outages, partitions and terminated backends;
   * on SQLite another process holding the workspace file's write lock for 1–7 s (a CLI writer, a backup).
   */
  faults?: boolean;
  /**
   * PostgreSQL only: a shell command that restarts the database server itself (e.g. `pg_ctlcluster 15 main
   * restart -m immediate`: a crash and recovery), run at a third and at two thirds of the run. Never in
   * `npm test`: every other suite shares that server.
   */
  restartDatabase?: string;
  /** A deliberately injected bug the checker must catch (see inject-skip-digest.js). */
  inject?: 'skip-digest-check';
  databaseUrl?: string;
  seed?: number;
  log?: (line: string) => void;
}

export interface HistoryReport {
  check: 'history';
  store: string;
  servers: number;
  clients: number;
  durationMs: number;
  inject: string | null;
  killed: number;
  faults: string[];
  commands: { sent: number; acknowledged: number; refused: number; lostThenRetried: number; unresolved: number };
  keys: { fresh: number; retriedSame: number; racedDifferent: number };
  subscribers: { count: number; reconnects: number; errors: number; updates: number; checkedAsOf: number };
  events: number;
  readModelsEqualRebuild: boolean | null;
  violationCount: number;
  violations: string[];
}

interface Server {
  child: ChildProcess;
  url: string;
  alive: boolean;
  /** Which database route (proxy) it uses: a restarted server takes its victim's. */
  route: number;
  output: () => string;
}

interface Attempt {
  key: string;
  title: string;
  outcome: 'acked' | 'refused' | 'lost';
  eventIds?: string[];
  refusal?: string;
  retries: number;
}

interface Segment {
  since: number | null;
  start: number;
  updates: Array<{ position: number; value: string }>;
}

/** A small deterministic PRNG, so a failing run can be repeated with its seed. */
function rng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 4294967296;
  };
}

async function startServer(dataDir: string, opts: HistoryOptions, databaseUrl: string | undefined, route = 0): Promise<Server> {
  const preload = ['-r', './tools/ts-register.js'];
  if (opts.inject === 'skip-digest-check') preload.push('-r', path.join(__dirname, 'inject-skip-digest.js'));
  const storeArgs = opts.store === 'postgres' ? ['--store', 'postgres', '--database-url', databaseUrl!] : [];
  const child = spawn(process.execPath, [...preload, 'src/cli/main.ts', ...storeArgs, '--data-dir', dataDir, 'serve', '--port', '0'], {
    cwd: ROOT,
    env: { ...process.env, REVIEW_LEDGER_STORE: opts.store },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start: ${out}`)), 90_000);
    const check = () => {
      const m = /listening on (http:\/\/[^\s]+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    };
    child.stdout!.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}: ${out}`));
    });
  });
  const server: Server = { child, url, alive: true, route, output: () => out };
  child.once('exit', () => (server.alive = false));
  return server;
}

async function rpc(url: string, token: string, method: string, params: Record<string, unknown>): Promise<{ result?: any; error?: any }> {
  const res = await fetch(`${url}/rpc`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    signal: AbortSignal.timeout(30_000),
  });
  return (await res.json()) as { result?: any; error?: any };
}

/** Errors that say nothing about whether the command was stored: the answer was lost or the store was away. */
const LOST_CODES = new Set(['store_unavailable', 'watch_closed', 'internal', 'timeout']);

/**
 * SQLite's fault: until `deadline`, every 1–3 s another process takes the workspace file's write lock (BEGIN
 * IMMEDIATE) and holds it for 1–7 s (the store waits 5 s) — what a CLI writer or a long backup does to the
 * server. Its appends wait, then refuse with the retryable store_unavailable; nothing acknowledged may be
 * lost, nothing refused stored.
 */
async function holdSqliteWriteLock(file: string, deadline: number, random: () => number, note: (what: string) => void): Promise<void> {
  const started = Date.now();
  while (Date.now() < deadline - 8_000) {
    await new Promise((r) => setTimeout(r, 1_000 + random() * 2_000));
    const holdMs = Math.round(1_000 + random() * 6_000);
    note(`write lock held ${holdMs} ms at ${Date.now() - started} ms`);
    const holder = spawn(process.execPath, ['-e', `const D=require(${JSON.stringify(require.resolve('better-sqlite3'))});const db=new D(process.argv[1],{timeout:10000});db.exec('BEGIN IMMEDIATE');setTimeout(()=>{db.exec('COMMIT');db.close();},Number(process.argv[2]));`, file, String(holdMs)], { stdio: 'inherit' });
    await new Promise((r) => holder.once('exit', r));
  }
}

export async function checkHistory(opts: HistoryOptions): Promise<HistoryReport> {
  const log = opts.log ?? (() => undefined);
  const random = rng(opts.seed ?? Date.now());
  const pick = <T>(xs: T[]): T => xs[Math.floor(random() * xs.length)];
  const violations: string[] = [];
  const violate = (v: string) => {
    violations.push(v);
    log(`VIOLATION ${v}`);
  };
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-history-'));
  let databaseUrl: string | undefined;
  let dbName: string | undefined;
  const pgAdmin = opts.databaseUrl ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  if (opts.store === 'postgres') {
    dbName = `rl_history_${process.pid}_${Date.now().toString(36)}`;
    const c = new Client({ connectionString: pgAdmin });
    await c.connect();
    await c.query(`CREATE DATABASE "${dbName}"`);
    await c.end();
    const u = new URL(pgAdmin);
    u.pathname = `/${dbName}`;
    databaseUrl = u.toString();
  }
  const servers: Server[] = [];
  const proxies: TcpProxy[] = [];
  /** Servers this run kills on purpose; any other exit before the end is a violation. */
  const killedOnPurpose = new Set<ChildProcess>();
  let ending = false;
  const sockets = new Set<WebSocket>();
  const report: HistoryReport = {
    check: 'history',
    store: opts.store,
    servers: opts.servers,
    clients: opts.clients,
    durationMs: opts.durationMs,
    inject: opts.inject ?? null,
    killed: 0,
    faults: [],
    commands: { sent: 0, acknowledged: 0, refused: 0, lostThenRetried: 0, unresolved: 0 },
    keys: { fresh: 0, retriedSame: 0, racedDifferent: 0 },
    subscribers: { count: opts.subscribers, reconnects: 0, errors: 0, updates: 0, checkedAsOf: 0 },
    events: 0,
    readModelsEqualRebuild: null,
    violationCount: 0,
    violations: [],
  };
  try {
    // One after the other: the first start creates the owner token the others find. SQLite: one server
    // per data dir (its lock), so several servers are a PostgreSQL layout.
    if (opts.store === 'sqlite' && opts.servers > 1) throw new Error('servers: SQLite serves one data dir from one server; use --store postgres for several');
    const routeUrl = (route: number): string | undefined => {
      if (!opts.faults || !databaseUrl) return databaseUrl;
      const u = new URL(databaseUrl);
      u.hostname = '127.0.0.1';
      u.port = String(proxies[route].port);
      return u.toString();
    };
    if (opts.faults && databaseUrl) {
      const target = new URL(databaseUrl);
      for (let i = 0; i < opts.servers; i++) proxies.push(await TcpProxy.start({ host: target.hostname, port: Number(target.port || 5432) }));
    }
    const watchExit = (s: Server) =>
      s.child.once('exit', (code, signal) => {
        if (!ending && !killedOnPurpose.has(s.child)) violate(`server ${s.url} exited on its own (${code ?? signal}): ${s.output().slice(-2000)}`);
      });
    for (let i = 0; i < opts.servers; i++) {
      servers.push(await startServer(dataDir, opts, routeUrl(i), i));
      watchExit(servers[i]);
    }
    const live = () => servers.filter((s) => s.alive);
    const owner = fs.readFileSync(path.join(dataDir, 'owner-token'), 'utf8').trim();
    const mint = async (principal: string, role: string) => {
      const added = await rpc(servers[0].url, owner, 'addMember', { workspace_id: WS_ID, idempotencyKey: newUuidV7(), principal, role });
      if (added.error) throw new Error(`addMember: ${JSON.stringify(added.error)}`);
      const t = await rpc(servers[0].url, owner, 'issueToken', { workspace_id: WS_ID, idempotencyKey: newUuidV7(), principal, role });
      if (t.error) throw new Error(`issueToken: ${JSON.stringify(t.error)}`);
      return t.result.result.token as string;
    };
    const author = await mint('agent:history-author', 'member');
    const viewer = await mint('user:history-viewer', 'viewer');
    for (let pr = 1; pr <= PRS; pr++) {
      const requested = await rpc(servers[0].url, author, 'requestReview', { workspace_id: WS_ID, idempotencyKey: newUuidV7(), ...TARGET, prNumber: pr, ...SHA });
      if (requested.error) throw new Error(`requestReview: ${JSON.stringify(requested.error)}`);
    }

    const attempts: Attempt[] = [];
    // The PR follows from the key, so a retry and every payload raced under one key name the same PR.
    const prOf = (key: string) => 1 + (parseInt(key.slice(-4), 16) % PRS);
    const params = (key: string, title: string) => ({ workspace_id: WS_ID, idempotencyKey: key, ...TARGET, prNumber: prOf(key), node: nodePayload(title) });

    /** Sends until answered: a lost answer (server killed, connection reset) is retried elsewhere with the same key and payload. */
    const send = async (a: Attempt): Promise<void> => {
      report.commands.sent++;
      for (;;) {
        const targets = live();
        if (targets.length === 0) {
          if (!restarting) throw new Error('every server is down');
          await restarting;
          continue;
        }
        let reply: { result?: any; error?: any };
        try {
          reply = await rpc(pick(targets).url, author, 'addReviewNode', params(a.key, a.title));
        } catch {
          a.outcome = 'lost';
          a.retries++;
          await new Promise((r) => setTimeout(r, 50));
          continue;
        }
        if (reply.error && LOST_CODES.has(reply.error.data?.code ?? '')) {
          a.retries++;
          await new Promise((r) => setTimeout(r, 50));
          continue;
        }
        if (reply.error) {
          a.outcome = 'refused';
          a.refusal = reply.error.data?.code ?? String(reply.error.message);
        } else {
          a.outcome = 'acked';
          a.eventIds = reply.result.eventIds;
        }
        if (a.retries > 0) report.commands.lostThenRetried++;
        return;
      }
    };

    // Subscribers: watchVerdict over WebSocket (a small view that changes with every filing), resuming with `since` after each disconnect.
    const stop = { now: false };
    const subscriberRuns = Array.from({ length: opts.subscribers }, async (_, n) => {
      const segments: Segment[] = [];
      let last: number | null = null;
      while (!stop.now || segments.length === 0) {
        const targets = live();
        if (targets.length === 0) {
          if (!restarting) break;
          await restarting;
          continue;
        }
        const seg: Segment = { since: last, start: -1, updates: [] };
        try {
          await new Promise<void>((resolve) => {
            const ws = new WebSocket(`${pick(targets).url.replace(/^http/, 'ws')}/rpc`, { headers: { authorization: `Bearer ${viewer}` } });
            sockets.add(ws);
            const lifetime = setTimeout(() => ws.close(), 300 + random() * 2000);
            ws.on('open', () => ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'watchVerdict', params: { workspace_id: WS_ID, ...TARGET, ...(last !== null ? { since: last } : {}) } })));
            ws.on('message', (data) => {
              const msg = JSON.parse(data.toString());
              if (msg.id === 1) {
                if (msg.error) return ws.close();
                seg.start = msg.result.position;
                if (msg.result.snapshot !== undefined) {
                  seg.updates.push({ position: msg.result.position, value: JSON.stringify(msg.result.snapshot) });
                  last = msg.result.position;
                }
                segments.push(seg);
              } else if (msg.method === 'watch.update') {
                seg.updates.push({ position: msg.params.position, value: JSON.stringify(msg.params.value) });
                if (msg.params.coalesced) violate(`subscriber ${n}: update at ${msg.params.position} is coalesced (steps skipped)`);
                last = msg.params.position;
              } else if (msg.method === 'watch.error') {
                // watch_lagging (too slow), watch_closed: resume with since, as a client does.
                report.subscribers.errors++;
                ws.close();
              }
            });
            const done = () => {
              clearTimeout(lifetime);
              sockets.delete(ws);
              resolve();
            };
            ws.on('close', done);
            ws.on('error', done);
          });
        } catch {
          /* a socket that failed to open: try again */
        }
        report.subscribers.reconnects++;
        if (stop.now) break;
      }
      return segments;
    });

    // Clients: fresh keys, same-payload retries of an acknowledged key, and one key raced with three payloads.
    const deadline = Date.now() + opts.durationMs;
    let killAt = opts.kill ? Date.now() + opts.durationMs / 2 : Infinity;
    let restarting: Promise<void> | null = null;
    const clientRuns = Array.from({ length: opts.clients }, async () => {
      while (Date.now() < deadline) {
        if (Date.now() >= killAt) {
          killAt = Infinity;
          const victim = live()[0];
          log(`kill -9 server ${victim.url}`);
          killedOnPurpose.add(victim.child);
          victim.child.kill('SIGKILL');
          await new Promise((r) => victim.child.once('exit', r));
          report.killed++;
          // Restarted on the same data dir (SQLite allows one server per data dir: clients wait for it).
          restarting = startServer(dataDir, opts, routeUrl(victim.route), victim.route).then((s) => {
            servers.push(s);
            watchExit(s);
            log(`restarted: ${s.url}`);
          });
        }
        if (live().length === 0) await restarting;
        const r = random();
        if (r < 0.6 || attempts.length === 0) {
          const key = newUuidV7();
          report.keys.fresh++;
          const a: Attempt = { key, title: `h-${key}-0`, outcome: 'lost', retries: 0 };
          attempts.push(a);
          await send(a);
        } else if (r < 0.75) {
          const earlier = pick(attempts.filter((x) => x.outcome === 'acked'));
          if (!earlier) continue;
          report.keys.retriedSame++;
          const a: Attempt = { key: earlier.key, title: earlier.title, outcome: 'lost', retries: 0 };
          await send(a);
          if (a.outcome !== 'acked' || JSON.stringify(a.eventIds) !== JSON.stringify(earlier.eventIds)) violate(`retry of ${earlier.key} with its payload answered ${a.outcome} ${a.refusal ?? JSON.stringify(a.eventIds)}, first answer ${JSON.stringify(earlier.eventIds)}`);
        } else {
          const key = newUuidV7();
          report.keys.racedDifferent++;
          const group = [0, 1, 2].map((v) => ({ key, title: `h-${key}-${v}`, outcome: 'lost', retries: 0 }) as Attempt);
          attempts.push(...group);
          await Promise.all(group.map(send));
          const acked = group.filter((a) => a.outcome === 'acked');
          if (acked.length !== 1) violate(`key ${key} sent at once with 3 payloads: ${acked.length} acknowledged (${group.map((a) => a.outcome + (a.refusal ? `:${a.refusal}` : '')).join(', ')})`);
        }
      }
    });
    // Faults: until the deadline, every 1–3 s one of them, on one server's route or on every route.
    const faultRun = (async () => {
      if (!opts.faults) return;
      if (opts.store === 'sqlite') return holdSqliteWriteLock(path.join(dataDir, WS_ID, 'workspace.db'), deadline, random, (what) => {
        log(what);
        report.faults.push(what);
      });
      while (Date.now() < deadline - 4_000) {
        await new Promise((r) => setTimeout(r, 1_000 + random() * 2_000));
        const routes = random() < 0.5 ? proxies.map((_, i) => i) : [Math.floor(random() * proxies.length)];
        const kind = pick(['outage', 'partition', 'terminate'] as const);
        const what = `${kind} on ${routes.length === proxies.length ? 'every route' : `route ${routes[0]}`} at ${Date.now() - (deadline - opts.durationMs)} ms`;
        log(what);
        report.faults.push(what);
        if (kind === 'terminate') {
          // A connection of its own each time: a restart of the database (restartDatabase) may end any other.
          const admin = new Client({ connectionString: pgAdmin });
          admin.on('error', () => undefined);
          try {
            await admin.connect();
            await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [dbName]);
          } catch (err) {
            log(`  (not done: ${(err as Error).message})`);
          } finally {
            await admin.end().catch(() => undefined);
          }
          continue;
        }
        await Promise.all(routes.map((i) => (kind === 'outage' ? proxies[i].cut() : proxies[i].hold())));
        await new Promise((r) => setTimeout(r, kind === 'outage' ? 3_000 : 2_000));
        await Promise.all(routes.map((i) => proxies[i].restore()));
      }
    })();
    // Database restarts, when asked: the server process itself goes away and comes back (its own recovery).
    const restartRun = (async () => {
      if (!opts.restartDatabase) return;
      if (opts.store !== 'postgres') throw new Error('restartDatabase: needs --store postgres');
      const started = deadline - opts.durationMs;
      for (const at of [started + opts.durationMs / 3, started + (2 * opts.durationMs) / 3]) {
        await new Promise((r) => setTimeout(r, Math.max(0, at - Date.now())));
        const what = `database restarted (${opts.restartDatabase}) at ${Date.now() - started} ms`;
        log(what);
        execSync(opts.restartDatabase, { stdio: 'inherit', timeout: 120_000 });
        report.faults.push(what);
      }
    })();
    // Handled now (an error before the awaits below would otherwise be an unhandled rejection), thrown there.
    faultRun.catch(() => undefined);
    restartRun.catch(() => undefined);
    await Promise.all(clientRuns);
    await faultRun;
    await restartRun;
    await restarting;

    // Quiesce: the subscribers catch up with the final answer, then stop. Just after a fault a server may
    // still refuse (store_unavailable with retryAfterMs, until its probe finds the database): a client waits
    // and asks again, and so do these last reads — on that refusal only; any other error fails the run.
    let finalAnswer = await rpc(live()[0].url, viewer, 'review_studio.verdict', { workspace_id: WS_ID, ...TARGET });
    for (let tries = 0; finalAnswer.error?.data?.code === 'store_unavailable' && tries < 120; tries++) {
      await new Promise((r) => setTimeout(r, finalAnswer.error.data?.retryAfterMs ?? 500));
      finalAnswer = await rpc(live()[0].url, viewer, 'review_studio.verdict', { workspace_id: WS_ID, ...TARGET });
    }
    if (finalAnswer.error) throw new Error(`the final answer: ${JSON.stringify(finalAnswer.error)}`);
    const finalJson = JSON.stringify(finalAnswer.result?.value);
    stop.now = true;
    for (const ws of sockets) ws.close();
    const segmentsBySubscriber = await Promise.all(subscriberRuns);
    // A last resume of each subscriber reads to the end.
    for (const [n, segments] of segmentsBySubscriber.entries()) {
      const lastSeen = segments.flatMap((s) => s.updates).at(-1)?.position ?? null;
      const tail: Segment = { since: lastSeen, start: -1, updates: [] };
      for (let tries = 0; ; tries++) {
        const ws = new WebSocket(`${live()[0].url.replace(/^http/, 'ws')}/rpc`, { headers: { authorization: `Bearer ${viewer}` } });
        const outcome = await new Promise<'done' | 'retry'>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`subscriber ${n} did not reach the final answer`)), 180_000);
          const finish = (how: 'done' | 'retry' = 'done') => {
            clearTimeout(timer);
            ws.close();
            resolve(how);
          };
          ws.on('open', () => ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'watchVerdict', params: { workspace_id: WS_ID, ...TARGET, ...(lastSeen !== null ? { since: lastSeen } : {}) } })));
          ws.on('message', (data) => {
            const msg = JSON.parse(data.toString());
            if (msg.id === 1) {
              // Refused for now (the database just came back): resume again after retryAfterMs, as a client does.
              if (msg.error?.data?.code === 'store_unavailable' && tries < 120) return void setTimeout(() => finish('retry'), msg.error.data?.retryAfterMs ?? 500);
              if (msg.error) return reject(new Error(`resume failed: ${JSON.stringify(msg.error)}`));
              tail.start = msg.result.position;
              if (msg.result.snapshot !== undefined) tail.updates.push({ position: msg.result.position, value: JSON.stringify(msg.result.snapshot) });
            } else if (msg.method === 'watch.update') tail.updates.push({ position: msg.params.position, value: JSON.stringify(msg.params.value) });
            const latest = tail.updates.at(-1)?.value ?? segments.flatMap((s) => s.updates).at(-1)?.value;
            if (latest === finalJson) finish();
          });
          ws.on('error', reject);
        });
        if (outcome === 'done') break;
      }
      segments.push(tail);
    }

    // Stop the servers, then read the log itself.
    ending = true;
    for (const s of live()) s.child.kill('SIGTERM');
    await Promise.all(servers.map((s) => (s.child.exitCode === null && s.child.signalCode === null ? new Promise((r) => s.child.once('exit', r)) : null)));
    const ledger = new Ledger(loadConfig({ dataDir, store: opts.store, databaseUrl }, {}));
    try {
      const ws = await ledger.workspace(WS_ID);
      const events: RecordedEvent[] = await collect(ws.store.readAll());
      report.events = events.length;
      // Subscribers: order, no duplicate, each value the answer asOf its position, no gap against the others.
      const sequences = segmentsBySubscriber.map((segments) => segments.flatMap((s) => s.updates));
      // The answer at every position, from one fold of the log here (an asOf query per position made the
      // server fold the stream thousands of times).
      const q = queryByName('verdict')!;
      const input = q.input.parse(TARGET);
      const fold = await q.fold(input, ws);
      let state = fold.initialState();
      const initial = canonicalJson(q.view(state, input));
      const after: Array<{ position: number; json: string }> = [];
      const sources = q.sources(input);
      for (const e of events) {
        if ((sources !== 'all' && !sources.includes(e.streamId)) || !q.affects(input, e)) continue;
        state = fold.evolve(state, e);
        after.push({ position: e.globalPosition, json: canonicalJson(q.view(state, input)) });
      }
      const answerAt = async (position: number): Promise<string> => {
        report.subscribers.checkedAsOf++;
        let lo = 0;
        let hi = after.length - 1;
        let found = -1;
        while (lo <= hi) {
          const mid = (lo + hi) >> 1;
          if (after[mid].position <= position) {
            found = mid;
            lo = mid + 1;
          } else hi = mid - 1;
        }
        return found < 0 ? initial : after[found].json;
      };
      const allPositions = new Set<number>();
      for (const [n, seq] of sequences.entries()) {
        report.subscribers.updates += seq.length;
        for (let i = 1; i < seq.length; i++) if (seq[i].position <= seq[i - 1].position) violate(`subscriber ${n}: update at ${seq[i].position} after ${seq[i - 1].position} (out of order or twice)`);
        for (const u of seq) {
          allPositions.add(u.position);
          if ((await answerAt(u.position)) !== canonicalJson(JSON.parse(u.value))) violate(`subscriber ${n}: the update at ${u.position} differs from the answer asOf ${u.position}`);
        }
      }
      for (const [n, seq] of sequences.entries()) {
        if (seq.length === 0) continue;
        const from = seq[0].position;
        const mine = new Set(seq.map((u) => u.position));
        // Positions where the answer changed (some subscriber got an update there, and the answer there
        // differs from the answer just before): every subscriber covering them must have it too.
        for (const p of [...allPositions].sort((a, b) => a - b)) {
          if (p <= from || mine.has(p)) continue;
          if ((await answerAt(p)) !== (await answerAt(p - 1))) violate(`subscriber ${n}: no update at ${p}, where the answer changed (a gap)`);
        }
      }

      const filed = events.filter((e) => e.type === 'ReviewNodeFiled');
      const byTitle = new Map<string, RecordedEvent[]>();
      for (const e of filed) {
        const title = (e.data as { title?: string; node?: { title?: string } }).title ?? (e.data as { node?: { title?: string } }).node?.title ?? '';
        byTitle.set(title, [...(byTitle.get(title) ?? []), e]);
      }
      const titlesByKey = new Map<string, Set<string>>();
      for (const a of attempts) {
        const stored = byTitle.get(a.title) ?? [];
        if (a.outcome === 'acked') {
          report.commands.acknowledged++;
          if (stored.length !== 1) violate(`acknowledged ${a.title} is stored ${stored.length} times`);
          else if (stored[0].metadata.idempotencyKey !== a.key || !a.eventIds!.includes(stored[0].eventId)) violate(`acknowledged ${a.title}: the answer names ${JSON.stringify(a.eventIds)}, the log holds ${stored[0].eventId} under key ${stored[0].metadata.idempotencyKey}`);
        } else if (a.outcome === 'refused') {
          report.commands.refused++;
          if (stored.length !== 0) violate(`refused ${a.title} (${a.refusal}) is stored`);
        } else report.commands.unresolved++;
        for (const e of stored) titlesByKey.set(e.metadata.idempotencyKey ?? '', new Set([...(titlesByKey.get(e.metadata.idempotencyKey ?? '') ?? []), a.title]));
      }
      for (const [key, titles] of titlesByKey) if (titles.size > 1) violate(`key ${key} holds events of ${titles.size} payloads`);
      // Read models against a fresh rebuild from position 0.
      const host = readModelHost(ws);
      if (host) {
        await host.settle();
        const before = await Promise.all(host.names.map((n) => host.dump(n)));
        await host.rebuildAll(host.names);
        const after = await Promise.all(host.names.map((n) => host.dump(n)));
        report.readModelsEqualRebuild = before.every((d, i) => d === after[i]);
        if (!report.readModelsEqualRebuild) violate(`read models differ from a fresh rebuild: ${host.names.filter((_, i) => before[i] !== after[i]).join(', ')}`);
      }
    } finally {
      await ledger.close();
    }
  } finally {
    ending = true;
    for (const ws of sockets) ws.terminate();
    for (const s of servers) if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGKILL');
    await Promise.all(servers.map((s) => (s.child.exitCode === null && s.child.signalCode === null ? new Promise((r) => s.child.once('exit', r)) : null)));
    for (const p of proxies) await p.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
    if (dbName) {
      const c = new Client({ connectionString: pgAdmin });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
      await c.end();
    }
  }
  report.violationCount = violations.length;
  report.violations = violations.slice(0, 20);
  return report;
}
