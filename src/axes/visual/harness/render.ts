import { spawn } from 'node:child_process';
import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { z } from 'zod';
import { normalizeRepoPath, type GitRepo } from '../../../git/repo';
import type { ChangedPath, HarnessInput, HarnessName, HarnessOutcome } from './types';

export const DEFAULT_RENDER_TIMEOUT_MS = 120_000;
/** The repo-level configuration file, read from the base commit. */
export const REPO_CONFIG_FILE = '.review-ledger.json';

export interface RenderConfig {
  /** Shell command run at the root of a worktree; it writes PNGs under `outputDir`. */
  command: string;
  /** Repo-relative folder the command writes PNGs to; snapshotIds are paths relative to it. */
  outputDir: string;
  timeoutMs?: number;
  /**
   * Globs (`*` within a segment, `**` across) of the UI code the snapshots depend on: when given, the
   * harness only runs for a PR that changes a matching file. Absent: every PR runs it.
   */
  paths?: string[];
}

const repoConfigSchema = z.object({
  visual: z
    .object({
      renderCommand: z.string({ message: 'visual.renderCommand must be a string' }).min(1, 'visual.renderCommand must not be empty'),
      outputDir: z.string({ message: 'visual.outputDir must be a string' }).min(1, 'visual.outputDir must not be empty'),
      timeoutMs: z.number().int().positive('visual.timeoutMs must be a positive integer').max(3_600_000, 'visual.timeoutMs must be at most one hour').optional(),
      paths: z.array(z.string().min(1)).optional(),
    })
    .optional(),
});

/**
 * The render configuration: the one given by the caller (the repo's registration) or `visual` in
 * `.review-ledger.json` at the BASE commit. Read from the base so that a PR cannot choose the command
 * the host runs (it still runs the PR's code, which is what rendering means). Undefined when neither
 * configures rendering; a config that does not validate is an error naming the field.
 */
export async function loadRenderConfig(repo: GitRepo, baseSha: string, given?: RenderConfig): Promise<RenderConfig | { error: string } | undefined> {
  if (given) return given;
  const bytes = await repo.readFileAt(baseSha, REPO_CONFIG_FILE);
  if (!bytes) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(bytes.toString('utf8'));
  } catch (err) {
    return { error: `${REPO_CONFIG_FILE} is not valid JSON: ${(err as Error).message}` };
  }
  const parsed = repoConfigSchema.safeParse(json);
  if (!parsed.success) return { error: `${REPO_CONFIG_FILE}: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}` };
  const v = parsed.data.visual;
  return v ? { command: v.renderCommand, outputDir: v.outputDir, timeoutMs: v.timeoutMs, paths: v.paths } : undefined;
}

export function globToRegExp(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i];
    if (ch === '*' && glob[i + 1] === '*') {
      re += glob[i + 2] === '/' ? '(?:.*/)?' : '.*';
      i += glob[i + 2] === '/' ? 2 : 1;
    } else if (ch === '*') re += '[^/]*';
    else if (ch === '?') re += '[^/]';
    else re += ch.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  // A bare folder glob ("src/ui") covers everything under it.
  return new RegExp(`^${re}(?:/.*)?$`);
}

export function touchesPaths(changed: ChangedPath[], globs: string[] | undefined): boolean {
  if (!globs) return changed.length > 0;
  const res = globs.map(globToRegExp);
  return changed.some((f) => res.some((re) => re.test(f.path) || (f.oldPath !== undefined && re.test(f.oldPath))));
}

export type RenderRun = { ok: true; images: Map<string, Uint8Array> } | { ok: false; reason: string };

/**
 * Runs the command in a temporary detached worktree of `sha` and collects the PNGs it wrote. The
 * command runs in its own process group with a minimal environment (no server secrets); on timeout
 * the whole group is killed, and after it exits any stray background child of the group is killed too.
 * The worktree and its temporary folder are removed whatever happens.
 */
