import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import type { RenderSandboxConfig } from '../../../operator-config';

/**
 * Where rendering PR code runs (SPEC §16): rendering executes the PR's code by definition, like CI, so a
 * render command runs inside bubblewrap — every namespace unshared (no network but a private loopback,
 * its own pids, no host IPC), a filesystem of read-only /usr and a few /etc files, a private size-bounded
 * /tmp, and the throwaway worktree as the only writable host folder (at /work/tree, so not even its host
 * path shows). The data dir, $HOME, other repos and the registered repo itself are simply not there.
 * Rlimits bound CPU time, private memory, processes and file size; the caller bounds wall time and kills
 * the whole process group, and bubblewrap's pid namespace takes every descendant with it.
 */

/** The worktree's path inside the sandbox. */
export const SANDBOX_TREE = '/work/tree';

export interface CommandRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  stderr: string;
}

const STDERR_TAIL = 2000;

/** Host /etc files a toolchain may need to start; nothing that holds a secret. */
const ETC_FILES = ['alternatives', 'ld.so.cache', 'ld.so.conf', 'ld.so.conf.d', 'fonts', 'ssl', 'ca-certificates', 'localtime', 'passwd', 'group', 'nsswitch.conf', 'hosts', 'mime.types', 'os-release'];
/** Merged-/usr systems make these symlinks into /usr; elsewhere they are folders bound read-only. */
const ROOT_LINKS = ['bin', 'sbin', 'lib', 'lib32', 'lib64', 'libx32'];

const runsAsRoot = () => process.getuid?.() === 0;

function filesystemArgs(cfg: RenderSandboxConfig, tree: string): string[] {
  const args = ['--ro-bind', '/usr', '/usr'];
  for (const name of ROOT_LINKS) {
    const p = `/${name}`;
    try {
      const st = fs.lstatSync(p);
      if (st.isSymbolicLink()) args.push('--symlink', fs.readlinkSync(p), p);
      else if (st.isDirectory()) args.push('--ro-bind', p, p);
    } catch {
      /* absent on this host */
    }
  }
  for (const name of ETC_FILES) args.push('--ro-bind-try', `/etc/${name}`, `/etc/${name}`);
  // The node that runs the server, when it lives outside /usr (nvm, a tarball): render scripts use it.
  const nodePrefix = path.dirname(path.dirname(process.execPath));
  const extra = [...(nodePrefix.startsWith('/usr/') || nodePrefix === '/usr' ? [] : [nodePrefix]), ...cfg.readOnlyPaths];
  for (const p of extra) args.push('--ro-bind-try', p, p);
  args.push('--proc', '/proc', '--dev', '/dev', '--size', String(cfg.limits.tmpBytes), '--tmpfs', '/tmp');
  args.push('--bind', tree, SANDBOX_TREE, '--chdir', SANDBOX_TREE);
  return args;
}

function limitArgs(cfg: RenderSandboxConfig): string[] {
  const l = cfg.limits;
  // Set inside the sandbox: RLIMIT_NPROC then counts the processes of the sandbox's own user namespace.
  return ['prlimit', `--nproc=${l.processes}`, `--cpu=${l.cpuSeconds}`, `--data=${l.memoryBytes}`, `--fsize=${l.fileBytes}`, '--core=0', '--'];
}

export function bwrapArgs(cfg: RenderSandboxConfig, tree: string, command: string): string[] {
  return ['--unshare-all', '--unshare-user', '--die-with-parent', '--new-session', ...filesystemArgs(cfg, tree), ...limitArgs(cfg), 'sh', '-c', command];
}

/** The uid/gid the sandbox runs as: the server's own, or (when the server is root) an unprivileged one. */
function identityOf(cfg: RenderSandboxConfig): { uid?: number; gid?: number } {
  return runsAsRoot() ? { uid: cfg.uid, gid: cfg.uid } : {};
}

const probes = new Map<string, Promise<string | null>>();

/**
 * Whether the sandbox can run here: null when it can, else why not. Probed once per configuration by
 * running `true` in the same sandbox a render gets (bwrap missing, user namespaces disabled, no prlimit).
 */
