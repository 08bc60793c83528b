import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { WebSocket } from 'ws';
import { newUuidV7 } from '../../src/events/ids';
import { JOB_SLOTS } from '../../src/compute/job-slots';
import { GitFixture } from '../support/git-fixture';
import { command, serverFixture, WsClient } from '../rpc/support';
import { startServer } from '../../src/server/bootstrap';
import { loadOperatorConfig } from '../../src/operator-config';
import Database from 'better-sqlite3';
import { SqliteEventStore } from '../../src/stores/sqlite/sqlite-event-store';
import { collect, StoreClosed } from '../../src/events/store/port';

/**
 * `serve` on SIGTERM (a rolling deploy, a restart). Before: Nest's shutdown hook closed the application and
 * raised the signal again while requests ran — under load every request in flight saw its connection reset,
 * the process died of the signal (no exit code) and left its data-dir lock. Now what was read is answered,
 * what comes after is refused with a retryable `server_shutting_down`, streams end telling their clients to
 * resume, and the process exits 0 with its lock released. Nothing here waits on time: each step waits for
 * the event that proves the previous one happened.
 */
const root = path.resolve(__dirname, '../..');

function startServe(dataDir: string): { child: ChildProcess; url: Promise<string>; stderr: () => string; exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }> } {
  const child = spawn(process.execPath, ['-r', path.join(root, 'tools/ts-register.js'), path.join(root, 'src/cli/main.ts'), 'serve', '--data-dir', dataDir, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr!.on('data', (d) => (err += d));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const url = new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    void exit.then(({ code }) => reject(new Error(`serve exited ${code}: ${err}`)));
  });
  return { child, url, stderr: () => err, exit };
}

