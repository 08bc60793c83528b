import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from 'pg';

/**
 * A real PgBouncer (the Debian package's binary) in front of the test PostgreSQL, in a child process:
 * what operators put between servers and the database. `pool_mode` is PgBouncer's: `session` (its
 * default: one server session per client connection), `transaction` or `statement` (a server session
 * per transaction or statement, handed to whichever client asks next).
 */
export type PoolMode = 'session' | 'transaction' | 'statement';

const CANDIDATES = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer'];

/** The binary's path, or null when PgBouncer is not installed (`.ci/run` installs it). */
export function pgbouncerBinary(): string | null {
  for (const c of CANDIDATES) if (fs.existsSync(c)) return c;
  const which = spawnSync('sh', ['-c', 'command -v pgbouncer'], { encoding: 'utf8' });
  return which.status === 0 && which.stdout.trim() ? which.stdout.trim() : null;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

export class PgBouncer {
  private constructor(
    private readonly child: ChildProcess,
    private readonly dir: string,
    readonly port: number,
    private readonly output: string[],
  ) {}

  /** Starts PgBouncer for every database of `target` (trust auth, as the local test server) and waits until it accepts. */
  static async start(target: string, mode: PoolMode): Promise<PgBouncer> {
    const binary = pgbouncerBinary();
    if (!binary) throw new Error('pgbouncer is not installed (apt-get install pgbouncer)');
    const t = new URL(target);
    const user = decodeURIComponent(t.username || 'postgres');
    const port = await freePort();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-pgbouncer-'));
    // PgBouncer will not run as root: it drops to the postgres user, which must read these files.
    fs.chmodSync(dir, 0o755);
    fs.writeFileSync(path.join(dir, 'users.txt'), `"${user}" ""\n`, { mode: 0o644 });
    fs.writeFileSync(
      path.join(dir, 'pgbouncer.ini'),
      [
        '[databases]',
        `* = host=${t.hostname} port=${t.port || 5432}`,
        '[pgbouncer]',
        'listen_addr = 127.0.0.1',
        `listen_port = ${port}`,
        'unix_socket_dir =',
        'auth_type = trust',
        `auth_file = ${path.join(dir, 'users.txt')}`,
        `pool_mode = ${mode}`,
        'max_client_conn = 200',
        'default_pool_size = 20',
        '',
      ].join('\n'),
      { mode: 0o644 },
    );
    const args = [path.join(dir, 'pgbouncer.ini')];
    if (process.getuid?.() === 0) args.unshift('-u', 'postgres');
    const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const output: string[] = [];
    child.stdout!.on('data', (d) => output.push(String(d)));
    child.stderr!.on('data', (d) => output.push(String(d)));
    const bouncer = new PgBouncer(child, dir, port, output);
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`pgbouncer exited ${child.exitCode}: ${output.join('').slice(-2000)}`);
      const c = new Client({ connectionString: bouncer.url(t.pathname.slice(1) || 'postgres', target), connectionTimeoutMillis: 2000 });
      c.on('error', () => undefined);
      try {
        await c.connect();
        await c.query('SELECT 1');
        await c.end();
        return bouncer;
      } catch (err) {
        await c.end().catch(() => undefined);
        if (Date.now() > deadline) {
          await bouncer.stop();
          throw new Error(`pgbouncer did not accept within 30 s (${(err as Error).message}): ${output.join('').slice(-2000)}`);
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  }

  /** `target`'s connection string with host and port pointing at this PgBouncer, for `database`. */
  url(database: string, target: string): string {
    const u = new URL(target);
    u.hostname = '127.0.0.1';
    u.port = String(this.port);
    u.pathname = `/${database}`;
    return u.toString();
  }

  async stop(): Promise<void> {
    if (this.child.exitCode === null) {
      const exited = new Promise((r) => this.child.once('exit', r));
      this.child.kill('SIGTERM'); // PgBouncer's immediate shutdown (SIGINT waits for its clients)
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([exited, new Promise((r) => (timer = setTimeout(r, 5000)))]);
      clearTimeout(timer);
      if (this.child.exitCode === null) this.child.kill('SIGKILL');
    }
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
