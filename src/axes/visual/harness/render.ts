import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { z } from 'zod';
import { normalizeRepoPath } from '../../../events/repo-path';
import { type GitRepo } from '../../../git/repo';
import { exportTree } from '../../../git/export-tree';
import type { ChangedPath, HarnessInput, HarnessName, HarnessOutcome } from './types';
import { defaultOperatorConfig, type RenderSandboxConfig } from '../../../operator-config';
import { limitReasonOf, runRenderCommand, sandboxUnavailableReason } from './sandbox';

/** The sandbox of a caller that names none: bubblewrap with the default limits (never unsandboxed). */
const defaultRenderSandbox = (): RenderSandboxConfig => defaultOperatorConfig('/nonexistent').sandbox;

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
  /** Set when rendering was asked for by a source the operator did not enable: unavailable with this. */
  refused?: string;
}

/** Bounds on a repository's own globs (they are matched against every changed file). */
const MAX_GLOBS = 100;
/** A repository's `.review-ledger.json` is parsed only up to this size. */
const MAX_REPO_CONFIG_BYTES = 256 * 1024;
const MAX_GLOB_CHARS = 500;

const repoConfigSchema = z.object({
  visual: z
    .object({
      renderCommand: z.string({ message: 'visual.renderCommand must be a string' }).min(1, 'visual.renderCommand must not be empty'),
      outputDir: z.string({ message: 'visual.outputDir must be a string' }).min(1, 'visual.outputDir must not be empty'),
      timeoutMs: z.number().int().positive('visual.timeoutMs must be a positive integer').max(3_600_000, 'visual.timeoutMs must be at most one hour').optional(),
      paths: z.array(z.string().min(1).max(MAX_GLOB_CHARS, `visual.paths: a glob of at most ${MAX_GLOB_CHARS} characters`)).max(MAX_GLOBS, `visual.paths: at most ${MAX_GLOBS} globs`).optional(),
    })
    .optional(),
});

/**
 * The render configuration. `given` is the operator's command for this repo (server configuration, never
 * a request field). Without one, `visual` in `.review-ledger.json` at the BASE commit is used only where
 * the operator enabled repo configuration for this repo (`allowRepoConfig`); read from the base so that
 * a PR cannot choose the command (it still runs the PR's code, which is what rendering means — in the
 * sandbox). A repo file asking for rendering where that is not enabled comes back `refused`, so the axis
 * says why nothing rendered. Undefined when nothing configures rendering; a config that does not
 * validate is an error naming the field.
 */
export async function loadRenderConfig(repo: GitRepo, baseSha: string, given?: RenderConfig, allowRepoConfig = false, configKey = 'this repo'): Promise<RenderConfig | { error: string } | undefined> {
  if (given) return given;
  const bytes = await repo.readFileAt(baseSha, REPO_CONFIG_FILE);
  if (!bytes) return undefined;
  if (bytes.length > MAX_REPO_CONFIG_BYTES) return allowRepoConfig ? { error: `${REPO_CONFIG_FILE} is ${bytes.length} bytes, more than the ${MAX_REPO_CONFIG_BYTES} a configuration file may take` } : undefined;
  let json: unknown;
  try {
    json = JSON.parse(bytes.toString('utf8'));
  } catch (err) {
    return allowRepoConfig ? { error: `${REPO_CONFIG_FILE} is not valid JSON: ${(err as Error).message}` } : undefined;
  }
  if (!allowRepoConfig) {
    const visual = (json as { visual?: { renderCommand?: unknown; paths?: unknown } } | null)?.visual;
    if (!visual || typeof visual !== 'object' || visual.renderCommand === undefined) return undefined;
    const paths = Array.isArray(visual.paths) && visual.paths.length <= MAX_GLOBS && visual.paths.every((p) => typeof p === 'string' && p.length <= MAX_GLOB_CHARS) ? (visual.paths as string[]) : undefined;
    return {
      command: '',
      outputDir: '.',
      paths,
      refused: `${REPO_CONFIG_FILE} asks for a render command, but the operator has not enabled repo configuration for ${configKey} (render.repos["${configKey}"].repoConfig in the server config file): a repository never chooses on its own what the host runs`,
    };
  }
  const parsed = repoConfigSchema.safeParse(json);
  if (!parsed.success) return { error: `${REPO_CONFIG_FILE}: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}` };
  const v = parsed.data.visual;
  return v ? { command: v.renderCommand, outputDir: v.outputDir, timeoutMs: v.timeoutMs, paths: v.paths } : undefined;
}

type GlobToken = { t: 'lit'; c: string } | { t: 'one' } | { t: 'star' } | { t: 'dstar' } | { t: 'dstarSlash' };

