import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { GitRepo } from '../../src/git/repo';

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_AUTHOR_DATE: '2026-01-01T00:00:00Z', GIT_COMMITTER_DATE: '2026-01-01T00:00:00Z' } }).trim();

/**
 * lsTree of a full commit id reads tree objects through cat-file (no git ls-tree process); what it lists
 * must be what `git ls-tree -r -z --full-tree` lists, entry for entry and in the same order.
 */
describe('GitRepo.lsTree', () => {
  let dir: string;
  let repo: GitRepo;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-lstree-'));
    git(dir, 'init', '-q', '-b', 'main');
    git(dir, 'config', 'user.email', 't@example.com');
    git(dir, 'config', 'user.name', 't');
    git(dir, 'config', 'commit.gpgsign', 'false');
    const write = (p: string, text: string) => {
      fs.mkdirSync(path.dirname(path.join(dir, p)), { recursive: true });
      fs.writeFileSync(path.join(dir, p), text);
    };
    // Names whose order differs between plain byte order and git's (a tree sorts as `name/`).
    write('a.b', '1');
    write('a/b.ts', '2');
    write('a-b/c.ts', '3');
    write('a/deep/er/x.py', '4');
    write('ünïcode dir/naïve file.ts', '5');
    write('with space\tand tab.js', '6');
    write('run.sh', '#!/bin/sh\n');
    fs.chmodSync(path.join(dir, 'run.sh'), 0o755);
    fs.symlinkSync('a.b', path.join(dir, 'link'));
    git(dir, 'add', '-A');
    // A submodule entry (mode 160000) without a checkout.
    git(dir, 'update-index', '--add', '--cacheinfo', `160000,${'1'.repeat(40)},vendor/sub`);
    git(dir, 'commit', '-q', '-m', 'tree');
    repo = await GitRepo.open(dir);
  });

  afterAll(() => {
    repo.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('lists what git ls-tree -r lists, in its order, for a full commit id', async () => {
    const sha = git(dir, 'rev-parse', 'HEAD');
    const expected = git(dir, 'ls-tree', '-r', '-z', '--full-tree', sha)
      .split('\0')
      .filter(Boolean)
      .map((rec) => {
        const tab = rec.indexOf('\t');
        const [mode, type, id] = rec.slice(0, tab).split(' ');
        return { mode, type, sha: id, path: rec.slice(tab + 1) };
      });
    const listed = await repo.lsTree(sha);
    expect(listed).toEqual(expected);
    expect(listed.map((e) => `${e.mode} ${e.type}`)).toEqual(expect.arrayContaining(['100755 blob', '120000 blob', '160000 commit', '100644 blob']));
    // A ref name goes to git ls-tree and gives the same answer.
    expect(await repo.lsTree('main')).toEqual(expected);
  });

  it('an unknown commit id is still refused by git', async () => {
    await expect(repo.lsTree('0'.repeat(40))).rejects.toThrow();
  });
});
