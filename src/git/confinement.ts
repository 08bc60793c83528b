import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DomainError } from '../domain-error';

const execFileAsync = promisify(execFile);

/**
 * What a registered repository may not hold in its own `.git/config`, checked at registration and at
 * every open (SPEC §16 "configs with includes, filters, textconv, fsmonitor or hooks paths are refused").
 * The server also blanks these keys on every git call (repo.ts HARDENED_CONFIG), but that only covers
 * the names it sees: an `includeIf "gitdir:**\/worktrees/**"` hid a `filter.x.smudge` until
 * `git worktree add` ran, and that ran a program as the server. So a config naming a program is
 * refused outright, and includes are refused rather than followed.
 *
 * Each rule: a test on the lower-cased key (git lower-cases section and variable, not subsection) and
 * the value, and the reason shown.
 */
const REFUSED_CONFIG: ReadonlyArray<{ test: (key: string, value: string) => boolean; why: string }> = [
  { test: (k) => k.startsWith('include.') || k.startsWith('includeif.'), why: 'config includes are refused, not followed (an included file could name a program)' },
  { test: (k) => k.startsWith('filter.'), why: 'filter drivers run a program on checkout' },
  { test: (k) => k === 'diff.external' || /^diff\..+\.(textconv|command)$/.test(k), why: 'external diff and textconv drivers run a program' },
  { test: (k) => /^merge\..+\.driver$/.test(k), why: 'merge drivers run a program' },
  { test: (k, v) => k === 'core.fsmonitor' && !/^(false|no|off|0|)$/i.test(v.trim()), why: 'an fsmonitor hook runs a program' },
  { test: (k) => k === 'core.hookspath', why: 'hooks run programs' },
  { test: (k) => ['core.sshcommand', 'core.gitproxy', 'core.pager', 'core.editor', 'core.askpass', 'core.alternaterefscommand', 'sequence.editor', 'gpg.program', 'uploadpack.packobjectshook'].includes(k), why: 'the key names a program' },
  { test: (k) => /^gpg\..+\.program$/.test(k) || k.startsWith('pager.') || /^(difftool|mergetool)\..+\.cmd$/.test(k), why: 'the key names a program' },
  { test: (k) => k === 'credential.helper' || /^credential\..+\.helper$/.test(k), why: 'a credential helper runs a program' },
  { test: (k) => /^remote\..+\.(uploadpack|receivepack)$/.test(k), why: 'the key names a program run for a local remote' },
  { test: (k, v) => /^submodule\..+\.update$/.test(k) && v.trim().startsWith('!'), why: 'a submodule update command runs a program' },
  { test: (k) => k === 'core.worktree', why: "a repo's work tree is the folder holding its .git directory, never one the config names" },
];

/** The reason a config entry is refused, or undefined when it is allowed. Pure: the policy in one place. */
export function refusedConfigEntry(key: string, value: string): string | undefined {
  const k = key.toLowerCase();
  return REFUSED_CONFIG.find((r) => r.test(k, value))?.why;
}

/**
 * Refuses a repo whose own config file names a program (see REFUSED_CONFIG). The file is read with
 * `git config --file … --list --null`, which neither follows includes nor runs anything.
 */
export async function assertSafeRepoConfig(gitDir: string, env: NodeJS.ProcessEnv): Promise<void> {
  const file = path.join(gitDir, 'config');
  if (!fs.existsSync(file)) return;
  let out: string;
  try {
    out = (await execFileAsync('git', ['config', '--file', file, '--list', '--null'], { env, encoding: 'utf8', maxBuffer: 4 * 1024 * 1024 })).stdout;
  } catch (err) {
    throw new DomainError('repo_config_refused', `config: ${file} could not be read as a git config file (${(err as Error).message.split('\n')[0].slice(0, 200)})`);
  }
  for (const rec of out.split('\0')) {
    if (!rec) continue;
    const nl = rec.indexOf('\n');
    const key = nl < 0 ? rec : rec.slice(0, nl);
    const value = nl < 0 ? '' : rec.slice(nl + 1);
    const why = refusedConfigEntry(key, value);
    if (why) throw new DomainError('repo_config_refused', `config: the repository's ${file} sets "${key.slice(0, 200)}": ${why}; remove it to register or use this repo`, { key: key.slice(0, 200) });
  }
}

