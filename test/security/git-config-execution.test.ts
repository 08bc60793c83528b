import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { coChangePairs } from '../../src/git/co-change';
import { GitRepo } from '../../src/git/repo';
import { exportTree } from '../../src/git/export-tree';

/**
 * A registered repo's own `.git/config` (a downloaded or cloned repo may carry one) must never make
 * the server run a program: hooks, fsmonitor, signature verification, external diff, textconv and
 * filter drivers — including a driver whose name holds "=" (which would split a `-c k=v`). Such a
 * config is refused when the repo is opened (test/security/host-checkout.test.ts); this file covers the
 * second line of defence: a config turned hostile after the repo was opened. Every git operation the
 * server performs is run against it, and no marker may appear.
 */
describe('git config in a registered repo never executes code', () => {
  let root: string;
  let repoDir: string;
  let marks: string;
  let base: string;
  let head: string;
  let repo: GitRepo;

  const sh = (args: string[], cwd = repoDir) => execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: root } }).trim();

  beforeAll(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-gitexec-'));
    repoDir = path.join(root, 'repo');
    marks = path.join(root, 'marks');
    fs.mkdirSync(marks);
    fs.mkdirSync(repoDir);
    sh(['init', '-q', '-b', 'main']);
    sh(['config', 'user.email', 't@example.com']);
    sh(['config', 'user.name', 't']);
    fs.writeFileSync(path.join(repoDir, '.gitattributes'), '*.txt diff=evil filter=evil\n*.md diff=a=b filter=a=b merge=evil\n');
    fs.writeFileSync(path.join(repoDir, 'a.txt'), 'one\n');
    fs.writeFileSync(path.join(repoDir, 'b.md'), 'one\n');
    sh(['add', '.']);
    sh(['commit', '-qm', 'base']);
    base = sh(['rev-parse', 'HEAD']);
    fs.writeFileSync(path.join(repoDir, 'a.txt'), 'one\ntwo\n');
    fs.writeFileSync(path.join(repoDir, 'b.md'), 'one\ntwo\n');
    sh(['commit', '-qam', 'head']);
    head = sh(['rev-parse', 'HEAD']);
  });
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  it('opened while clean, then the config turns hostile; opening it again is refused', async () => {
    repo = await GitRepo.open(repoDir);
    // Now the malicious config: every program it names leaves a marker named after its trigger.
    const evil = path.join(root, 'evil.sh');
    fs.writeFileSync(evil, `#!/bin/sh\ntouch "${marks}/$1"\nif [ -n "$2" ]; then cat "$2"; else cat; fi\n`, { mode: 0o755 });
    const hooks = path.join(root, 'hooks');
    fs.mkdirSync(hooks);
    for (const h of ['post-checkout', 'reference-transaction', 'pre-auto-gc', 'post-index-change']) {
      fs.writeFileSync(path.join(hooks, h), `#!/bin/sh\ntouch "${marks}/hook-${h}"\n`, { mode: 0o755 });
      fs.writeFileSync(path.join(repoDir, '.git', 'hooks', h), `#!/bin/sh\ntouch "${marks}/githook-${h}"\n`, { mode: 0o755 });
    }
    const set = (k: string, v: string) => sh(['config', k, v]);
    set('core.hooksPath', hooks);
    set('core.fsmonitor', `${evil} fsmonitor`);
    set('log.showSignature', 'true');
    set('gpg.program', `${evil} gpg`);
    set('diff.external', `${evil} external`);
    set('diff.evil.textconv', `${evil} textconv`);
    set('diff.evil.command', `${evil} diffcommand`);
    set('filter.evil.smudge', `${evil} smudge`);
    set('filter.evil.clean', `${evil} clean`);
    set('filter.evil.required', 'true');
    set('merge.evil.driver', `${evil} merge`);
    set('core.pager', `${evil} pager`);
    // A driver name holding "=": `-c filter.a=b.smudge=` would set the key "filter.a" instead.
    fs.appendFileSync(path.join(repoDir, '.git', 'config'), `[filter "a=b"]\n\tsmudge = ${evil} smudge-eq\n\tprocess = ${evil} process-eq\n[diff "a=b"]\n\ttextconv = ${evil} textconv-eq\n`);
    await expect(GitRepo.open(repoDir)).rejects.toMatchObject({ code: 'repo_config_refused' });
  });

  const markers = () => fs.readdirSync(marks).sort();

  it('the malicious config does run programs under plain git (the probe is live)', () => {
    sh(['diff', base, head]);
    expect(markers().length).toBeGreaterThan(0);
    for (const m of markers()) fs.rmSync(path.join(marks, m));
  });

  it('no operation the server performs on the already-open repo runs any of them', async () => {
    try {
      expect(await repo.revParse('HEAD')).toBe(head);
      await repo.commitDate(head);
      await repo.lsTree(head);
      expect((await repo.diffNameStatus(base, head)).map((f) => f.path).sort()).toEqual(['a.txt', 'b.md']);
      const patch = await repo.diffPatch(base, head, [], 3);
      expect(patch).toContain('+two');
      await repo.diffPatch(base, head, ['a.txt'], 0);
      await repo.mergeBase(base, head);
      expect((await repo.readFileAt(head, 'a.txt'))?.toString()).toBe('one\ntwo\n');
      await coChangePairs(repo, head, ['a.txt', 'b.md']);
      await repo.git(['log', '-1', head]);
      await repo.git(['grep', '-l', 'two', head, '--', '*.txt']).catch(() => '');
      const wt = path.join(root, 'wt');
      fs.mkdirSync(wt);
      await exportTree(repo, head, wt);
      expect(fs.readFileSync(path.join(wt, 'a.txt'), 'utf8')).toBe('one\ntwo\n');
    } finally {
      repo.close();
    }
    expect(markers()).toEqual([]);
  });
});
