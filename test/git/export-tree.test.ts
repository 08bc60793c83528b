import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { GitRepo } from '../../src/git/repo';
import { exportTree, linkStaysInside } from '../../src/git/export-tree';
import { GitFixture } from '../support/git-fixture';

/**
 * A render tree is written by the server from git objects (src/git/export-tree.ts): exact blob bytes (no
 * attribute applied), executable bits kept, submodules as empty folders, and nothing written or linked
 * outside the folder, whatever the commit holds.
 */
describe('exportTree writes a commit from objects, confined to its folder', () => {
  let fx: GitFixture;
  let repo: GitRepo | undefined;
  let out: string;
  beforeEach(() => {
    fx = new GitFixture('rl-export-');
    out = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-export-out-'));
  });
  afterEach(() => {
    repo?.close();
    repo = undefined;
    fx.cleanup();
    fs.rmSync(out, { recursive: true, force: true });
  });

  it('writes exact bytes with no eol conversion, keeps the executable bit, and submodules are empty folders', async () => {
    fx.write('.gitattributes', '*.txt text eol=crlf\n');
    fx.write('a.txt', 'one\ntwo\n');
    fx.write('deep/er/b.bin', Buffer.from([0, 1, 2, 255]));
    fx.write('run.sh', '#!/bin/sh\n');
    fs.chmodSync(path.join(fx.dir, 'run.sh'), 0o755);
    fx.git('add', '-A');
    fx.git('update-index', '--add', '--cacheinfo', `160000,${'a'.repeat(40)},vendor/sub`);
    fx.git('commit', '-qm', 'tree');
    const head = fx.git('rev-parse', 'HEAD');
    repo = await GitRepo.open(fx.dir);
    expect(await exportTree(repo, head, out)).toEqual({ files: 4, bytes: 20 + 8 + 4 + 10 });
    expect(fs.readFileSync(path.join(out, 'a.txt'), 'utf8')).toBe('one\ntwo\n');
    expect([...fs.readFileSync(path.join(out, 'deep/er/b.bin'))]).toEqual([0, 1, 2, 255]);
    expect(fs.statSync(path.join(out, 'run.sh')).mode & 0o777).toBe(0o755);
    expect(fs.statSync(path.join(out, 'a.txt')).mode & 0o777).toBe(0o644);
    expect(fs.readdirSync(path.join(out, 'vendor/sub'))).toEqual([]);
  });

  it('keeps links that stay inside the tree, and writes every other link as a plain file holding its target', async () => {
    fx.write('a.txt', 'secretless\n');
    fx.write('lib/x/keep.txt', 'k\n');
    const links: Record<string, string> = {
      'lib/ok': '../a.txt', // inside
      'lib/x/ok2': '../../lib/x/keep.txt', // inside
      'abs': '/etc/passwd', // absolute
      'up': '../outside', // above the root
      'lib/x/up2': '../../../outside',
      'dot': '.', // a link to the root makes `dot/..` the folder above
      'via': 'dot/../outside', // `..` after a name
      'lib/trailing': '../lib/x/', // a trailing slash is still a plain downward path
    };
    for (const [p, t] of Object.entries(links)) {
      fs.mkdirSync(path.dirname(path.join(fx.dir, p)), { recursive: true });
      fs.symlinkSync(t, path.join(fx.dir, p));
    }
    const head = fx.commit('links');
    repo = await GitRepo.open(fx.dir);
    await exportTree(repo, head, out);
    const kept = Object.keys(links).filter((p) => fs.lstatSync(path.join(out, p)).isSymbolicLink()).sort();
    expect(kept).toEqual(['lib/ok', 'lib/trailing', 'lib/x/ok2']);
    for (const p of kept) expect(fs.readlinkSync(path.join(out, p))).toBe(links[p]);
    for (const p of ['abs', 'up', 'lib/x/up2', 'dot', 'via']) expect(fs.readFileSync(path.join(out, p), 'utf8')).toBe(links[p]);
    expect(fs.readFileSync(path.join(out, 'lib/ok'), 'utf8')).toBe('secretless\n');
  });

  it('the rule for links, on its own', () => {
    expect(linkStaysInside('a', 'b/c')).toBe(true);
    expect(linkStaysInside('d/a', '..')).toBe(true);
    expect(linkStaysInside('a', '..')).toBe(false);
    expect(linkStaysInside('a', '')).toBe(false);
    expect(linkStaysInside('a', './b')).toBe(false);
    expect(linkStaysInside('d/e/a', '../../b')).toBe(true);
    expect(linkStaysInside('d/e/a', '../../../b')).toBe(false);
  });

  it('a tree naming ".git" or ".." is refused with unsafe_tree_path, and nothing is written outside', async () => {
    fx.write('a.txt', 'a\n');
    fx.commit('a');
    const blob = fx.git('rev-parse', 'HEAD:a.txt');
    for (const [name, rule] of [['.git', '".git" segment'], ['..', '"." or ".." segment'], ['.GIT', '".git" segment']] as const) {
      const inner = execMktree(fx, `100644 blob ${blob}\tconfig\n`);
      const tree = execMktree(fx, `040000 tree ${inner}\t${name}\n100644 blob ${blob}\tok.txt\n`);
      const commit = fx.git('commit-tree', tree, '-m', 'evil');
      repo = repo ?? (await GitRepo.open(fx.dir));
      const target = fs.mkdtempSync(path.join(out, 't-'));
      await expect(exportTree(repo, commit, target)).rejects.toMatchObject({ code: 'unsafe_tree_path', message: expect.stringContaining(rule) });
      expect(fs.existsSync(path.join(out, 'config'))).toBe(false);
    }
  });

  it('a file listed under a link of the same name is refused, never written through the link', async () => {
    fx.write('a.txt', 'a\n');
    fx.commit('a');
    const blob = fx.git('rev-parse', 'HEAD:a.txt');
    const target = execHashObject(fx, out);
    const inner = execMktree(fx, `100644 blob ${blob}\tpwned\n`);
    // "d" is both a symlink to the output's parent and a folder holding "pwned".
    const tree = execMktree(fx, `120000 blob ${target}\td\n040000 tree ${inner}\td\n`);
    const commit = fx.git('commit-tree', tree, '-m', 'evil');
    repo = await GitRepo.open(fx.dir);
    const dest = fs.mkdtempSync(path.join(out, 't-'));
    await expect(exportTree(repo, commit, dest)).rejects.toMatchObject({ code: 'unsafe_tree_path' });
    expect(fs.existsSync(path.join(out, 'pwned'))).toBe(false);
  });
});

function execMktree(fx: GitFixture, input: string): string {
  return execFileSync('git', ['mktree', '--missing'], { cwd: fx.dir, input, encoding: 'utf8' }).trim();
}
function execHashObject(fx: GitFixture, content: string): string {
  return execFileSync('git', ['hash-object', '-w', '--stdin'], { cwd: fx.dir, input: content, encoding: 'utf8' }).trim();
}
