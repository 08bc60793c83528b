import * as fs from 'node:fs';
import * as path from 'node:path';
import { DomainError } from '../domain-error';
import type { GitRepo, TreeEntry } from './repo';

const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW } = fs.constants;

/**
 * Writes `commit`'s tree into the empty folder `dir` from git objects, without git checking anything
 * out: no `.gitattributes` filter, eol or working-tree-encoding is applied, no hook or fsmonitor runs,
 * whatever the repository's config or content says (a render tree used to be a `git worktree add` on
 * the host, and a filter hidden behind an `includeIf` ran a program there). Files are written by the
 * server itself from `git ls-tree` + `git cat-file --batch`.
 *
 * Never writes through a symlink: every directory is created here (never an existing one), files are
 * opened with O_CREAT|O_EXCL|O_NOFOLLOW, and symlinks are created last. A symlink is kept as a link only
 * when it cannot lead out of the tree — a relative target of some leading `..` (no more than its depth:
 * the folders it climbs are real ones written here) followed by plain names; any other target (absolute, `a/../..`, `.`) is written as a plain file holding
 * the target text, as git does with `core.symlinks=false`. Submodules are empty folders, as in a checkout.
 * A path with `..`, `.git` or empty segments, or one under an entry that is not a folder, is
 * `unsafe_tree_path`; a blob the reader will not load (over MAX_OBJECT_BYTES) is `git_output_too_large`.
 */
export async function exportTree(repo: GitRepo, commit: string, dir: string): Promise<{ files: number; bytes: number }> {
  const entries = await repo.lsTree(commit);
  const dirs = new Set<string>(['']);
  const taken = new Set<string>();
  const links: Array<{ entry: TreeEntry; target: string }> = [];
  let files = 0;
  let bytes = 0;

  const ensureDir = async (rel: string): Promise<void> => {
    if (dirs.has(rel)) return;
    if (taken.has(rel)) throw unsafe(rel, 'a folder and a file of the same name');
    const parent = path.posix.dirname(rel);
    await ensureDir(parent === '.' ? '' : parent);
    await fs.promises.mkdir(path.join(dir, rel), { mode: 0o755 });
    dirs.add(rel);
  };

  for (const entry of entries) {
    const rel = checkedPath(entry.path);
    const parent = path.posix.dirname(rel);
    await ensureDir(parent === '.' ? '' : parent);
    if (taken.has(rel) || dirs.has(rel)) throw unsafe(rel, 'listed twice');
    taken.add(rel);
    if (entry.type === 'commit') {
      // A submodule: an empty folder, as `git checkout` leaves it without `--recurse-submodules`.
      taken.delete(rel);
      await ensureDir(rel);
      continue;
    }
    const data = await repo.readBlob(entry.sha);
    if (!data) {
      throw new DomainError('git_output_too_large', `tree: ${rel} could not be read from ${commit.slice(0, 12)} (a blob over the reader's size limit, or missing)`);
    }
    if (entry.mode === '120000') {
      links.push({ entry, target: data.toString('utf8') });
      continue;
    }
    await writeNew(path.join(dir, rel), data, entry.mode === '100755' ? 0o755 : 0o644);
    files++;
    bytes += data.length;
  }
  for (const { entry, target } of links) {
    const abs = path.join(dir, entry.path);
    if (linkStaysInside(entry.path, target)) await fs.promises.symlink(target, abs);
    else await writeNew(abs, Buffer.from(target, 'utf8'), 0o644);
    files++;
  }
  return { files, bytes };
}

const unsafe = (p: string, why: string) => new DomainError('unsafe_tree_path', `tree: "${p.slice(0, 300)}" is not written into a render tree: ${why}`, { path: p.slice(0, 300) });

/** The tree path, if every segment is a plain name (git itself refuses these on checkout). */
function checkedPath(p: string): string {
  if (p.includes('\0') || p.includes('\\')) throw unsafe(p, 'it holds a NUL or a backslash');
  for (const seg of p.split('/')) {
    if (seg === '' || seg === '.' || seg === '..') throw unsafe(p, 'an empty, "." or ".." segment');
    if (seg.toLowerCase() === '.git') throw unsafe(p, 'a ".git" segment');
  }
  return p;
}

/** A link target that resolves inside the tree whatever the other links are: `(../)*name(/name)*`. */
export function linkStaysInside(linkPath: string, target: string): boolean {
  if (target === '' || target.startsWith('/') || target.includes('\0')) return false;
  const segs = target.split('/');
  if (segs[segs.length - 1] === '') segs.pop();
  let up = 0;
  while (up < segs.length && segs[up] === '..') up++;
  const rest = segs.slice(up);
  if (rest.some((s) => s === '' || s === '.' || s === '..')) return false;
  const depth = linkPath.split('/').length - 1;
  return up <= depth;
}

async function writeNew(abs: string, data: Buffer, mode: number): Promise<void> {
  const fh = await fs.promises.open(abs, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode);
  try {
    await fh.writeFile(data);
    await fh.chmod(mode); // the umask must not drop the executable bit a script needs
  } finally {
    await fh.close();
  }
}
