import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { newUuidV7 } from '../../src/events/ids';
import { Ledger, LOCAL_OPERATOR } from '../../src/ledger';
import { attachReadModels } from '../../src/readmodels/stored/registry';
import { retainWorkspace, sqliteStoreFactory, WorkspaceRegistry } from '../../src/workspaces/registry';
import { call } from '../rpc/support';
import { CommandExecutor } from '../../src/commands/kernel';
import { setLevel } from '../support/test-commands';
import { LedgerServices } from '../../src/slots';

/**
 * Issue 36: every workspace's SQLite files stayed open, and all were opened at boot: 300 workspaces held
 * 4,270 files, and with `nofile=1024` the server no longer started (EMFILE). Workspaces now open on first
 * use and close when idle or past `maxOpenWorkspaces` (least recently used first); a workspace a request,
 * stream or job holds is never closed under it.
 */

const root = path.resolve(__dirname, '../..');

/** Files of this process open under `dir`. */
function filesOpenUnder(pid: number | 'self', dir: string): number {
  let n = 0;
  for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
    try {
      if (fs.readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith(dir)) n++;
    } catch {
      // closed while listed
    }
  }
  return n;
}

async function makeWorkspaces(dataDir: string, n: number): Promise<void> {
  for (let b = 0; b < n; b += 100) {
    const ledger = new Ledger({ dataDir, store: 'sqlite', synchronous: 'NORMAL' } as never, { onOpenWorkspace: attachReadModels });
    for (let i = b; i < Math.min(n, b + 100); i++) await ledger.createWorkspace({ ...LOCAL_OPERATOR, idempotencyKey: newUuidV7() }, { workspaceId: `ws-${i}` });
    await ledger.close();
  }
}

const settle = () => new Promise((r) => setTimeout(r, 20));

describe('workspace stores open lazily and close when idle', () => {
  let dataDir: string;
  beforeEach(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-open-ws-'));
  });
  afterEach(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it('past maxOpen the least recently used idle workspace closes; reopened, it holds everything it held', async () => {
    await makeWorkspaces(dataDir, 12);
    const registry = new WorkspaceRegistry(dataDir, sqliteStoreFactory('NORMAL'), undefined, attachReadModels, { maxOpen: 3, graceMs: 0, idleMs: 3_600_000 });
    try {
      const first = await registry.open('ws-0');
      const executor = new CommandExecutor(() => new Date(), new LedgerServices());
      await executor.execute(setLevel, first, { ...LOCAL_OPERATOR, idempotencyKey: newUuidV7() }, { level: 'thorough' });
      const headBefore = await first.store.headPosition();
      expect(headBefore).toBeGreaterThan(1);
      for (let i = 1; i < 12; i++) {
        await (await registry.open(`ws-${i}`)).store.headPosition();
        await settle();
        expect(registry.openCount()).toBeLessThanOrEqual(3);
      }
      // Three stores (and their WAL files) open, not twelve: the others closed their files.
      const open = (await registry.openHandles()).map((h) => h.id).sort();
      expect(open).toEqual(['ws-10', 'ws-11', 'ws-9']);
      expect(filesOpenUnder('self', path.join(dataDir, 'ws-0'))).toBe(0);
      const again = await registry.open('ws-0');
      expect(again).not.toBe(first);
      expect(await again.store.headPosition()).toBe(headBefore);
    } finally {
      await registry.close();
    }
  });

  it('a retained workspace (a stream, a job) or one a request acquired is never closed; released, it is', async () => {
    await makeWorkspaces(dataDir, 6);
    const registry = new WorkspaceRegistry(dataDir, sqliteStoreFactory('NORMAL'), undefined, undefined, { maxOpen: 1, graceMs: 0, idleMs: 3_600_000 });
    try {
      const held = await registry.open('ws-0');
      const release = retainWorkspace(held);
      // One request acquires five workspaces (as an RPC frame, a command or an MCP tool call does).
      const acquired = [];
      for (const id of ['ws-1', 'ws-2', 'ws-3', 'ws-4', 'ws-5']) acquired.push(await registry.acquire(id));
      for (const a of acquired) await a.handle.store.headPosition();
      await settle();
      // Everything the request holds stayed open while it ran, and the retained one throughout.
      expect((await registry.openHandles()).map((h) => h.id).sort()).toEqual(['ws-0', 'ws-1', 'ws-2', 'ws-3', 'ws-4', 'ws-5']);
      for (const a of acquired) a.release();
      await settle();
      expect((await registry.openHandles()).map((h) => h.id)).toEqual(['ws-0']);
      expect(await held.store.headPosition()).toBeGreaterThan(0);
      release();
      await registry.open('ws-3');
      await settle();
      expect((await registry.openHandles()).map((h) => h.id)).toEqual(['ws-3']);
    } finally {
      await registry.close();
    }
  });

  it('a workspace nobody uses for workspaceIdleSeconds closes its files', async () => {
    await makeWorkspaces(dataDir, 2);
    const registry = new WorkspaceRegistry(dataDir, sqliteStoreFactory('NORMAL'), undefined, attachReadModels, { maxOpen: 100, idleMs: 100, graceMs: 0 });
    try {
      await (await registry.open('ws-1')).store.headPosition();
      expect(filesOpenUnder('self', path.join(dataDir, 'ws-1'))).toBeGreaterThan(0);
      for (let i = 0; i < 200 && registry.openCount() > 0; i++) await settle();
      await settle();
      expect(registry.openCount()).toBe(0);
      expect(filesOpenUnder('self', path.join(dataDir, 'ws-1'))).toBe(0);
    } finally {
      await registry.close();
    }
  });
});