async function rpc(url: string, token: string, method: string, params: Record<string, unknown>): Promise<any> {
  const res = await fetch(`${url}/rpc`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  return res.json();
}

/** One raw HTTP/1.1 connection: requests written by hand (a body may be sent in parts), answers parsed by Content-Length. */
class RawHttp {
  private buf = Buffer.alloc(0);
  private wake: (() => void) | null = null;
  closed = false;
  constructor(readonly socket: net.Socket) {
    socket.on('data', (d) => {
      this.buf = Buffer.concat([this.buf, d]);
      this.wake?.();
    });
    socket.on('close', () => {
      this.closed = true;
      this.wake?.();
    });
    socket.on('error', () => undefined);
  }
  static open(url: string): Promise<RawHttp> {
    const u = new URL(url);
    return new Promise((resolve, reject) => {
      const s = net.connect(Number(u.port), u.hostname, () => resolve(new RawHttp(s)));
      s.once('error', reject);
    });
  }
  head(token: string, bodyBytes: number, expectContinue = false): string {
    return `POST /rpc HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${bodyBytes}\r\n${expectContinue ? 'Expect: 100-continue\r\n' : ''}\r\n`;
  }
  /** The next answer; `interim`: a 100 Continue is what is awaited (otherwise it is skipped). */
  async answer(interim = false): Promise<{ status: number; headers: Record<string, string>; body: any }> {
    for (;;) {
      const end = this.buf.indexOf('\r\n\r\n');
      if (end >= 0 && this.buf.subarray(0, 12).toString() === 'HTTP/1.1 100') {
        this.buf = this.buf.subarray(end + 4);
        if (interim) return { status: 100, headers: {}, body: null };
        continue;
      }
      if (end >= 0) {
        const lines = this.buf.subarray(0, end).toString().split('\r\n');
        const headers: Record<string, string> = {};
        for (const l of lines.slice(1)) headers[l.slice(0, l.indexOf(':')).toLowerCase()] = l.slice(l.indexOf(':') + 1).trim();
        const len = Number(headers['content-length'] ?? 0);
        if (this.buf.length >= end + 4 + len) {
          const body = this.buf.subarray(end + 4, end + 4 + len).toString();
          this.buf = this.buf.subarray(end + 4 + len);
          return { status: Number(lines[0].split(' ')[1]), headers, body: JSON.parse(body) };
        }
      }
      if (this.closed) throw new Error('connection closed before a whole answer');
      await new Promise<void>((r) => (this.wake = r));
      this.wake = null;
    }
  }
  untilClosed(): Promise<void> {
    return this.closed ? Promise.resolve() : new Promise((r) => this.socket.once('close', () => r()));
  }
}

/** Reads an SSE response until `event: <name>` arrives; resolves with its data. */
async function sseEvent(reader: ReadableStreamDefaultReader<Uint8Array>, name: string, seen: { text: string }): Promise<string> {
  for (;;) {
    const m = new RegExp(`event: ${name}\\n(?:id: [^\\n]*\\n)?data: ([^\\n]*)\\n\\n`).exec(seen.text);
    if (m) return m[1];
    const { value, done } = await reader.read();
    if (done) throw new Error(`stream ended without event ${name}: ${seen.text.slice(-300)}`);
    seen.text += Buffer.from(value).toString();
  }
}

describe('serve on SIGTERM: answered or refused, never cut', () => {
  let dataDir: string;
  let serve: ReturnType<typeof startServe> | null = null;
  beforeAll(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-shutdown-'));
  });
  afterAll(async () => {
    if (serve && serve.child.exitCode === null && serve.child.signalCode === null) {
      serve.child.kill('SIGKILL');
      await serve.exit;
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers the request it was reading, refuses the next one, ends WebSocket and SSE streams, exits 0 without its lock; the answered command is stored', async () => {
    serve = startServe(dataDir);
    const url = await serve.url;
    const token = fs.readFileSync(path.join(dataDir, 'owner-token'), 'utf8').trim();
    const target = { workspace_id: 'default', repoId: 'shutdown', prNumber: 1 };
    const requested = await rpc(url, token, 'requestReview', { ...target, idempotencyKey: newUuidV7(), baseSha: 'c'.repeat(40), headSha: 'a'.repeat(40) });
    expect(requested.error).toBeUndefined();

    // A WebSocket watching the verdict (its snapshot arrived).
    const ws = new WebSocket(`${url.replace('http', 'ws')}/rpc`, { headers: { authorization: `Bearer ${token}` } });
    const wsMessages: any[] = [];
    let wsMessage: (() => void) | null = null;
    ws.on('message', (d) => {
      wsMessages.push(JSON.parse(d.toString()));
      wsMessage?.();
    });
    const wsClosed = new Promise<{ code: number; reason: string }>((resolve) => ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
    await new Promise((r) => ws.once('open', r));
    ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'watchVerdict', params: target }));
    const wsUntil = async (match: (m: any) => boolean): Promise<any> => {
      for (;;) {
        const m = wsMessages.find(match);
        if (m) return m;
        await new Promise<void>((r) => (wsMessage = r));
      }
    };
    const subscribed = await wsUntil((m) => m.id === 1);
    expect(subscribed.error).toBeUndefined();

    // An SSE stream of the verdict and one of job progress (their first events arrived).
    const sse = await fetch(`${url}/workspaces/default/watch/verdict?repoId=shutdown&prNumber=1&access_token=${token}`);
    const sseReader = sse.body!.getReader();
    const sseSeen = { text: '' };
    await sseEvent(sseReader, 'snapshot', sseSeen);
    const progress = await fetch(`${url}/workspaces/default/watch/progress?access_token=${token}`);
    const progressReader = progress.body!.getReader();
    const progressSeen = { text: '' };
    await sseEvent(progressReader, 'snapshot', progressSeen);

    // A keep-alive connection that was answered once and is idle now.
    const idle = await RawHttp.open(url);
    const discover = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'rpc.discover' });
    idle.socket.write(idle.head(token, Buffer.byteLength(discover)) + discover);
    expect((await idle.answer()).status).toBe(200);

    // A command in flight: the server has read its headers (it answered 100 Continue) and half its body,
    // and waits for the rest.
    const inFlight = await RawHttp.open(url);
    const key = newUuidV7();
    const filing = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'addReviewNode', params: { ...target, idempotencyKey: key, node: { kind: 'bug', priority: 'P1', triage: { category: 'correctness', severity: 'high', effort: 'small' }, confidence: 0.9, title: 'filed while the server shut down', body: 'b', brief: 'engineer' } } });
    const half = Math.floor(filing.length / 2);
    inFlight.socket.write(inFlight.head(token, Buffer.byteLength(filing), true));
    expect((await inFlight.answer(true)).status).toBe(100);
    inFlight.socket.write(filing.slice(0, half));

    serve.child.kill('SIGTERM');

    // Streams end first, each telling its client why: resume (or subscribe again) elsewhere.
    const ended = JSON.parse(await sseEvent(sseReader, 'error', sseSeen));
    expect(ended.data.code).toBe('watch_closed');

    // A new request on the idle keep-alive connection is refused, retryable, and the connection closes.
    idle.socket.write(idle.head(token, Buffer.byteLength(discover)) + discover);
    const refused = await idle.answer();
    expect(refused.status).toBe(503);
    expect(refused.headers.connection).toBe('close');
    expect(refused.body.error.data).toEqual({ code: 'server_shutting_down', retryAfterMs: 1000 });
    await idle.untilClosed();

    expect(JSON.parse(await sseEvent(progressReader, 'error', progressSeen)).data.code).toBe('watch_closed');
    const wsEnded = await wsUntil((m) => m.method === 'watch.error' || m.params?.error);
    expect(JSON.stringify(wsEnded)).toContain('watch_closed');
    expect(await wsClosed).toEqual({ code: 1001, reason: 'server shutting down: connect again and resume with since' });

    // New connections are refused by the kernel (the listener closed when the drain began).
    await expect(RawHttp.open(url)).rejects.toMatchObject({ code: 'ECONNREFUSED' });

    // The command in flight is run and answered, on a connection closed after its answer.
    inFlight.socket.write(filing.slice(half));
    const answered = await inFlight.answer();
    expect([answered.status, answered.body.error]).toEqual([200, undefined]);
    expect(answered.headers.connection).toBe('close');
    expect(answered.body.error).toBeUndefined();
    const nodeId = answered.body.result.result.nodeId as string;
    await inFlight.untilClosed();

    expect(await serve.exit).toEqual({ code: 0, signal: null });
    expect(serve.stderr()).toContain('SIGTERM: shutting down');
    expect(fs.existsSync(path.join(dataDir, 'server.lock'))).toBe(false);

    // Restarted: no stale lock to take over, and the answered command is in the log.
    serve = startServe(dataDir);
    const again = await serve.url;
    const status = await rpc(again, token, 'review_studio.nodeStatus', target);
    expect(status.result.value.nodes.map((n: { nodeId: string; title: string }) => [n.nodeId, n.title])).toEqual([[nodeId, 'filed while the server shut down']]);
    expect(serve.stderr()).not.toContain('stale lock');
    serve.child.kill('SIGTERM');
    expect(await serve.exit).toEqual({ code: 0, signal: null });
  });
});