export function sandboxUnavailableReason(cfg: RenderSandboxConfig): Promise<string | null> {
  if (cfg.kind === 'none') return Promise.resolve(null);
  const key = JSON.stringify([cfg.bwrap, cfg.uid, cfg.readOnlyPaths]);
  let probe = probes.get(key);
  if (!probe) {
    probe = (async () => {
      const dir = await fsp.mkdtemp(path.join(process.env.TMPDIR ?? '/tmp', 'rl-sandbox-probe-'));
      try {
        if (runsAsRoot()) await fsp.chown(dir, cfg.uid, cfg.uid);
        const run = await spawnGroup(cfg.bwrap, bwrapArgs(cfg, dir, 'exit 0'), '/', minimalEnv({}), 15_000, identityOf(cfg));
        if (run.code === 0) return null;
        return `no render sandbox on this host: bubblewrap (${cfg.bwrap}) could not start a sandbox (${run.stderr || (run.timedOut ? 'timed out' : `exit ${run.code ?? run.signal}`)}); install bubblewrap with user namespaces enabled, or run the server with --unsafe-render-without-sandbox if every repo is trusted`;
      } finally {
        await fsp.rm(dir, { recursive: true, force: true });
      }
    })();
    probes.set(key, probe);
  }
  return probe;
}

export function minimalEnv(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = { PATH: '/usr/local/bin:/usr/bin:/bin', LANG: process.env.LANG ?? 'C.UTF-8', HOME: '/tmp', TMPDIR: '/tmp', ...extra };
  if (process.env.LC_ALL) env.LC_ALL = process.env.LC_ALL;
  return env;
}

/**
 * Runs `command` for the render harness: in the sandbox, or (kind "none", the operator's explicit unsafe
 * choice) directly with `sh -c` in the host worktree. `env` gets the worktree root as the command sees
 * it (/work/tree in the sandbox), so the paths it hands over are the command's own.
 */
export async function runRenderCommand(cfg: RenderSandboxConfig, command: string, tree: string, timeoutMs: number, env: (root: string) => Record<string, string>): Promise<CommandRun> {
  if (cfg.kind === 'none') {
    const hostEnv: Record<string, string> = { ...env(tree) };
    for (const key of ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TMPDIR', 'TERM']) if (process.env[key] !== undefined) hostEnv[key] = process.env[key]!;
    return spawnGroup('sh', ['-c', command], tree, hostEnv, timeoutMs, {});
  }
  if (runsAsRoot()) await chownTree(path.dirname(tree), cfg.uid);
  const run = await spawnGroup(cfg.bwrap, bwrapArgs(cfg, tree, command), tree, minimalEnv(env(SANDBOX_TREE)), timeoutMs, identityOf(cfg));
  return run;
}

/** Why a sandboxed run ended, in words, for exit statuses that are a limit's signal (128 + n). */
export function limitReasonOf(cfg: RenderSandboxConfig, run: CommandRun): string | undefined {
  if (cfg.kind === 'none' && !run.signal) return undefined;
  const sig = run.signal ?? (run.code !== null && run.code > 128 ? signalName(run.code - 128) : undefined);
  if (sig === 'SIGXCPU') return `exceeded the sandbox CPU limit of ${cfg.limits.cpuSeconds} s`;
  if (sig === 'SIGXFSZ') return `exceeded the sandbox file-size limit of ${cfg.limits.fileBytes} bytes`;
  if (sig) return `was killed by ${sig}`;
  return undefined;
}

function signalName(n: number): string | undefined {
  return Object.entries(os.constants.signals as Record<string, number>).find(([, v]) => v === n)?.[0];
}

async function chownTree(dir: string, uid: number): Promise<void> {
  await fsp.lchown(dir, uid, uid);
  const entries = await fsp.readdir(dir, { recursive: true, withFileTypes: true });
  for (const e of entries) await fsp.lchown(path.join(e.parentPath, e.name), uid, uid);
}

/**
 * Spawns in a new process group; on timeout the whole group gets SIGKILL, and after the leader exits any
 * stray member of the group is killed too. Resolves on 'exit', not 'close': a background grandchild
 * holding stderr open must not keep us waiting.
 */
function spawnGroup(file: string, args: string[], cwd: string, env: Record<string, string>, timeoutMs: number, identity: { uid?: number; gid?: number }): Promise<CommandRun> {
  return new Promise((resolve) => {
    const child = spawn(file, args, { cwd, env, detached: true, stdio: ['ignore', 'ignore', 'pipe'], ...identity });
    let stderr = '';
    let timedOut = false;
    const killGroup = () => {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        /* the group is already gone */
      }
    };
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_TAIL);
    });
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, timeoutMs);
    let settled = false;
    const finish = (code: number | null, signal: NodeJS.Signals | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      killGroup();
      resolve({ code, signal, timedOut, stderr: stderr.trim() });
    };
    child.on('error', (err) => {
      stderr += err.message;
      finish(null, null);
    });
    child.on('exit', finish);
  });
}