export async function renderAt(repo: GitRepo, sha: string, config: RenderConfig, side: 'base' | 'head'): Promise<RenderRun> {
  let outputDir: string;
  try {
    outputDir = normalizeRepoPath(config.outputDir);
  } catch (err) {
    return { ok: false, reason: `render outputDir "${config.outputDir}" is not a repo-relative folder: ${(err as Error).message}` };
  }
  const temp = await fs.mkdtemp(path.join(os.tmpdir(), 'rl-render-'));
  // git names a worktree's admin folder after the checkout's basename: a unique one keeps concurrent
  // renders of the same repo from racing for the same name.
  const tree = path.join(temp, path.basename(temp));
  try {
    try {
      await repo.addWorktree(sha, tree);
    } catch (err) {
      return { ok: false, reason: `could not check out ${side} ${sha.slice(0, 12)}: ${(err as Error).message.split('\n')[0]}` };
    }
    const timeoutMs = config.timeoutMs ?? DEFAULT_RENDER_TIMEOUT_MS;
    const run = await runCommand(config.command, tree, timeoutMs, { REVIEW_LEDGER_SIDE: side, REVIEW_LEDGER_SHA: sha, REVIEW_LEDGER_OUTPUT_DIR: path.join(tree, outputDir) });
    const at = `${side} (${sha.slice(0, 12)})`;
    if (run.timedOut) return { ok: false, reason: `render command timed out after ${timeoutMs} ms on ${at}` };
    if (run.code !== 0) return { ok: false, reason: `render command failed on ${at} with ${run.signal ? `signal ${run.signal}` : `exit code ${run.code}`}${run.stderr ? `: ${run.stderr}` : ''}` };
    const images = await collectPngs(path.join(tree, outputDir));
    if (!images) return { ok: false, reason: `render command wrote no ${outputDir}/ folder on ${at}` };
    return { ok: true, images };
  } finally {
    await repo.removeWorktree(tree);
    await fs.rm(temp, { recursive: true, force: true });
  }
}

interface CommandRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  stderr: string;
}

const STDERR_TAIL = 2000;

function runCommand(command: string, cwd: string, timeoutMs: number, extraEnv: Record<string, string>): Promise<CommandRun> {
  const env: Record<string, string> = { ...extraEnv };
  for (const key of ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TMPDIR', 'TERM']) if (process.env[key] !== undefined) env[key] = process.env[key]!;
  return new Promise((resolve) => {
    const child = spawn('sh', ['-c', command], { cwd, env, detached: true, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    let timedOut = false;
    const killGroup = () => {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        /* the group is already gone */
      }
    };
    child.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_TAIL);
    });
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, timeoutMs);
    const finish = (code: number | null, signal: NodeJS.Signals | null) => {
      clearTimeout(timer);
      killGroup();
      resolve({ code, signal, timedOut, stderr: stderr.trim() });
    };
    child.on('error', (err) => {
      stderr += err.message;
      finish(null, null);
    });
    // 'exit', not 'close': a background grandchild holding stderr open must not keep us waiting.
    child.on('exit', finish);
  });
}

/** PNGs under `dir` keyed by their path relative to it (posix); undefined when `dir` does not exist. */
async function collectPngs(dir: string): Promise<Map<string, Uint8Array> | undefined> {
  try {
    if (!(await fs.stat(dir)).isDirectory()) return undefined;
  } catch {
    return undefined;
  }
  const images = new Map<string, Uint8Array>();
  const entries = await fs.readdir(dir, { recursive: true, withFileTypes: true });
  const files = entries
    .filter((e) => e.isFile() && /\.png$/i.test(e.name))
    .map((e) => path.join(e.parentPath, e.name))
    .sort();
  for (const file of files) images.set(path.relative(dir, file).split(path.sep).join('/'), await fs.readFile(file));
  return images;
}

/** The render-command harness: the configured command in base and head worktrees. */
export async function collectRendered(input: HarnessInput, config: RenderConfig | { error: string } | undefined, harness: HarnessName = 'render'): Promise<HarnessOutcome> {
  if (!config) return { harness, status: 'not_applicable' };
  if ('error' in config) return { harness, status: 'unavailable', reason: config.error };
  if (!touchesPaths(input.changedFiles, config.paths)) return { harness, status: 'not_applicable' };
  const base = await renderAt(input.repo, input.baseSha, config, 'base');
  if (!base.ok) return { harness, status: 'unavailable', reason: base.reason };
  const head = await renderAt(input.repo, input.headSha, config, 'head');
  if (!head.ok) return { harness, status: 'unavailable', reason: head.reason };
  return { harness, status: 'ok', base: base.images, head: head.images };
}