describe('shutdown of a WebSocket connection with a request in flight', () => {
  it('answers the request it had read (a job waiting for a slot), runs no frame read after, then closes 1001', async () => {
    const fx = await serverFixture();
    const repo = new GitFixture('rl-shutdown-repo-', path.join(fx.dataDir, 'repos', fx.workspaceId));
    repo.git('remote', 'add', 'origin', 'git@github.com:acme/shutdown.git');
    repo.write('src/a.ts', 'export const a = 1;\n');
    repo.commit('one file');
    // Every job slot of this process taken by a job the test ends: the indexCode below waits for one.
    const held: Array<() => void> = [];
    const holding = Array.from({ length: JOB_SLOTS.running }, () => JOB_SLOTS.run('test-holder', () => new Promise<void>((resolve) => held.push(resolve))));
    let closed = false;
    try {
      const url = fx.server.url;
      expect((await command(url, fx.ownerToken, fx.workspaceId, 'registerRepo', { repoId: 'shut', path: repo.dir })).error).toBeUndefined();
      const client = await WsClient.open(url, fx.ownerToken);
      expect((await client.call('watchProgress', { workspace_id: fx.workspaceId })).error).toBeUndefined();
      const wsClosed = new Promise<number>((resolve) => client.ws.once('close', (code) => resolve(code)));
      const indexed = client.call('indexCode', { workspace_id: fx.workspaceId, idempotencyKey: newUuidV7(), repoId: 'shut' });
      // Read and waiting: the server has it in its queue.
      while (JOB_SLOTS.stats().waiting[fx.workspaceId] !== 1) await new Promise((r) => setImmediate(r));
      // Its progress says so: the job is queued, not lost.
      await client.until(() => client.notifications.some((n) => n.params?.value?.kind === 'indexCode' && n.params.value.phase === 'queued'));

      const shutdown = fx.server.shutdown();
      // Sent after the drain began: not run, not answered.
      const late = client.call('addMember', { workspace_id: fx.workspaceId, idempotencyKey: newUuidV7(), principal: 'agent:late', role: 'member' });
      let lateAnswered = false;
      void late.then(() => (lateAnswered = true));

      for (const release of held) release();
      const answer = await indexed;
      expect(answer.error).toBeUndefined();
      expect(answer.result.result).toMatchObject({ fileCount: 1 });
      expect(await wsClosed).toBe(1001);
      expect(await shutdown).toEqual({ cut: 0 });
      closed = true;
      expect(lateAnswered).toBe(false);
      await Promise.all(holding);
    } finally {
      for (const release of held) release();
      if (!closed) await fx.server.close();
      repo.cleanup();
      fs.rmSync(fx.dataDir, { recursive: true, force: true });
    }
  });
});

