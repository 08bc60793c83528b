import { execFile, spawn, ChildProcessWithoutNullStreams } from 'node:child_process';
import { promisify } from 'node:util';
import * as path from 'node:path';
import { DomainError } from '../domain-error';
import { normalizeRepoPath } from '../events/repo-path';
import { assertConfinedGitDir, assertSafeRepoConfig } from './confinement';

const execFileAsync = promisify(execFile);

export interface TreeEntry { path: string; mode: string; type: 'blob' | 'tree' | 'commit'; sha: string; }
export type ChangeStatus = 'added' | 'modified' | 'deleted' | 'renamed' | 'copied' | 'type_changed';
export interface ChangedFile { status: ChangeStatus; path: string; oldPath?: string; similarity?: number; }

/**
 * Config that makes git run a program is neutralized on every invocation (a registered repo's
 * `.git/config` is not the server's to trust: a cloned or downloaded repo may carry one): hooks,
 * fsmonitor, signature checks, external diff, textconv and filter drivers. Passed as
 * GIT_CONFIG_COUNT/KEY/VALUE (command-line scope, which beats the repo's own), so a driver name holding
 * "=" or "." cannot split the key the way `-c k=v` would.
 */
const HARDENED_CONFIG: ReadonlyArray<[string, string]> = [
  ['core.hooksPath', '/dev/null'],
  ['core.fsmonitor', 'false'],
  ['core.untrackedCache', 'false'],
  ['log.showSignature', 'false'],
  ['diff.external', ''],
  ['core.pager', 'cat'],
  ['uploadpack.packObjectsHook', ''],
  ['protocol.ext.allow', 'never'],
  // A folder that merely looks like a git dir (HEAD, objects, refs, a config) is never discovered as a
  // repository: only a work tree's .git is (a tenant could commit such a folder into its own clone).
  ['safe.bareRepository', 'explicit'],
];
const DRIVER_KEYS: Record<string, string[]> = { filter: ['smudge', 'clean', 'process'], diff: ['textconv', 'command'], merge: ['driver'] };

/** The environment git runs with: the base overrides plus an empty command for every configured driver. */
export function hardenedGitEnv(drivers: Array<{ section: string; name: string }> = []): NodeJS.ProcessEnv {
  const pairs: Array<[string, string]> = [...HARDENED_CONFIG];
  for (const d of drivers) {
    for (const k of DRIVER_KEYS[d.section] ?? []) pairs.push([`${d.section}.${d.name}.${k}`, '']);
    if (d.section === 'filter') pairs.push([`filter.${d.name}.required`, 'false']);
  }
  const env: NodeJS.ProcessEnv = { ...process.env, GIT_CONFIG_COUNT: String(pairs.length), GIT_TERMINAL_PROMPT: '0' };
  // Not inherited from the server's environment either: no external diff program, no pager.
  delete env.GIT_EXTERNAL_DIFF;
  delete env.GIT_PAGER;
  pairs.forEach(([k, v], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = k;
    env[`GIT_CONFIG_VALUE_${i}`] = v;
  });
  return env;
}

/** Driver names (filter.<name>.*, diff.<name>.*, merge.<name>.*) the repo's config defines, read without running anything. */
async function configuredDrivers(root: string): Promise<Array<{ section: string; name: string }>> {
  let out = '';
  try {
    out = (await execFileAsync('git', ['config', '-z', '--name-only', '--get-regexp', '^(filter|diff|merge)\\.'], { cwd: root, env: hardenedGitEnv(), encoding: 'utf8' })).stdout;
  } catch {
    return []; // exit 1: none configured
  }
  const drivers = new Map<string, { section: string; name: string }>();
  for (const key of out.split('\0')) {
    const first = key.indexOf('.');
    const last = key.lastIndexOf('.');
    if (first < 0 || last <= first) continue;
    const d = { section: key.slice(0, first).toLowerCase(), name: key.slice(first + 1, last) };
    drivers.set(`${d.section}\0${d.name}`, d);
  }
  return [...drivers.values()];
}

/** Objects larger than this are not read into memory (readObject answers null): no source file, spec or golden is this big. */
export const MAX_OBJECT_BYTES = 64 * 1024 * 1024;

interface PendingRead { resolve: (b: Buffer | null) => void; reject: (e: Error) => void; }

/**
 * Git access through the real `git` binary. Blobs go through one long-lived `git cat-file --batch`
 * process (one fork per repo instead of one per file); everything else is a short `git` call.
 */
