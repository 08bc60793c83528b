import '../axes/visual/support/esm';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { GitRepo } from '../../src/git/repo';
import { computeVisual } from '../../src/axes/visual';
import { closeSharedDiffPools } from '../../src/axes/visual/pool';
import { GitFixture } from '../support/git-fixture';

/**
 * SPEC §16 "a tenant role never grants host execution": a render command runs the PR's code, so it runs
 * in the sandbox — no view of the data dir, $HOME or other repos, nothing writable but its worktree, no
 * network, a bounded process count — and when the sandbox cannot run, nothing runs.
 */
afterAll(() => closeSharedDiffPools());

describe('the render sandbox contains what a render command tries', () => {
  let fx: GitFixture;
  let repo: GitRepo;
  let baseSha: string;
  let workspaceDir: string;
  let hostDir: string;
  const secret = randomBytes(16).toString('hex');

  beforeEach(async () => {
    // Stands for the server's data dir: a key file the server user can read.
    hostDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-host-'));
    fs.writeFileSync(path.join(hostDir, 'server.key'), `${secret}\n`, { mode: 0o600 });
    workspaceDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-sandbox-ws-'));
    fx = new GitFixture('rl-sandbox-repo-');
    fx.write('src/ui.txt', 'one\n');
    baseSha = fx.commit('base');
    repo = await GitRepo.open(fx.dir);
  });
  afterEach(() => {
    repo.close();
    fx.cleanup();
    fs.rmSync(workspaceDir, { recursive: true, force: true });
    fs.rmSync(hostDir, { recursive: true, force: true });
  });

  const render = async (command: string, extra: Record<string, unknown> = {}) => {
    fx.write('src/ui.txt', `${Math.random()}\n`);
    const headSha = fx.commit('head');
    return computeVisual({ repo, baseSha, headSha, changedFiles: await repo.diffNameStatus(baseSha, headSha), workspaceDir, renderCommand: { command, outputDir: 'out', timeoutMs: 20_000 }, ...extra });
  };

  it('cannot read the server key (the data dir is not in the sandbox), and says so', async () => {
    const v = await render(`cat ${path.join(hostDir, 'server.key')} >&2 && mkdir -p out || exit 5`);
    expect(v.status).toBe('unavailable');
    expect(v.reason).toMatch(/render command failed on base \([0-9a-f]{12}\) with exit code 5: .*No such file or directory/);
    expect(JSON.stringify(v)).not.toContain(secret);
  });

  it('cannot read the registered repo itself or $HOME', async () => {
    const home = os.homedir();
    const v = await render(`ls ${fx.dir}/.git >&2 || ls ${home} >&2 || { echo "neither repo nor home visible" >&2; exit 6; }`);
    expect(v.reason).toMatch(/exit code 6: (?:.|\n)*neither repo nor home visible/);
  });

  it('cannot write outside its worktree', async () => {
    const target = path.join(hostDir, 'pwned');
    const v = await render(`touch ${target} 2>/dev/null; mkdir -p out; test -e ${target} && exit 0 || exit 7`);
    expect(fs.existsSync(target)).toBe(false);
    expect(v.reason).toMatch(/exit code 7/);
  });

  it('cannot open a socket to the host (no network but its own loopback)', async () => {
    let connections = 0;
    const server = net.createServer((s) => {
      connections++;
      s.destroy();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as net.AddressInfo).port;
    try {
      const script = `require('net').connect(${port}, '127.0.0.1').on('connect', () => process.exit(0)).on('error', (e) => { console.error('socket: ' + e.code); process.exit(8); })`;
      const v = await render(`node -e "${script.replace(/"/g, '\\"')}"`);
      expect(connections).toBe(0);
      expect(v.reason).toMatch(/exit code 8: socket: ECONNREFUSED/);
    } finally {
      server.close();
    }
  });

  it('cannot start more processes than its limit', async () => {
    const v = await render('for i in $(seq 1 100); do sleep 30 & done; wait', { renderSandbox: { kind: 'bwrap', bwrap: 'bwrap', readOnlyPaths: [], uid: 65534, limits: { cpuSeconds: 30, memoryBytes: 2 ** 31, processes: 16, fileBytes: 2 ** 24, outputBytes: 2 ** 24, tmpBytes: 2 ** 24 } } });
    expect(v.status).toBe('unavailable');
    expect(v.reason).toMatch(/Cannot fork|Resource temporarily unavailable/);
  });

  it('with no usable sandbox nothing runs: the harness is unavailable with that reason', async () => {
    const marker = path.join(hostDir, 'ran');
    const v = await render(`touch ${marker}`, { renderSandbox: { kind: 'bwrap', bwrap: path.join(hostDir, 'no-such-bwrap'), readOnlyPaths: [], uid: 65534, limits: { cpuSeconds: 30, memoryBytes: 2 ** 31, processes: 64, fileBytes: 2 ** 24, outputBytes: 2 ** 24, tmpBytes: 2 ** 24 } } });
    expect(fs.existsSync(marker)).toBe(false);
    expect(v.status).toBe('unavailable');
    expect(v.reason).toMatch(/no render sandbox on this host: bubblewrap .* could not start a sandbox.*--unsafe-render-without-sandbox/);
  });

  it('a symlinked output folder cannot make the server read host files', async () => {
    fs.writeFileSync(path.join(hostDir, 'leak.png'), 'not for the tenant');
    const v = await render(`ln -s ${hostDir} out`);
    expect(v.status).toBe('unavailable');
    expect(v.reason).toMatch(/leads outside the worktree|wrote no out\/ folder/);
    expect(v.snapshots).toEqual([]);
  });
});
