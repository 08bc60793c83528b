import { execFile, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { startServer } from '../../src/server/bootstrap';
import { LOCK_FILE } from '../../src/server/data-dir-lock';

jest.setTimeout(240_000);
const ROOT = path.resolve(__dirname, '../..');

/** `review-ledger serve …` as users run it; resolves with its exit code and output. */
async function serve(dataDir: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ['-r', './tools/ts-register.js', 'src/cli/main.ts', '--data-dir', dataDir, ...args], { cwd: ROOT, encoding: 'utf8', timeout: 180_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** One line `error [code]: message`, no stack frame, no ANSI colour. */
const ONE_LINE = /^error \[[a-z_]+\]: [^\n]+\n$/;

describe('start-up errors print `error [code]: message` and exit non-zero', () => {
  let dir: string;
  let taken: net.Server;
  let busyPort: number;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-startup-errors-'));
    fs.writeFileSync(path.join(dir, 'bad.json'), '{not json');
    taken = net.createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    busyPort = (taken.address() as net.AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((r) => taken.close(r));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a bad port, a bad config file and a port in use: one line each, exit 1', async () => {
    const [badPort, badConfig, inUse] = await Promise.all([
      serve(path.join(dir, 'a'), 'serve', '--port', '99999'),
      serve(path.join(dir, 'b'), '--config', path.join(dir, 'bad.json'), 'serve', '--port', '0'),
      serve(path.join(dir, 'c'), 'serve', '--port', String(busyPort)),
    ]);
    expect(badPort).toMatchObject({ code: 1, stderr: 'error [invalid_port]: port: must be an integer 0–65535, got 99999\n' });
    expect(badConfig.code).toBe(1);
    expect(badConfig.stderr).toMatch(/^error \[invalid_config\]: config: cannot read .*bad\.json: /);
    expect(inUse.code).toBe(1);
    expect(inUse.stderr).toBe(`error [port_in_use]: port: 127.0.0.1:${busyPort} is in use by another process (choose another with --port or REVIEW_LEDGER_PORT)\n`);
    for (const r of [badPort, badConfig, inUse]) {
      expect(r.stderr).toMatch(ONE_LINE);
      expect(r.stderr).not.toMatch(/\x1b\[|\n\s+at /);
    }
    // A port in use is refused before anything is written: no data dir, no lock, no owner token (issue 38).
    expect(fs.existsSync(path.join(dir, 'c'))).toBe(false);
  });
});

describe('one server per SQLite data dir', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-lock-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('a second server on the same data dir refuses with the holder’s pid (in process and from the CLI); after close a new one starts', async () => {
    const first = await startServer({ dataDir: dir, port: 0, store: 'sqlite' });
    try {
      expect(JSON.parse(fs.readFileSync(path.join(dir, LOCK_FILE), 'utf8'))).toMatchObject({ pid: process.pid });
      await expect(startServer({ dataDir: dir, port: 0, store: 'sqlite' })).rejects.toMatchObject({ code: 'data_dir_locked', message: expect.stringContaining(`pid ${process.pid}`) });
      const second = await serve(dir, 'serve', '--port', '0');
      expect(second.code).toBe(1);
      expect(second.stderr).toMatch(ONE_LINE);
      expect(second.stderr).toContain(`error [data_dir_locked]: data dir: ${path.resolve(dir)} is in use by another review-ledger server (pid ${process.pid}`);
    } finally {
      await first.close();
    }
    expect(fs.existsSync(path.join(dir, LOCK_FILE))).toBe(false);
    const again = await startServer({ dataDir: dir, port: 0, store: 'sqlite' });
    await again.close();
  });

  it('a stale lock (its pid no longer runs, e.g. a killed server) is taken over', async () => {
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    const deadPid = Number(dead.stdout);
    fs.writeFileSync(path.join(dir, LOCK_FILE), JSON.stringify({ pid: deadPid, since: '2026-01-01T00:00:00.000Z' }));
    const notes: string[] = [];
    const write = process.stderr.write;
    process.stderr.write = ((chunk: string) => (notes.push(String(chunk)), true)) as typeof process.stderr.write;
    let server;
    try {
      server = await startServer({ dataDir: dir, port: 0, store: 'sqlite' });
    } finally {
      process.stderr.write = write;
    }
    try {
      expect(notes.join('')).toContain(`taking over the stale lock ${path.join(dir, LOCK_FILE)} of pid ${deadPid}, which no longer runs`);
      expect(JSON.parse(fs.readFileSync(path.join(dir, LOCK_FILE), 'utf8')).pid).toBe(process.pid);
    } finally {
      await server.close();
    }
  });
});
