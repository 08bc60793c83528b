import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { newUuidV7 } from '../../src/events/ids';
import { startServer, type RunningServer } from '../../src/server/bootstrap';

/**
 * `review-ledger backup --to DIR`: what "restore it from a backup" (store_damaged) needs. Before there was
 * no way to copy a served SQLite data dir consistently (a `cp` of a live WAL database can copy a torn
 * file). Run here as an operator would: a separate process while the server takes writes.
 */

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../..');

async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const script = `require('./src/cli/main.ts').run(['node', 'review-ledger', ...JSON.parse(process.argv[1])]);`;
  try {
    const { stdout, stderr } = await run(process.execPath, ['-r', './tools/ts-register.js', '-e', script, JSON.stringify(args)], { cwd: ROOT, encoding: 'utf8' });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('review-ledger backup', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-backup-'));
  const dataDir = path.join(root, 'data');
  const copy = path.join(root, 'copy');
  let server: RunningServer | undefined;

  afterAll(async () => {
    await server?.close();
    fs.rmSync(root, { recursive: true, force: true });
  }, 60_000);

  const rpc = async (url: string, token: string, method: string, params: Record<string, unknown>) => {
    const res = await fetch(`${url}/rpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { workspace_id: 'default', ...params } }),
    });
    return (await res.json()) as { result?: any; error?: { message: string; data?: { code: string } } };
  };

  test('copies a served data dir while writes go on; the copy serves, verifies and holds every event up to its head', async () => {
    server = await startServer({ dataDir, port: 0 });
    const owner = fs.readFileSync(path.join(dataDir, 'owner-token'), 'utf8').trim();
    let writing = true;
    const errors: string[] = [];
    let acked = 0;
    const writers = Array.from({ length: 4 }, async (_, w) => {
      for (let i = 0; writing; i++) {
        const out = await rpc(server!.url, owner, 'addMember', { idempotencyKey: newUuidV7(), principal: `agent:w${w}-${i}`, role: 'member' });
        if (out.error) errors.push(out.error.data?.code ?? out.error.message);
        else acked++;
      }
    });
    while (acked < 200) await new Promise((r) => setTimeout(r, 20));
    const backup = await cli(['--data-dir', dataDir, 'backup', '--to', copy, '--json']);
    writing = false;
    await Promise.all(writers);
    expect(backup.code).toBe(0);
    expect(errors).toEqual([]);
    const report = JSON.parse(backup.stdout.trim()) as { workspaces: Array<{ workspaceId: string; head: number }>; secrets: string[] };
    expect(report.secrets.sort()).toEqual(['audit-ed25519.pem', 'owner-token', 'server.key']);
    const head = report.workspaces.find((w) => w.workspaceId === 'default')!.head;
    expect(head).toBeGreaterThan(200);
    // Everything in the copy is the server user's alone.
    for (const f of ['catalog.db', 'server.key', 'audit-ed25519.pem', 'owner-token', 'backup.json', path.join('default', 'workspace.db')]) {
      expect({ f, mode: fs.statSync(path.join(copy, f)).mode & 0o777 }).toEqual({ f, mode: 0o600 });
    }
    await server.close();
    server = undefined;

    // The copy is a data dir: served, its chain verifies to its head, its tokens are good.
    server = await startServer({ dataDir: copy, port: 0 });
    const audit = await rpc(server.url, owner, 'review_studio.audit', { limit: 1 });
    expect(audit.error).toBeUndefined();
    expect({ ok: audit.result.chain.ok, head: audit.result.chain.headPosition }).toEqual({ ok: true, head });
    expect((await rpc(server.url, owner, 'addMember', { idempotencyKey: newUuidV7(), principal: 'agent:after-restore', role: 'member' })).error).toBeUndefined();
  }, 180_000);

  test('refuses a folder that is not empty, naming the flag', async () => {
    const out = await cli(['--data-dir', dataDir, 'backup', '--to', copy]);
    expect(out.code).toBe(1);
    expect(out.stderr).toMatch(/error \[invalid_config\]: --to: .* exists and is not empty/);
  }, 60_000);
});