function globTokens(glob: string): GlobToken[] {
  const tokens: GlobToken[] = [];
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i];
    if (ch === '*' && glob[i + 1] === '*') {
      tokens.push(glob[i + 2] === '/' ? { t: 'dstarSlash' } : { t: 'dstar' });
      i += glob[i + 2] === '/' ? 2 : 1;
    } else if (ch === '*') tokens.push({ t: 'star' });
    else if (ch === '?') tokens.push({ t: 'one' });
    else tokens.push({ t: 'lit', c: ch });
  }
  return tokens;
}

/**
 * Whether `file` matches `glob` ("**" any folders, "*" within one segment, "?" one character; a bare
 * folder glob covers everything under it). The globs can come from a repository's `.review-ledger.json`,
 * so this is a set-of-positions walk — O(glob × path) — never a backtracking RegExp, which a glob such as
 * "*a*a*a*a*a*a*a*a*a*a*b" would make take hours on one file name, stalling the whole server.
 */
export function globMatches(glob: string, file: string, budget?: GlobMatchBudget): boolean {
  const n = file.length;
  const tokens = globTokens(glob);
  if (budget) {
    // Each token is one pass over the path: the work is known before it is done.
    budget.left -= (tokens.length + 1) * (n + 1);
    if (budget.left < 0) throw new GlobMatchBudgetExceeded();
  }
  let at = new Uint8Array(n + 1);
  at[0] = 1;
  for (const tok of tokens) {
    const next = new Uint8Array(n + 1);
    let any = false;
    if (tok.t === 'lit' || tok.t === 'one') {
      for (let j = 0; j < n; j++) if (at[j] && (tok.t === 'lit' ? file[j] === tok.c : file[j] !== '/')) next[j + 1] = 1;
    } else if (tok.t === 'star') {
      for (let j = 0; j <= n; j++) next[j] = at[j] || (j > 0 && next[j - 1] && file[j - 1] !== '/') ? 1 : 0;
    } else if (tok.t === 'dstar') {
      for (let j = 0; j <= n; j++) next[j] = at[j] || (j > 0 && next[j - 1]) ? 1 : 0;
    } else {
      // (?:.*/)? — stay, or consume anything ending in "/".
      let reached = false;
      for (let j = 0; j <= n; j++) {
        if (at[j]) reached = true;
        if (at[j] || (reached && j > 0 && file[j - 1] === '/')) next[j] = 1;
      }
    }
    for (let j = 0; j <= n && !any; j++) any = next[j] === 1;
    if (!any) return false;
    at = next;
  }
  for (let j = 0; j <= n; j++) if (at[j] && (j === n || file[j] === '/')) return true;
  return false;
}

/**
 * Steps (glob tokens × path characters) all of a PR's matches may take together, ~0.5 s at worst: 100
 * globs of 500 characters against thousands of 4,000-character paths (the PR names its paths) took
 * ~160 ms per changed file, minutes per PR. A real config of a few globs against 20,000 changed files
 * takes ~50 M (a 20 M budget refused it).
 */
export const GLOB_MATCH_STEPS = 200_000_000;
export interface GlobMatchBudget {
  left: number;
}
export class GlobMatchBudgetExceeded extends Error {
  constructor() {
    super(`visual.paths: matching these globs against this PR's changed files would take more than ${GLOB_MATCH_STEPS} steps`);
  }
}

/** Whether a changed file (or its old path) matches one of the globs; GlobMatchBudgetExceeded past GLOB_MATCH_STEPS. */
export function touchesPaths(changed: ChangedPath[], globs: string[] | undefined): boolean {
  if (!globs) return changed.length > 0;
  const budget: GlobMatchBudget = { left: GLOB_MATCH_STEPS };
  return changed.some((f) => globs.some((g) => globMatches(g, f.path, budget) || (f.oldPath !== undefined && globMatches(g, f.oldPath, budget))));
}

export type RenderRun = { ok: true; images: Map<string, Uint8Array> } | { ok: false; reason: string };

/**
 * Runs the command in a throwaway tree of `sha` (written from git objects), inside the render sandbox (sandbox.ts:
 * no network, no data dir, $HOME or other repos, resource limits, the whole process group killed at
 * the timeout), and collects the PNGs it wrote. The tree and its temporary folder are removed
 * whatever happens.
 */