describe('shutdown past connections.drainMs', () => {
  it('cuts a request still unread at the deadline, says how many, and closes the server', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-shutdown-deadline-'));
    const operator = loadOperatorConfig(dataDir, {}, {});
    const server = await startServer({ dataDir, port: 0, operator: { ...operator, connections: { ...operator.connections, drainMs: 50 } } });
    try {
      const token = fs.readFileSync(path.join(dataDir, 'owner-token'), 'utf8').trim();
      // Headers read (100 Continue), body never sent: the request cannot be answered before the deadline.
      const stuck = await RawHttp.open(server.url);
      stuck.socket.write(stuck.head(token, 100, true));
      expect((await stuck.answer(true)).status).toBe(100);
      expect(await server.shutdown()).toEqual({ cut: 1 });
      await stuck.untilClosed();
      await expect(RawHttp.open(server.url)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('shutdown with a command running whose client left', () => {
  it('lets the command finish (stored, under its key) before the stores close; a closed store refuses with store_unavailable', async () => {
    const fx = await serverFixture();
    const file = path.join(fx.dataDir, fx.workspaceId, 'workspace.db');
    // Another connection holds the log's write lock: the command's append waits for it (retrying).
    const holder = new Database(file);
    let held = true;
    try {
      holder.exec('BEGIN IMMEDIATE');
      const key = newUuidV7();
      const client = await RawHttp.open(fx.server.url);
      const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'addMember', params: { workspace_id: fx.workspaceId, idempotencyKey: key, principal: 'agent:left', role: 'member' } });
      client.socket.write(client.head(fx.ownerToken, Buffer.byteLength(body)) + body);
      const ledger = fx.server.ledger;
      while (ledger.commandsRunning() !== 1) await new Promise((r) => setImmediate(r));
      // The client goes away (a proxy's timeout): nobody will read the answer.
      client.socket.destroy();

      // Which comes first once the drain is over: waiting for the command, or closing the stores under it.
      const settle = ledger.commandsSettled.bind(ledger);
      const close = ledger.workspaces.close.bind(ledger.workspaces);
      const first = new Promise<string>((resolve) => {
        jest.spyOn(ledger, 'commandsSettled').mockImplementation(() => {
          resolve('waits for the command');
          return settle();
        });
        jest.spyOn(ledger.workspaces, 'close').mockImplementation(() => {
          resolve('closes the stores');
          return close();
        });
      });
      const shutdown = fx.server.shutdown();
      expect(await first).toBe('waits for the command');
      holder.exec('COMMIT');
      held = false;
      expect(await shutdown).toEqual({ cut: 0 });
      expect(ledger.commandsRunning()).toBe(0);

      // Stored once, under its key, after the client left.
      const store = new SqliteEventStore({ file, workspaceId: fx.workspaceId });
      try {
        const mine = (await collect(store.readAll())).filter((e) => e.metadata.idempotencyKey === key);
        expect(mine.map((e) => e.type)).toEqual(['MemberAdded']);
      } finally {
        await store.close();
      }
      // What a command meets when its store closed anyway (past connections.drainMs): retryable, not internal.
      await expect(store.append('s', 'any', [{ eventId: newUuidV7(), type: 'MemberAdded', schemaVersion: 1, data: {}, metadata: {} as never }])).rejects.toBeInstanceOf(StoreClosed);
      await expect(store.claimNoopKey(newUuidV7(), { principal: 'p', command: 'c', digest: 'd', json: '{}' })).rejects.toMatchObject({ code: 'store_unavailable' });
    } finally {
      if (held) holder.exec('ROLLBACK');
      holder.close();
      jest.restoreAllMocks();
      fs.rmSync(fx.dataDir, { recursive: true, force: true });
    }
  });
});

describe('shutdown with a command still running at connections.drainMs', () => {
  it('does not wait past the deadline: the stores close, the command is refused store_unavailable (retryable) and nothing is recorded', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-shutdown-running-'));
    const operator = loadOperatorConfig(dataDir, {}, {});
    const server = await startServer({ dataDir, port: 0, operator: { ...operator, connections: { ...operator.connections, drainMs: 50 } } });
    const file = path.join(dataDir, 'default', 'workspace.db');
    const holder = new Database(file);
    let held = true;
    try {
      // The log's write lock held by another connection: the command's append waits for it.
      holder.exec('BEGIN IMMEDIATE');
      const key = newUuidV7();
      // Through the entry path every transport uses (a client that left is no longer there to read the answer).
      const outcome = server.ledger.run('addMember', 'default', { principal: 'user:local-operator', role: 'owner', idempotencyKey: key }, { principal: 'agent:late', role: 'member' });
      const settled = outcome.then(
        () => 'answered',
        (err: { code?: string }) => err.code ?? 'no code',
      );
      while (server.ledger.commandsRunning() !== 1) await new Promise((r) => setImmediate(r));
      expect(await server.shutdown()).toEqual({ cut: 0 });
      holder.exec('ROLLBACK');
      held = false;
      expect(await settled).toBe('store_unavailable');
      const store = new SqliteEventStore({ file, workspaceId: 'default' });
      try {
        expect((await collect(store.readAll())).filter((e) => e.metadata.idempotencyKey === key)).toEqual([]);
      } finally {
        await store.close();
      }
    } finally {
      if (held) holder.exec('ROLLBACK');
      holder.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