/**
 * A remote URL with any credential it embeds (`https://user:token@host/…`) replaced by `***`, for
 * anything shown or stored: errors, responses, events, logs. scp-like `git@host:` names no secret.
 */
export function redactCredentials(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/)[^/@\s]+@/gi, '$1***@');
}

/**
 * Bytes of one git command's output the server holds in memory (a diff, a log). Was 256 MiB: one PR's
 * diff could take that much of the server; a diff past 64 MiB is no longer something to review by hand.
 */
export const GIT_MAX_OUTPUT_BYTES = 64 * 1024 * 1024;

export class GitRepo {
  private catFile?: ChildProcessWithoutNullStreams;
  private queue: PendingRead[] = [];
  private header: Buffer = Buffer.alloc(0);
  private body?: { size: number; got: number; data?: Buffer };

  private constructor(readonly root: string, private readonly env: NodeJS.ProcessEnv) {}

  /**
   * Opens the work tree containing `dir`. Refused unless its git dir is exactly `<top>/.git`, a real
   * directory whose data lives inside it (`repo_git_dir_refused`), and its own config names no program and
   * includes no other file (`repo_config_refused`) — checked at every open, not only at registration, since
   * the folder may change after it.
   */
  static async open(dir: string): Promise<GitRepo> {
    const abs = path.resolve(dir);
    let lines: string[];
    try {
      lines = (await execFileAsync('git', ['rev-parse', '--path-format=absolute', '--show-toplevel', '--git-dir', '--git-common-dir'], { cwd: abs, env: hardenedGitEnv() })).stdout.split('\n');
    } catch (err) {
      const stderr = String((err as { stderr?: unknown }).stderr ?? '');
      if (stderr.includes('safe.bareRepository')) {
        throw new DomainError('repo_git_dir_refused', `path: "${dir}" is a git directory itself, not a work tree with a .git directory; a registered repo's git dir is exactly <top>/.git`);
      }
      throw new DomainError('not_a_git_repo', `path: "${dir}" is not a git work tree`);
    }
    const [top, gitDir, commonDir] = lines;
    if (!top || !gitDir || !commonDir) throw new DomainError('not_a_git_repo', `path: "${dir}" is not a git work tree`);
    const realGit = await assertConfinedGitDir(top, gitDir, commonDir);
    await assertSafeRepoConfig(realGit, hardenedGitEnv());
    return new GitRepo(top, hardenedGitEnv(await configuredDrivers(top)));
  }

  /** Runs git in the repo; output past `maxBuffer` (default GIT_MAX_OUTPUT_BYTES) is refused, git killed. */
  async git(args: string[], opts: { maxBuffer?: number; cwd?: string; signal?: AbortSignal } = {}): Promise<string> {
    const limit = opts.maxBuffer ?? GIT_MAX_OUTPUT_BYTES;
    try {
      const { stdout } = await execFileAsync('git', args, { cwd: opts.cwd ?? this.root, env: this.env, maxBuffer: limit, encoding: 'utf8', signal: opts.signal });
      return stdout;
    } catch (err) {
      if (opts.signal?.aborted) throw new DomainError('request_cancelled', `git ${args[0]}: stopped, the client that asked for it went away`);
      if ((err as { code?: unknown }).code === 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER') {
        throw new DomainError('git_output_too_large', `git ${args[0]}: output larger than ${limit} bytes (${Math.round(limit / 1024 / 1024)} MiB), more than the server reads into memory for one command; the change is too large to analyse`, { limitBytes: limit });
      }
      throw err;
    }
  }