export async function renderAt(repo: GitRepo, sha: string, config: RenderConfig, side: 'base' | 'head', sandbox: RenderSandboxConfig = defaultRenderSandbox()): Promise<RenderRun> {
  let outputDir: string;
  try {
    outputDir = normalizeRepoPath(config.outputDir);
  } catch (err) {
    return { ok: false, reason: `render outputDir "${config.outputDir}" is not a repo-relative folder: ${(err as Error).message}` };
  }
  const temp = await fs.mkdtemp(path.join(os.tmpdir(), 'rl-render-'));
  const tree = path.join(temp, 'tree');
  try {
    try {
      // Written from git objects by the server, not checked out by git: nothing the repo's config or
      // .gitattributes names runs on the host (src/git/export-tree.ts).
      await fs.mkdir(tree, { mode: 0o700 });
      await exportTree(repo, sha, tree);
    } catch (err) {
      return { ok: false, reason: `could not check out ${side} ${sha.slice(0, 12)}: ${(err as Error).message.split('\n')[0]}` };
    }
    const timeoutMs = config.timeoutMs ?? DEFAULT_RENDER_TIMEOUT_MS;
    const run = await runRenderCommand(sandbox, config.command, tree, timeoutMs, (root) => ({ REVIEW_LEDGER_SIDE: side, REVIEW_LEDGER_SHA: sha, REVIEW_LEDGER_OUTPUT_DIR: path.posix.join(root, outputDir) }));
    const at = `${side} (${sha.slice(0, 12)})`;
    if (run.timedOut) return { ok: false, reason: `render command timed out after ${timeoutMs} ms on ${at}` };
    if (run.code !== 0) {
      const limit = limitReasonOf(sandbox, run);
      const how = limit ? `${limit} on ${at}` : `failed on ${at} with ${run.signal ? `signal ${run.signal}` : `exit code ${run.code}`}`;
      return { ok: false, reason: `render command ${how}${run.stderr ? `: ${run.stderr}` : ''}` };
    }
    const collected = await collectPngs(tree, outputDir, sandbox.limits.outputBytes);
    if (collected === undefined) return { ok: false, reason: `render command wrote no ${outputDir}/ folder on ${at}` };
    if ('error' in collected) return { ok: false, reason: `${collected.error} on ${at}` };
    return { ok: true, images: collected };
  } finally {
    await fs.rm(temp, { recursive: true, force: true });
  }
}

/**
 * PNGs under `<tree>/<outputDir>` keyed by their path relative to it (posix); undefined when the folder
 * does not exist. The server reads them outside the sandbox, so nothing the command wrote may point it
 * elsewhere: the folder and every file must resolve inside the worktree (a symlink to the data dir is
 * refused), and the total is bounded.
 */
async function collectPngs(tree: string, outputDir: string, maxBytes: number): Promise<Map<string, Uint8Array> | { error: string } | undefined> {
  const realTree = await fs.realpath(tree);
  const inside = (p: string) => p === realTree || p.startsWith(realTree + path.sep);
  const dir = path.join(tree, outputDir);
  try {
    if (!(await fs.stat(dir)).isDirectory()) return undefined;
    if (!inside(await fs.realpath(dir))) return { error: `render output folder ${outputDir}/ leads outside the worktree` };
  } catch {
    return undefined;
  }
  const images = new Map<string, Uint8Array>();
  const entries = await fs.readdir(dir, { recursive: true, withFileTypes: true });
  const files = entries
    .filter((e) => e.isFile() && /\.png$/i.test(e.name))
    .map((e) => path.join(e.parentPath, e.name))
    .sort();
  let total = 0;
  for (const file of files) {
    if (!inside(await fs.realpath(file))) return { error: `render output ${path.relative(dir, file)} leads outside the worktree` };
    total += (await fs.lstat(file)).size;
    if (total > maxBytes) return { error: `render output exceeds the sandbox output limit of ${maxBytes} bytes` };
    images.set(path.relative(dir, file).split(path.sep).join('/'), await fs.readFile(file));
  }
  return images;
}

/** The render-command harness: the configured command in base and head worktrees, sandboxed. */
export async function collectRendered(input: HarnessInput, config: RenderConfig | { error: string } | undefined, harness: HarnessName = 'render', sandbox: RenderSandboxConfig = defaultRenderSandbox()): Promise<HarnessOutcome> {
  if (!config) return { harness, status: 'not_applicable' };
  if ('error' in config) return { harness, status: 'unavailable', reason: config.error };
  try {
    if (!touchesPaths(input.changedFiles, config.paths)) return { harness, status: 'not_applicable' };
  } catch (err) {
    if (err instanceof GlobMatchBudgetExceeded) return { harness, status: 'unavailable', reason: err.message };
    throw err;
  }
  if (config.refused) return { harness, status: 'unavailable', reason: config.refused };
  const noSandbox = await sandboxUnavailableReason(sandbox);
  if (noSandbox) return { harness, status: 'unavailable', reason: noSandbox };
  const base = await renderAt(input.repo, input.baseSha, config, 'base', sandbox);
  if (!base.ok) return { harness, status: 'unavailable', reason: base.reason };
  const head = await renderAt(input.repo, input.headSha, config, 'head', sandbox);
  if (!head.ok) return { harness, status: 'unavailable', reason: head.reason };
  return { harness, status: 'ok', base: base.images, head: head.images };
}
