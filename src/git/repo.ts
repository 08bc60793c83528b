import { execFile, spawn, ChildProcessWithoutNullStreams } from 'node:child_process';
import { promisify } from 'node:util';
import * as path from 'node:path';
import { DomainError } from '../domain-error';

const execFileAsync = promisify(execFile);

export interface TreeEntry { path: string; mode: string; type: 'blob' | 'tree' | 'commit'; sha: string; }
export type ChangeStatus = 'added' | 'modified' | 'deleted' | 'renamed' | 'copied' | 'type_changed';
export interface ChangedFile { status: ChangeStatus; path: string; oldPath?: string; similarity?: number; }

/** A repo-relative path: normalized, never absolute, never escaping the work tree, no NUL. */
export function normalizeRepoPath(p: string): string {
  if (typeof p !== 'string' || p.length === 0) throw new DomainError('invalid_path', 'path: must be a non-empty repo-relative path');
  if (p.includes('\0')) throw new DomainError('invalid_path', 'path: must not contain NUL');
  const unix = p.replace(/\\/g, '/');
  if (unix.startsWith('/') || /^[a-zA-Z]:\//.test(unix)) throw new DomainError('invalid_path', `path: must be repo-relative, got absolute "${p}"`);
  const norm = path.posix.normalize(unix).replace(/^\.\//, '').replace(/\/$/, '');
  if (norm === '..' || norm.startsWith('../') || norm === '.' || norm === '') throw new DomainError('invalid_path', `path: escapes the repository ("${p}")`);
  return norm;
}

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

export class GitRepo {
  private catFile?: ChildProcessWithoutNullStreams;
  private queue: PendingRead[] = [];
  private buf: Buffer = Buffer.alloc(0);

  private constructor(readonly root: string) {}

  static async open(dir: string): Promise<GitRepo> {
    const abs = path.resolve(dir);
    let top: string;
    try {
      top = (await execFileAsync('git', ['rev-parse', '--show-toplevel'], { cwd: abs })).stdout.trim();
    } catch {
      throw new DomainError('not_a_git_repo', `path: "${dir}" is not a git work tree`, 'invalid');
    }
    return new GitRepo(top);
  }

  async git(args: string[], opts: { maxBuffer?: number; cwd?: string } = {}): Promise<string> {
    const { stdout } = await execFileAsync('git', args, { cwd: opts.cwd ?? this.root, maxBuffer: opts.maxBuffer ?? 256 * 1024 * 1024, encoding: 'utf8' });
    return stdout;
  }

  async revParse(ref: string): Promise<string> {
    if (ref.startsWith('-')) throw new DomainError('invalid_ref', `ref: must not start with "-" ("${ref}")`);
    try {
      return (await this.git(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`])).trim();
    } catch {
      throw new DomainError('unknown_commit', `commit: "${ref}" does not name a commit in ${this.root}`, 'not_found');
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

  async lsTree(commit: string): Promise<TreeEntry[]> {
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

  /** Changed files between two commits, with rename detection. */
  async diffNameStatus(base: string, head: string): Promise<ChangedFile[]> {
    const out = await this.git(['diff', '--find-renames', '--name-status', '-z', base, head]);
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
  async diffPatch(base: string, head: string, paths: string[] = [], context = 3): Promise<string> {
    const args = ['diff', '--find-renames', '--no-color', '--no-ext-diff', `-U${context}`, base, head];
    if (paths.length) args.push('--', ...paths.map(normalizeRepoPath));
    return this.git(args);
  }

  async mergeBase(a: string, b: string): Promise<string> {
    return (await this.git(['merge-base', a, b])).trim();
  }

  /** Reads one object (`<sha>` or `<commit>:<path>`); null when it does not exist. */
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

  /** Creates a detached worktree of `commit` at `dir`; callers must `removeWorktree` in a finally. */
  async addWorktree(commit: string, dir: string): Promise<void> {
    await this.git(['worktree', 'add', '--detach', '--force', dir, commit]);
  }

  async removeWorktree(dir: string): Promise<void> {
    try {
      await this.git(['worktree', 'remove', '--force', dir]);
    } catch {
      /* already gone */
    }
    await this.git(['worktree', 'prune']).catch(() => undefined);
  }

  close(): void {
    this.catFile?.stdin.end();
    this.catFile?.kill();
    this.catFile = undefined;
  }

  private ensureCatFile(): ChildProcessWithoutNullStreams {
    if (this.catFile) return this.catFile;
    const proc = spawn('git', ['cat-file', '--batch'], { cwd: this.root, stdio: ['pipe', 'pipe', 'pipe'] });
    proc.stdout.on('data', (chunk: Buffer) => {
      this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
      this.drain();
    });
    const fail = (err: Error) => {
      for (const p of this.queue.splice(0)) p.reject(err);
      this.catFile = undefined;
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

  private drain(): void {
    for (;;) {
      const nl = this.buf.indexOf(10);
      if (nl < 0) return;
      const header = this.buf.toString('utf8', 0, nl);
      if (header.endsWith(' missing') || header.endsWith(' ambiguous')) {
        this.buf = this.buf.subarray(nl + 1);
        this.queue.shift()?.resolve(null);
        if (this.queue.length === 0 && this.catFile) this.holdEventLoop(this.catFile, false);
        continue;
      }
      const size = Number(header.slice(header.lastIndexOf(' ') + 1));
      if (this.buf.length < nl + 1 + size + 1) return;
      const body = Buffer.from(this.buf.subarray(nl + 1, nl + 1 + size));
      this.buf = this.buf.subarray(nl + 1 + size + 1);
      this.queue.shift()?.resolve(body);
      if (this.queue.length === 0 && this.catFile) this.holdEventLoop(this.catFile, false);
    }
  }
}
