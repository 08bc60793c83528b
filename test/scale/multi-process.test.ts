import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from 'pg';
import { newUuidV7 } from '../../src/events/ids';
import { BASE, HEAD_A, WsClient, call, nodePayload, tokenFor } from '../rpc/support';
import { DATABASE_URL, whenPostgres } from './pg-support';

const ROOT = path.resolve(__dirname, '../..');

interface ServerProcess {
  child: ChildProcess;
  url: string;
  output: () => string;
}

/** `review-ledger serve` as a real child process (the CLI the README documents), on a loopback port. */
async function startProcess(dataDir: string, databaseUrl: string): Promise<ServerProcess> {
  const child = spawn(process.execPath, ['-r', './tools/ts-register.js', 'src/cli/main.ts', '--store', 'postgres', '--database-url', databaseUrl, '--data-dir', dataDir, 'serve', '--port', '0'], {
    cwd: ROOT,
    env: { ...process.env, REVIEW_LEDGER_STORE: 'postgres' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start: ${out}`)), 60_000);
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
  return { child, url, output: () => out };
}

/** A process's state and output, for a failure message. */
const describe = (name: string, p: ServerProcess) => `${name}: exit ${p.child.exitCode} signal ${p.child.signalCode}, output: ${p.output().slice(-4000)}`;

async function admin<T>(fn: (c: Client) => Promise<T>, url = DATABASE_URL): Promise<T> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** A command call whose key and payload the test keeps, to retry it elsewhere. */
interface SentCommand {
  method: string;
  params: Record<string, unknown>;
}

const rpc = async (url: string, token: string, cmd: SentCommand) => call(url, token, cmd.method, cmd.params);

/** The exact response bytes (same request id every time, so an idempotent replay must match byte for byte). */
async function rawRpc(url: string, token: string, cmd: SentCommand): Promise<string> {
  const res = await fetch(`${url}/rpc`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: cmd.method, params: cmd.params }),
  });
  return res.text();
}

whenPostgres('multi-process', () => {
  // A database of its own: the two servers use the default schema, exactly as in production.
  const dbName = `rl_mp_${process.pid}_${Date.now().toString(36)}`;
  const dbUrl = (() => {
    const u = new URL(DATABASE_URL);
    u.pathname = `/${dbName}`;
    return u.toString();
  })();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-mp-'));
  const procs: ServerProcess[] = [];
  const clients: WsClient[] = [];
  let a: ServerProcess;
  let b: ServerProcess;
  let owner: string;
  let author: string;
  let peer: string;
  let viewer: string;
  const ws = 'default';
  const target = { repoId: 'mp-repo', prNumber: 7 };

  beforeAll(async () => {
    await admin((c) => c.query(`CREATE DATABASE "${dbName}"`));
    // One after the other: the first start creates the owner token the second one finds.
    a = await startProcess(dataDir, dbUrl);
    procs.push(a);
    b = await startProcess(dataDir, dbUrl);
    procs.push(b);
    owner = fs.readFileSync(path.join(dataDir, 'owner-token'), 'utf8').trim();
    try {
      author = await tokenFor(a.url, owner, ws, 'agent:mp-author', 'member');
      // Issued through B: tokens live in the shared event log, so A accepts them too.
      peer = await tokenFor(b.url, owner, ws, 'agent:mp-peer', 'member');
      viewer = await tokenFor(a.url, owner, ws, 'user:mp-viewer', 'viewer');
    } catch (err) {
      // A failed call here is a server that died or reset the connection: say which, with what it printed.
      throw new Error(`${String(err)} (cause: ${String((err as { cause?: unknown }).cause)}); ${describe('A', a)}; ${describe('B', b)}`);
    }
  }, 120_000);

  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    for (const p of procs) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGTERM');
    await Promise.all(procs.map((p) => (p.child.exitCode === null && p.child.signalCode === null ? new Promise((r) => p.child.once('exit', r)) : null)));
    await admin((c) => c.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`));
    fs.rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  test('nodes filed and confirmed through both processes at once: a watchVerdict subscriber on each sees every update, in the same order', async () => {
    const requested = await call(a.url, author, 'requestReview', { workspace_id: ws, idempotencyKey: newUuidV7(), ...target, baseSha: BASE, headSha: HEAD_A });
    expect(requested.error).toBeUndefined();
    const watchA = await WsClient.open(a.url, viewer);
    const watchB = await WsClient.open(b.url, viewer);
    clients.push(watchA, watchB);
    const subA = await watchA.call('watchVerdict', { workspace_id: ws, ...target });
    const subB = await watchB.call('watchVerdict', { workspace_id: ws, ...target });
    expect(subA.error).toBeUndefined();
    expect(subB.error).toBeUndefined();

    // Eight filings at once, alternating processes; each node then confirmed through the OTHER process.
    const filings: SentCommand[] = Array.from({ length: 8 }, (_, i) => ({
      method: 'addReviewNode',
      params: { workspace_id: ws, idempotencyKey: newUuidV7(), ...target, node: nodePayload(`finding ${i}`, { priority: i % 2 ? 'P2' : 'P1' }) },
    }));
    const filed = await Promise.all(filings.map((f, i) => rpc(i % 2 ? b.url : a.url, author, f)));
    for (const r of filed) expect(r.error).toBeUndefined();
    const nodeIds = filed.map((r) => r.result.result.nodeId as string);
    expect(new Set(nodeIds).size).toBe(8);
    const confirms: SentCommand[] = nodeIds.map((nodeId) => ({ method: 'confirmNode', params: { workspace_id: ws, idempotencyKey: newUuidV7(), ...target, nodeId } }));
    const confirmed = await Promise.all(confirms.map((c, i) => rpc(i % 2 ? a.url : b.url, peer, c)));
    for (const r of confirmed) expect(r.error).toBeUndefined();

    // Both subscribers reach the state a fresh query gives (updates are sent on change only), with
    // identical update sequences.
    const fresh = await call(b.url, viewer, 'review_studio.verdict', { workspace_id: ws, ...target });
    const reached = (c: WsClient, id: string) => () => {
      const u = c.updates(id);
      return u.length > 0 && JSON.stringify(u[u.length - 1].value) === JSON.stringify(fresh.result.value);
    };
    await watchA.until(reached(watchA, subA.result.subscription), 20_000);
    await watchB.until(reached(watchB, subB.result.subscription), 20_000);
    const strip = (u: any) => ({ position: u.position, value: u.value, coalesced: u.coalesced ?? false });
    const seenA = watchA.updates(subA.result.subscription).map(strip);
    const seenB = watchB.updates(subB.result.subscription).map(strip);
    expect(seenA.length).toBeGreaterThanOrEqual(8); // every filing changes the verdict view
    expect(seenB).toEqual(seenA);
    expect(seenA.every((u) => !u.coalesced)).toBe(true);
    const positions = seenA.map((u) => u.position);
    expect(positions).toEqual([...positions].sort((x, y) => x - y));
    expect(seenA[seenA.length - 1].position).toBeLessThanOrEqual(fresh.result.position);

    // Idempotent retries routed to the other process answer with the original response.
    for (const [i, f] of filings.entries()) expect(await rpc(i % 2 ? a.url : b.url, author, f)).toEqual(expect.objectContaining({ result: filed[i].result }));
    for (const [i, c] of confirms.entries()) expect(await rpc(i % 2 ? b.url : a.url, peer, c)).toEqual(expect.objectContaining({ result: confirmed[i].result }));
  }, 120_000);

  test('the same command sent 10 times at once through both processes lands exactly once, and every caller gets the same bytes', async () => {
    const target3 = { repoId: 'mp-repo', prNumber: 9 };
    expect((await call(a.url, author, 'requestReview', { workspace_id: ws, idempotencyKey: newUuidV7(), ...target3, baseSha: BASE, headSha: HEAD_A })).error).toBeUndefined();
    const same: SentCommand = { method: 'addReviewNode', params: { workspace_id: ws, idempotencyKey: newUuidV7(), ...target3, node: nodePayload('raced') } };
    const replies = await Promise.all(Array.from({ length: 10 }, (_, i) => rawRpc(i % 2 ? b.url : a.url, author, same)));
    expect(JSON.parse(replies[0]).result).toBeDefined();
    expect(new Set(replies).size).toBe(1);
    const nodes = await call(b.url, viewer, 'review_studio.nodeStatus', { workspace_id: ws, ...target3 });
    expect(nodes.result.value.nodes.map((n: { title: string }) => n.title)).toEqual(['raced']);
  }, 60_000);

  test('SIGKILL of one process loses no acknowledged command, and retries through the other return the original responses', async () => {
    const target2 = { repoId: 'mp-repo', prNumber: 8 };
    expect((await call(b.url, author, 'requestReview', { workspace_id: ws, idempotencyKey: newUuidV7(), ...target2, baseSha: BASE, headSha: HEAD_A })).error).toBeUndefined();
    const watchB = await WsClient.open(b.url, viewer);
    clients.push(watchB);
    const sub = await watchB.call('watchVerdict', { workspace_id: ws, ...target2 });

    const sent: SentCommand[] = Array.from({ length: 40 }, (_, i) => ({
      method: 'addReviewNode',
      params: { workspace_id: ws, idempotencyKey: newUuidV7(), ...target2, node: nodePayload(`under fire ${i}`) },
    }));
    const acked = new Map<number, string>();
    let killed = false;
    // Four clients keep A busy; A is killed mid-stream once a few commands were acknowledged.
    const workers = Array.from({ length: 4 }, async (_, w) => {
      for (let i = w; i < sent.length; i += 4) {
        if (killed) return;
        try {
          const text = await rawRpc(a.url, author, sent[i]);
          if (JSON.parse(text).result) acked.set(i, text);
          if (acked.size >= 10 && !killed) {
            killed = true;
            a.child.kill('SIGKILL');
          }
        } catch {
          // Connection reset by the kill: not acknowledged.
        }
      }
    });
    await Promise.all(workers);
    await new Promise<void>((r) => (a.child.exitCode !== null || a.child.signalCode !== null ? r() : a.child.once('exit', () => r())));
    expect(a.child.signalCode).toBe('SIGKILL');
    expect(acked.size).toBeGreaterThanOrEqual(10);

    const head = () => admin(async (c) => Number((await c.query(`SELECT position FROM review_ledger.heads WHERE workspace_id = $1`, [ws])).rows[0].position), dbUrl);
    // Every acknowledged command is durable: its retry through B returns the same response and writes nothing.
    const before = await head();
    for (const [i, text] of acked) expect(await rawRpc(b.url, author, sent[i])).toBe(text);
    expect(await head()).toBe(before);
    const stored = await admin(async (c) => new Set((await c.query(`SELECT event_id FROM review_ledger.events WHERE workspace_id = $1`, [ws])).rows.map((r) => r.event_id as string)), dbUrl);
    for (const i of acked.keys()) expect(stored.has(sent[i].params.idempotencyKey as string)).toBe(true);

    // The unacknowledged ones may or may not have landed; retried through B each lands exactly once.
    const outcomes = new Map<number, unknown>();
    for (let i = 0; i < sent.length; i++) {
      if (acked.has(i)) continue;
      const r = await rpc(b.url, author, sent[i]);
      expect(r.error).toBeUndefined();
      outcomes.set(i, r.result);
      expect(await rpc(b.url, author, sent[i])).toEqual(expect.objectContaining({ result: r.result }));
    }
    const nodes = await call(b.url, viewer, 'review_studio.nodeStatus', { workspace_id: ws, ...target2 });
    const titles = (nodes.result.value.nodes as Array<{ title: string }>).map((n) => n.title).sort();
    expect(titles).toEqual(sent.map((s) => (s.params.node as { title: string }).title).sort());

    // B's subscriber lived through A's death and reflects the final state.
    const fresh = await call(b.url, viewer, 'review_studio.verdict', { workspace_id: ws, ...target2 });
    await watchB.until(() => {
      const u = watchB.updates(sub.result.subscription);
      return u.length > 0 && JSON.stringify(u[u.length - 1].value) === JSON.stringify(fresh.result.value);
    }, 20_000);
    expect(outcomes.size).toBe(sent.length - acked.size);

    // The killed process restarts on the same store and answers exactly as the survivor does.
    const again = await startProcess(dataDir, dbUrl);
    procs.push(again);
    const [viaRestarted, viaSurvivor] = await Promise.all([
      call(again.url, viewer, 'review_studio.verdict', { workspace_id: ws, ...target2 }),
      call(b.url, viewer, 'review_studio.verdict', { workspace_id: ws, ...target2 }),
    ]);
    expect(viaRestarted.result).toEqual(viaSurvivor.result);
    const [i0, text0] = [...acked][0];
    expect(await rawRpc(again.url, author, sent[i0])).toBe(text0);
  }, 120_000);
});