const inside = (root: string, p: string) => p === root || p.startsWith(root + path.sep);

/** Entries of a git dir that git reads data from; each must be itself or resolve inside the git dir. */
const KEY_ENTRIES = ['HEAD', 'config', 'objects', 'refs', 'packed-refs', 'index', 'info', 'logs', 'shallow', 'FETCH_HEAD', 'ORIG_HEAD'];
/** Files that point git at another git dir (linked worktrees, `--separate-git-dir`): never in a registered repo. */
const REDIRECT_ENTRIES = ['commondir', 'gitdir'];

/**
 * A registered repo's git dir is exactly `<top>/.git`, a real directory (not a symlink, not a `.git`
 * file pointing elsewhere), whose data all lives inside it: no key entry (objects, refs, HEAD, …) is a
 * link out of it, no `commondir`/`gitdir` redirect, and no `objects/info/alternates` borrowing another
 * repository's objects. Otherwise a folder of a tenant's own clone holding `HEAD`, a config with
 * `core.worktree=.` and tracked symlinks `objects`/`refs` into another workspace's repo reads that repo.
 * `gitDirFromGit` / `commonDirFromGit` are what `git rev-parse --path-format=absolute --git-dir --git-common-dir` said.
 */
export async function assertConfinedGitDir(top: string, gitDirFromGit: string, commonDirFromGit: string): Promise<string> {
  const refuse = (why: string) => new DomainError('repo_git_dir_refused', `path: ${why}; a registered repo's git dir is exactly <top>/.git, a real directory whose objects and refs live inside it`);
  const realTop = await fs.promises.realpath(top);
  const gitDir = path.join(realTop, '.git');
  let st: fs.Stats;
  try {
    st = await fs.promises.lstat(gitDir);
  } catch {
    throw refuse(`"${realTop}" has no .git directory (git found its repository elsewhere)`);
  }
  if (st.isSymbolicLink()) throw refuse(`"${gitDir}" is a symlink`);
  if (!st.isDirectory()) throw refuse(`"${gitDir}" is not a directory (a .git file points elsewhere: a linked worktree or a separate git dir)`);
  const realGit = await fs.promises.realpath(gitDir);
  for (const [what, dir] of [['git dir', gitDirFromGit], ['common dir', commonDirFromGit]] as const) {
    const real = await fs.promises.realpath(dir).catch(() => dir);
    if (real !== realGit) throw refuse(`git uses the ${what} "${dir}", not "${gitDir}"`);
  }
  for (const name of REDIRECT_ENTRIES) {
    if (fs.existsSync(path.join(realGit, name))) throw refuse(`"${path.join(gitDir, name)}" redirects git to another repository`);
  }
  for (const name of KEY_ENTRIES) {
    const p = path.join(realGit, name);
    if (!(await fs.promises.lstat(p).catch(() => null))) continue;
    const real = await fs.promises.realpath(p).catch(() => null);
    if (!real || !inside(realGit, real)) throw refuse(`"${p}" leads outside the git dir`);
  }
  // Links further down (refs/heads, objects/pack/pack-….pack, …) lead out just as well. One readdir walk,
  // no stat per file: a packed repository holds few entries here.
  for (const name of ['objects', 'refs']) {
    const dir = path.join(realGit, name);
    const entries = await fs.promises.readdir(dir, { withFileTypes: true, recursive: true }).catch(() => [] as fs.Dirent[]);
    for (const e of entries) {
      if (!e.isSymbolicLink()) continue;
      const p = path.join(e.parentPath, e.name);
      const real = await fs.promises.realpath(p).catch(() => null);
      if (!real || !inside(realGit, real)) throw refuse(`"${p}" is a symlink that leads outside the git dir`);
    }
  }
  const alternates = path.join(realGit, 'objects', 'info', 'alternates');
  const alt = await fs.promises.readFile(alternates, 'utf8').catch(() => '');
  if (alt.split('\n').some((l) => l.trim() && !l.startsWith('#'))) throw refuse(`"${alternates}" borrows objects from another repository`);
  return realGit;
}
