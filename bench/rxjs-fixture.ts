import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** Two published rxjs versions that ship their TypeScript sources: real code, a real diff. */
export const RXJS_BASE = '7.5.7';
export const RXJS_HEAD = '7.8.1';
export const CACHE_DIR = path.join(__dirname, '..', '.bench-cache', 'rxjs');

/** Fetches (once) and unpacks rxjs@version with `npm pack`; returns the package directory. */
export function rxjsPackage(version: string): string {
  fs.mkdirSync(CACHE_DIR, { recursive: true });
  const tgz = path.join(CACHE_DIR, `rxjs-${version}.tgz`);
  if (!fs.existsSync(tgz)) execFileSync('npm', ['pack', `rxjs@${version}`, '--silent'], { cwd: CACHE_DIR, stdio: ['ignore', 'ignore', 'inherit'] });
  const dir = path.join(CACHE_DIR, version);
  if (!fs.existsSync(path.join(dir, 'package', 'src'))) {
    fs.mkdirSync(dir, { recursive: true });
    execFileSync('tar', ['-xzf', tgz, '-C', dir]);
  }
  return path.join(dir, 'package');
}

export function listFiles(dir: string, filter: (p: string) => boolean): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const abs = path.join(d, e.name);
      if (e.isDirectory()) walk(abs);
      else if (filter(abs)) out.push(abs);
    }
  };
  walk(dir);
  return out;
}

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_AUTHOR_DATE: '2026-01-01T00:00:00Z', GIT_COMMITTER_DATE: '2026-01-01T00:00:00Z' } }).trim();

/** A git repository whose first commit is rxjs@base (src/ + package.json) and second rxjs@head. */
export function buildRxjsRepo(): { dir: string; base: string; head: string; cleanup(): void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-bench-rxjs-'));
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'config', 'user.email', 'bench@example.com');
  git(dir, 'config', 'user.name', 'bench');
  git(dir, 'config', 'commit.gpgsign', 'false');
  const shas: string[] = [];
  for (const version of [RXJS_BASE, RXJS_HEAD]) {
    const pkg = rxjsPackage(version);
    fs.rmSync(path.join(dir, 'src'), { recursive: true, force: true });
    fs.cpSync(path.join(pkg, 'src'), path.join(dir, 'src'), { recursive: true });
    fs.copyFileSync(path.join(pkg, 'package.json'), path.join(dir, 'package.json'));
    git(dir, 'add', '-A');
    git(dir, 'commit', '-q', '-m', `rxjs ${version}`);
    shas.push(git(dir, 'rev-parse', 'HEAD'));
  }
  return { dir, base: shas[0], head: shas[1], cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) };
}