describe('a server with 1,000 workspaces under nofile=1024', () => {
  let dataDir: string;
  let child: ChildProcess | null = null;
  let url = '';
  let stderr = '';
  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-open-ws-boot-'));
    await makeWorkspaces(dataDir, 1000);
    const config = path.join(dataDir, 'operator.json');
    fs.writeFileSync(config, JSON.stringify({ maxWorkspacesPerOwner: 1000 }));
    child = spawn('prlimit', ['--nofile=1024:1024', process.execPath, '-r', path.join(root, 'tools/ts-register.js'), path.join(root, 'src/cli/main.ts'), 'serve', '--data-dir', dataDir, '--port', '0'], {
      env: { ...process.env, REVIEW_LEDGER_CONFIG: config },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stderr!.on('data', (d) => (stderr += d));
    url = await new Promise<string>((resolve, reject) => {
      let out = '';
      child!.stdout!.on('data', (d) => {
        out += d;
        const m = /listening on (http:\/\/\S+)/.exec(out);
        if (m) resolve(m[1]);
      });
      child!.once('exit', (code) => reject(new Error(`serve exited ${code}: ${stderr}`)));
    });
  }, 600_000);
  afterAll(async () => {
    if (child && child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((r) => child!.once('exit', r));
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('boots, serves 200 more workspaces created and used over RPC, and never holds more than its file limit', async () => {
    const health = (await (await fetch(`${url}/health`)).json()) as { status: string; workspaces: number };
    expect([health.status, health.workspaces]).toEqual(['ok', 1000]);
    const ownerToken = fs.readFileSync(path.join(dataDir, 'owner-token'), 'utf8').trim();
    const home = 'ws-0';
    let maxFiles = 0;
    const tokens: string[] = [];
    for (let i = 0; i < 200; i++) {
      const id = `new-${i}`;
      const created = await call(url, ownerToken, 'createWorkspace', { workspace_id: home, idempotencyKey: newUuidV7(), workspaceId: id });
      if (created.error) throw new Error(`createWorkspace ${id}: ${JSON.stringify(created.error)}\n${stderr}`);
      const token = created.result.result.token as string;
      tokens.push(token);
      const added = await call(url, token, 'addMember', { workspace_id: id, idempotencyKey: newUuidV7(), principal: 'agent:probe', role: 'member' });
      expect(added.error).toBeUndefined();
      if (i % 20 === 19) maxFiles = Math.max(maxFiles, fs.readdirSync(`/proc/${child!.pid}/fd`).length);
    }
    // The first ones were closed (idle, past the bound) and open again on their next request.
    const again = await call(url, tokens[0], 'addMember', { workspace_id: 'new-0', idempotencyKey: newUuidV7(), principal: 'agent:second', role: 'member' });
    expect(again.error).toBeUndefined();
    // What it held before it closed is there: the member added then exists.
    const twice = await call(url, tokens[0], 'addMember', { workspace_id: 'new-0', idempotencyKey: newUuidV7(), principal: 'agent:probe', role: 'member' });
    expect(twice.error?.data?.code).toBe('member_exists');
    if (process.env.SHOW_FDS) console.log('max open files', maxFiles);
    expect(maxFiles).toBeLessThan(1024);
    expect(stderr).not.toMatch(/EMFILE/);
    expect(((await (await fetch(`${url}/health`)).json()) as { status: string }).status).toBe('ok');
  }, 600_000);
});
