import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { startServer, type RunningServer } from '../../src/server/bootstrap';
import { RpcClient } from '../../src/demo/rpc-client';
import { closeSharedDiffPools } from '../../src/axes/visual/pool';
import { closeSharedExtractPool } from '../../src/codegraph/extract-pool';

const BIN = path.resolve(__dirname, '..', '..', 'bin', 'review-ledger.js');

/** Runs the real CLI from the TypeScript sources; resolves with the first JSON line it prints. */
function runDemo(args: string[]): { child: ChildProcess; result: Promise<any> } {
  const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, REVIEW_LEDGER_FROM_SOURCE: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  const result = new Promise<any>((resolve, reject) => {
    child.stdout!.on('data', (c) => {
      out += c;
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve(JSON.parse(line));
    });
    child.stderr!.on('data', (c) => (err += c));
    child.on('exit', (code) => reject(new Error(`demo exited with ${code} before printing its result:\n${out}\n${err}`)));
  });
  return { child, result };
}

async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

/** What the demo recorded, read back over RPC by a client of our own (not the demo's words). */
async function checkReview(url: string, r: any): Promise<void> {
  expect(r.signInUrl.startsWith(`${r.pageUrl}#token=`)).toBe(true);
  expect(r.pageUrl).toBe(`${url}/workspaces/${r.workspaceId}/repos/${r.repoId}/prs/1`);
  const token = decodeURIComponent(r.signInUrl.split('#token=')[1]);
  // The sign-in link carries the demo human's member token, never an owner token.
  const me = await (await fetch(`${url}/workspaces/${r.workspaceId}/review-page/me`, { headers: { authorization: `Bearer ${token}` } })).json();
  // Local mode (no identity provider): the demo human acts with an admin-provisioned token, and /me says so.
  expect(me).toEqual({ workspaceId: r.workspaceId, principal: 'user:demo-you', role: 'member', authn: 'admin-provisioned', signIn: null });
  const client = new RpcClient(url, r.workspaceId, token);
  const target = { repoId: r.repoId, prNumber: 1 };
  const cohorts = await client.query('cohorts', target);
  expect(cohorts.cohorts.length).toBeGreaterThanOrEqual(2);
  expect(cohorts.cohorts[0]).toMatchObject({ grouping: 'semantic' });
  expect(cohorts.cohorts[0].files).toEqual(expect.arrayContaining(['src/cart.ts', 'src/price.ts']));
  const nodes = await client.query('nodeStatus', target);
  expect(nodes.nodes).toHaveLength(3);
  expect(nodes.nodes.some((n: any) => n.status === 'consensus-ready' && n.confirmedBy.includes('user:demo-alice'))).toBe(true);
  const contract = await client.query('apiContract', target);
  expect(contract.changes.filter((c: any) => c.severity === 'breaking').every((c: any) => c.decision?.decision === 'approved')).toBe(true);
  const visual = await client.query('visual', target);
  expect(visual.snapshots.map((s: any) => [s.snapshotId, s.displayState])).toEqual([['goldens/checkout-button.png', 'changed']]);
  const verdict = await client.query('verdict', target);
  expect(verdict).toMatchObject({ verdict: r.verdict.verdict, status: 'awaiting_approval' });
  expect(verdict.verdict).toBe('Block');
  expect(verdict.reasons.join('\n')).toMatch(/visual/);
  // The repo is a real git repository with the two commits of the PR.
  expect(fs.existsSync(path.join(r.repoDir, '.git'))).toBe(true);
}

describe('review-ledger demo', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
    // The in-process server indexed and diffed images on the shared worker pools.
    await closeSharedDiffPools();
    await closeSharedExtractPool();
  });
  const tempDir = () => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-demo-test-'));
    dirs.push(d);
    return d;
  };

  it('reviews a generated PR through a running server (its JSON-RPC, its owner token), twice in the same workspace', async () => {
    const dataDir = tempDir();
    const server: RunningServer = await startServer({ dataDir, port: 0 });
    try {
      const first = runDemo(['--data-dir', dataDir, 'demo', '--url', server.url, '--json']);
      const r = await first.result;
      expect(r).toMatchObject({ workspaceId: 'demo', serverStarted: false, cohorts: expect.any(Number), findings: 3 });
      await checkReview(server.url, r);
      // A second demo reuses the workspace (its owner token is kept 0600) and reviews a new repo.
      expect(fs.statSync(path.join(dataDir, 'demo-owner-token')).mode & 0o777).toBe(0o600);
      const second = await runDemo(['--data-dir', dataDir, 'demo', '--url', server.url, '--json']).result;
      expect(second.workspaceId).toBe('demo');
      expect(second.repoId).not.toBe(r.repoId);
      await checkReview(server.url, second);
    } finally {
      await server.close();
    }
  }, 120_000);

  it('starts its own server when none answers, and keeps serving the review it printed', async () => {
    const dataDir = tempDir();
    const url = `http://127.0.0.1:${await freePort()}`;
    const { child, result } = runDemo(['--data-dir', dataDir, 'demo', '--url', url, '--json']);
    try {
      const r = await result;
      expect(r.serverStarted).toBe(true);
      expect(r.pageUrl.startsWith(url)).toBe(true);
      await checkReview(url, r);
    } finally {
      const exited = new Promise((res) => child.once('exit', res));
      child.kill('SIGTERM');
      await exited;
    }
  }, 120_000);
});