  async revParse(ref: string): Promise<string> {
    if (ref.startsWith('-')) throw new DomainError('invalid_ref', `ref: must not start with "-" ("${ref}")`);
    try {
      return (await this.git(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`])).trim();
    } catch {
      throw new DomainError('unknown_commit', `commit: "${ref}" does not name a commit in ${this.root}`);
    }
  }

  /** Committer date of a commit (ISO-8601, strict). */
  async commitDate(ref: string): Promise<string> {
    const sha = await this.revParse(ref);
    return (await this.git(['show', '-s', '--format=%cI', sha])).trim();
  }

  async remoteUrl(name = 'origin'): Promise<string | null> {
    try {
      return (await this.git(['remote', 'get-url', name])).trim() || null;
    } catch {
      return null;
    }
  }

  /**
   * Every blob and submodule of `commit`'s tree, recursively, as `git ls-tree -r --full-tree` lists them. For
   * a full object id the tree objects are read through the long-lived cat-file process (a cold index
   * starts with this; spawning git ls-tree cost 5–40 ms of it, the more the busier the machine); anything
   * else (a ref name, an unreadable tree) asks git ls-tree.
   */
  async lsTree(commit: string): Promise<TreeEntry[]> {
    const hashBytes = /^[0-9a-f]{40}$/.test(commit) ? 20 : /^[0-9a-f]{64}$/.test(commit) ? 32 : 0;
    if (hashBytes) {
      const entries = await this.treeEntries(`${commit}^{tree}`, '', hashBytes);
      if (entries) return entries;
    }
    const out = await this.git(['ls-tree', '-r', '-z', '--full-tree', commit]);
    const entries: TreeEntry[] = [];
    for (const rec of out.split('\0')) {
      if (!rec) continue;
      const tab = rec.indexOf('\t');
      const [mode, type, sha] = rec.slice(0, tab).split(' ');
      entries.push({ mode, type: type as TreeEntry['type'], sha, path: rec.slice(tab + 1) });
    }
    return entries;
  }

  /**
   * One tree object's entries, subtrees expanded in place (ls-tree -r's order: the tree's own order,
   * depth first), all subtrees of a level requested at once; null when any tree cannot be read.
   */
  private async treeEntries(spec: string, prefix: string, hashBytes: number): Promise<TreeEntry[] | null> {
    const data = await this.readObject(spec);
    if (!data) return null;
    const own: Array<TreeEntry | Promise<TreeEntry[] | null>> = [];
    for (let off = 0; off < data.length; ) {
      const space = data.indexOf(32, off);
      const nul = data.indexOf(0, space + 1);
      if (space < 0 || nul < 0 || nul + 1 + hashBytes > data.length) return null;
      const mode = data.toString('latin1', off, space);
      const name = data.toString('utf8', space + 1, nul);
      const sha = data.toString('hex', nul + 1, nul + 1 + hashBytes);
      off = nul + 1 + hashBytes;
      const entryPath = prefix + name;
      if (mode === '40000') {
        // Observed now: an early return (or git dying) must not leave a rejection unhandled; awaited below.
        const sub = this.treeEntries(sha, `${entryPath}/`, hashBytes);
        sub.catch(() => undefined);
        own.push(sub);
      }
      else own.push({ mode, type: mode === '160000' ? 'commit' : 'blob', sha, path: entryPath });
    }
    const out: TreeEntry[] = [];
    for (const e of own) {
      if (!(e instanceof Promise)) {
        out.push(e);
        continue;
      }
      const sub = await e;
      if (!sub) return null;
      for (const x of sub) out.push(x);
    }
    return out;
  }

  /** Changed files between two commits, with rename detection. */
  async diffNameStatus(base: string, head: string): Promise<ChangedFile[]> {
    const out = await this.git(['diff', '--no-ext-diff', '--no-textconv', '--find-renames', '--name-status', '-z', base, head]);
    const parts = out.split('\0');
    const files: ChangedFile[] = [];
    for (let i = 0; i < parts.length; ) {
      const st = parts[i++];
      if (!st) continue;
      const code = st[0];
      if (code === 'R' || code === 'C') {
        const oldPath = parts[i++];
        const newPath = parts[i++];
        files.push({ status: code === 'R' ? 'renamed' : 'copied', path: newPath, oldPath, similarity: Number(st.slice(1)) || undefined });
      } else {
        const p = parts[i++];
        const status: ChangeStatus = code === 'A' ? 'added' : code === 'D' ? 'deleted' : code === 'T' ? 'type_changed' : 'modified';
        files.push({ status, path: p });
      }
    }
    return files;
  }

  /** Unified diff between two commits (optionally for some paths), `context` lines of context. */
  async diffPatch(base: string, head: string, paths: string[] = [], context = 3, signal?: AbortSignal): Promise<string> {
    const args = ['diff', '--find-renames', '--no-color', '--no-ext-diff', '--no-textconv', `-U${context}`, base, head];
    if (paths.length) args.push('--', ...paths.map(normalizeRepoPath));
    return this.git(args, { signal });
  }

  async mergeBase(a: string, b: string): Promise<string> {
    return (await this.git(['merge-base', a, b])).trim();
  }

  /** Whether commit `a` is an ancestor of (or is) commit `b`; false when the clone does not know either. */
  async isAncestor(a: string, b: string): Promise<boolean> {
    try {
      await this.git(['merge-base', '--is-ancestor', a, b]);
      return true;
    } catch (err) {
      // Exit 1: not an ancestor. Anything else (128: an unknown commit) answers no as well: nothing is known.
      if (typeof (err as { code?: unknown }).code === 'number') return false;
      throw err;
    }
  }

  /** Reads one object (`<sha>` or `<commit>:<path>`); null when it does not exist or exceeds MAX_OBJECT_BYTES. */
  readObject(spec: string): Promise<Buffer | null> {
    if (spec.includes('\n')) return Promise.reject(new DomainError('invalid_ref', 'object: must not contain a newline'));
    const proc = this.ensureCatFile();
    return new Promise((resolve, reject) => {
      if (this.queue.length === 0) this.holdEventLoop(proc, true);
      this.queue.push({ resolve, reject });
      proc.stdin.write(spec + '\n');
    });
  }

  readBlob(sha: string): Promise<Buffer | null> {
    return this.readObject(sha);
  }

  readFileAt(commit: string, filePath: string): Promise<Buffer | null> {
    return this.readObject(`${commit}:${normalizeRepoPath(filePath)}`);
  }

  close(): void {
    this.catFile?.stdin.end();
    this.catFile?.kill();
    this.catFile = undefined;
  }

  private ensureCatFile(): ChildProcessWithoutNullStreams {
    if (this.catFile) return this.catFile;
    const proc = spawn('git', ['cat-file', '--batch'], { cwd: this.root, env: this.env, stdio: ['pipe', 'pipe', 'pipe'] });
    proc.stdout.on('data', (chunk: Buffer) => this.onData(chunk));
    const fail = (err: Error) => {
      for (const p of this.queue.splice(0)) p.reject(err);
      this.catFile = undefined;
      this.header = Buffer.alloc(0);
      this.body = undefined;
    };
    proc.on('error', fail);
    proc.on('exit', () => fail(new Error('git cat-file exited')));
    proc.unref();
    (proc.stdout as unknown as { unref?: () => void }).unref?.();
    (proc.stdin as unknown as { unref?: () => void }).unref?.();
    (proc.stderr as unknown as { unref?: () => void }).unref?.();
    this.catFile = proc;
    return proc;
  }

  /**
   * The reader is unref'd so an idle GitRepo never keeps the process alive, but while reads are pending
   * it must: otherwise a script awaiting a blob would simply exit.
   */
  private holdEventLoop(proc: ChildProcessWithoutNullStreams, hold: boolean): void {
    const streams = [proc, proc.stdout, proc.stdin, proc.stderr] as unknown as Array<{ ref?: () => void; unref?: () => void }>;
    for (const s of streams) (hold ? s.ref : s.unref)?.call(s);
  }

  /**
   * Parses `git cat-file --batch` output as it arrives: each body is copied once into a buffer of its
   * announced size (no re-concatenation per chunk, which made a large blob quadratic), and a body over
   * MAX_OBJECT_BYTES — a file a PR author made huge — is skipped without being held and reads as null.
   */
  private onData(chunk: Buffer): void {
    let off = 0;
    while (off < chunk.length) {
      const body = this.body;
      if (body) {
        const take = Math.min(body.size + 1 - body.got, chunk.length - off);
        const copy = Math.min(take, body.size - body.got);
        if (body.data && copy > 0) chunk.copy(body.data, body.got, off, off + copy);
        body.got += take;
        off += take;
        if (body.got === body.size + 1) {
          this.body = undefined;
          this.settle(body.data ?? null);
        }
        continue;
      }
      const nl = chunk.indexOf(10, off);
      if (nl < 0) {
        this.header = Buffer.concat([this.header, chunk.subarray(off)]);
        return;
      }
      const header = Buffer.concat([this.header, chunk.subarray(off, nl)]).toString('utf8');
      this.header = Buffer.alloc(0);
      off = nl + 1;
      if (header.endsWith(' missing') || header.endsWith(' ambiguous')) {
        this.settle(null);
        continue;
      }
      const size = Number(header.slice(header.lastIndexOf(' ') + 1));
      this.body = { size, got: 0, data: size > MAX_OBJECT_BYTES ? undefined : Buffer.allocUnsafe(size) };
    }
  }

  private settle(value: Buffer | null): void {
    this.queue.shift()?.resolve(value);
    if (this.queue.length === 0 && this.catFile) this.holdEventLoop(this.catFile, false);
  }
}
