import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { GitRepo } from '../../src/git/repo';
import { renderAt } from '../../src/axes/visual/harness/render';
import { loadOperatorConfig } from '../../src/operator-config';
import { cloneArgs } from '../../src/commands/register-repo';
import { cloneWithin } from '../../src/git/clone';
import { DomainError } from '../../src/domain-error';

/**
 * Issue 36 (critical): "git never runs a program a repo's config names". The attacker's vector: a
 * config `[includeIf "gitdir:**\/worktrees/**"] path = x.cfg` hid a `filter.x.smudge` from the names the
 * server blanked when it opened the repo, until the render step ran `git worktree add` on the host; with
 * `.gitattributes` `* filter=x` that ran the command as the server. Now (1) a repo whose own config
 * includes a file or names a program is refused at every open, and (2) the render tree is written from
 * git objects, so even a config turned hostile after the open runs nothing.
 *
 * Each vector first proves the probe is live (plain git does create the marker), then that the server
 * never does.
 */
describe('PR content is never checked out by git on the host', () => {
  let root: string;
  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-hostco-'));
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  const gitIn = (cwd: string, ...args: string[]) =>
    execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: root, GIT_AUTHOR_DATE: '2026-01-01T00:00:00Z', GIT_COMMITTER_DATE: '2026-01-01T00:00:00Z' } }).trim();

  /** A repo whose every file goes through filter "x"; returns its dir and head commit. */
  const filteredRepo = () => {
    const dir = path.join(root, 'repo');
    fs.mkdirSync(dir);
    gitIn(dir, 'init', '-q', '-b', 'main');
    gitIn(dir, 'config', 'user.email', 't@example.com');
    gitIn(dir, 'config', 'user.name', 't');
    fs.writeFileSync(path.join(dir, '.gitattributes'), '* filter=x\n');
    fs.writeFileSync(path.join(dir, 'a.txt'), 'exact bytes\r\n');
    gitIn(dir, 'add', '.');
    gitIn(dir, 'commit', '-qm', 'base');
    return { dir, head: gitIn(dir, 'rev-parse', 'HEAD') };
  };
  const marker = () => path.join(root, 'PWNED');
  const hostile = () => `touch ${marker()}; cat`;

  /** Renders `head` with the operator's unsafe no-sandbox mode: only the tree export stands between the repo and the host. */
  const render = (repo: GitRepo, head: string) =>
    renderAt(repo, head, { command: 'mkdir -p out && cp a.txt out/a.png', outputDir: 'out', timeoutMs: 20_000 }, 'head', loadOperatorConfig('/nonexistent', { unsafeRenderWithoutSandbox: true }, {}).sandbox);

  const includeIfConfig = (dir: string) => {
    fs.writeFileSync(path.join(dir, '.git', 'x.cfg'), `[filter "x"]\n\tsmudge = ${hostile()}\n\trequired = true\n`);
    fs.appendFileSync(path.join(dir, '.git', 'config'), '[includeIf "gitdir:**/worktrees/**"]\n\tpath = x.cfg\n');
  };

  it('includeIf hiding a smudge filter: plain `git worktree add` runs it; the server refuses the repo at open', async () => {
    const { dir, head } = filteredRepo();
    includeIfConfig(dir);
    gitIn(dir, 'worktree', 'add', '--detach', path.join(root, 'probe'), head);
    expect(fs.existsSync(marker())).toBe(true);
    fs.rmSync(marker());
    gitIn(dir, 'worktree', 'remove', '--force', path.join(root, 'probe'));

    await expect(GitRepo.open(dir)).rejects.toMatchObject({ code: 'repo_config_refused', message: expect.stringContaining('"includeif.gitdir:**/worktrees/**.path": config includes are refused, not followed') });
    expect(fs.existsSync(marker())).toBe(false);
  });

  it('includeIf added after the open: the render tree is written from objects, the filter never runs and the bytes are exact', async () => {
    const { dir, head } = filteredRepo();
    const repo = await GitRepo.open(dir);
    try {
      includeIfConfig(dir);
      const run = await render(repo, head);
      expect(run).toEqual({ ok: true, images: new Map([['a.png', Buffer.from('exact bytes\r\n')]]) });
      expect(fs.existsSync(marker())).toBe(false);
      // No worktree was registered with git either.
      expect(fs.readdirSync(path.join(dir, '.git')).includes('worktrees')).toBe(false);
    } finally {
      repo.close();
    }
  });

  it('a plain filter driver: `git checkout` runs it; the server refuses the repo, and a render after the open runs nothing', async () => {
    const { dir, head } = filteredRepo();
    const repo = await GitRepo.open(dir);
    try {
      gitIn(dir, 'config', 'filter.x.smudge', hostile());
      fs.rmSync(path.join(dir, 'a.txt'));
      gitIn(dir, 'checkout', '--', 'a.txt');
      expect(fs.existsSync(marker())).toBe(true);
      fs.rmSync(marker());

      await expect(GitRepo.open(dir)).rejects.toMatchObject({ code: 'repo_config_refused', message: expect.stringContaining('"filter.x.smudge": filter drivers run a program on checkout') });
      expect((await render(repo, head)).ok).toBe(true);
      expect(fs.existsSync(marker())).toBe(false);
    } finally {
      repo.close();
    }
  });

  it('core.hooksPath: a checkout runs its post-checkout hook; the server refuses the repo, and a render runs no hook', async () => {
    const { dir, head } = filteredRepo();
    const repo = await GitRepo.open(dir);
    try {
      const hooks = path.join(root, 'hooks');
      fs.mkdirSync(hooks);
      fs.writeFileSync(path.join(hooks, 'post-checkout'), `#!/bin/sh\ntouch ${marker()}\n`, { mode: 0o755 });
      gitIn(dir, 'config', 'core.hooksPath', hooks);
      gitIn(dir, 'checkout', '-q', '--detach', head);
      expect(fs.existsSync(marker())).toBe(true);
      fs.rmSync(marker());

      await expect(GitRepo.open(dir)).rejects.toMatchObject({ code: 'repo_config_refused', message: expect.stringContaining('"core.hookspath": hooks run programs') });
      expect((await render(repo, head)).ok).toBe(true);
      expect(fs.existsSync(marker())).toBe(false);
    } finally {
      repo.close();
    }
  });

  it('core.fsmonitor: `git status` runs it; the server refuses the repo, and a render runs nothing', async () => {
    const { dir, head } = filteredRepo();
    const repo = await GitRepo.open(dir);
    try {
      const monitor = path.join(root, 'monitor.sh');
      fs.writeFileSync(monitor, `#!/bin/sh\ntouch ${marker()}\n`, { mode: 0o755 });
      gitIn(dir, 'config', 'core.fsmonitor', monitor);
      gitIn(dir, 'status', '--porcelain');
      expect(fs.existsSync(marker())).toBe(true);
      fs.rmSync(marker());

      await expect(GitRepo.open(dir)).rejects.toMatchObject({ code: 'repo_config_refused', message: expect.stringContaining('"core.fsmonitor": an fsmonitor hook runs a program') });
      expect((await render(repo, head)).ok).toBe(true);
      expect(fs.existsSync(marker())).toBe(false);
    } finally {
      repo.close();
    }
  });

  it('a repo the server clones has no work tree: git writes none of its content to the host, the server reads it from objects', async () => {
    const { dir, head } = filteredRepo();
    fs.mkdirSync(path.join(dir, 'evil'));
    fs.writeFileSync(path.join(dir, 'evil', 'HEAD'), 'ref: refs/heads/main\n');
    fs.symlinkSync('/etc/passwd', path.join(dir, 'link'));
    gitIn(dir, 'add', '-A');
    gitIn(dir, 'commit', '-qm', 'content');
    const bare = path.join(root, 'forge.git');
    gitIn(root, 'clone', '--quiet', '--bare', dir, bare);
    const target = path.join(root, 'clone');
    // A local bare repo stands in for the forge: file:// is allowed for this clone only.
    await cloneWithin(['-c', 'protocol.file.allow=always', ...cloneArgs(`file://${bare}`, target)], target, 64 * 1024 * 1024, (why) => new DomainError('repo_clone_failed', why), () => new DomainError('repo_quota_exceeded', 'over'));
    expect(fs.readdirSync(target)).toEqual(['.git']);
    const repo = await GitRepo.open(target);
    try {
      expect((await repo.readFileAt('HEAD', 'a.txt'))?.toString()).toBe('exact bytes\r\n');
      expect((await repo.readFileAt('HEAD', 'evil/HEAD'))?.toString()).toBe('ref: refs/heads/main\n');
      expect(await repo.revParse('HEAD')).not.toBe(head);
    } finally {
      repo.close();
    }
  });

  it('core.fsmonitor=false and an ordinary config open as before', async () => {
    const { dir } = filteredRepo();
    gitIn(dir, 'config', 'core.fsmonitor', 'false');
    gitIn(dir, 'config', 'remote.origin.url', 'https://github.com/acme/app.git');
    const repo = await GitRepo.open(dir);
    expect(fs.realpathSync(repo.root)).toBe(fs.realpathSync(dir));
    repo.close();
  });
});
