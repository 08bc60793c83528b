import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** A real git repository built by a test with the real git binary. */
export class GitFixture {
  readonly dir: string;
  /** `parent`: the folder to create it in (default the system temp dir), e.g. a server's repo root. */
  constructor(prefix = 'rl-git-', parent = os.tmpdir()) {
    fs.mkdirSync(parent, { recursive: true });
    this.dir = fs.mkdtempSync(path.join(parent, prefix));
    this.git('init', '-q', '-b', 'main');
    this.git('config', 'user.email', 'test@example.com');
    this.git('config', 'user.name', 'Test');
    this.git('config', 'commit.gpgsign', 'false');
  }
  git(...args: string[]): string {
    return execFileSync('git', args, { cwd: this.dir, encoding: 'utf8', env: { ...process.env, GIT_AUTHOR_DATE: '2026-01-01T00:00:00Z', GIT_COMMITTER_DATE: '2026-01-01T00:00:00Z' } }).trim();
  }
  write(file: string, content: string | Buffer): void {
    const abs = path.join(this.dir, file);
    fs.mkdirSync(path.dirname(abs), { recursive: true });
    fs.writeFileSync(abs, content);
  }
  remove(file: string): void {
    fs.rmSync(path.join(this.dir, file), { force: true, recursive: true });
  }
  /** Stages everything and commits; returns the new commit SHA. */
  commit(message: string): string {
    this.git('add', '-A');
    this.git('commit', '-q', '--allow-empty', '-m', message);
    return this.git('rev-parse', 'HEAD');
  }
  cleanup(): void {
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
