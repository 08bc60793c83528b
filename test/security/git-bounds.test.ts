import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DomainError } from '../../src/domain-error';
import { placeRemoteRegistration } from '../../src/commands/register-repo';
import { cloneWithin, dirBytes } from '../../src/git/clone';
import { GIT_MAX_OUTPUT_BYTES, GitRepo } from '../../src/git/repo';
import { defaultOperatorConfig, loadOperatorConfig } from '../../src/operator-config';
import { GitFixture } from '../support/git-fixture';

/**
 * SPEC §16 "bounded resources": what one git command may make the server hold in memory (a huge diff
 * read whole — it was 256 MiB) and what one workspace's clones may take on disk are bounded, with an
 * error that says which bound.
 */
describe('git output and clone disk usage are bounded', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-git-bounds-'));
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('a git command whose output passes the bound is refused git_output_too_large, naming the bound; the default is 64 MiB', async () => {
    expect(GIT_MAX_OUTPUT_BYTES).toBe(64 * 1024 * 1024);
    const f = new GitFixture('rl-git-bounds-diff-');
    try {
      f.write('a.txt', 'one\n');
      const base = f.commit('base');
      f.write('a.txt', `${'changed line\n'.repeat(2000)}`);
      const head = f.commit('head');
      const repo = await GitRepo.open(f.dir);
      try {
        const err = await repo.git(['diff', '--no-ext-diff', base, head], { maxBuffer: 4096 }).catch((e) => e);
        expect(err).toBeInstanceOf(DomainError);
        expect([err.code, err.status]).toEqual(['git_output_too_large', 'too_large']);
        expect(err.message).toMatch(/^git diff: output larger than 4096 bytes/);
        // Under the bound the same diff is read whole.
        expect((await repo.diffPatch(base, head)).length).toBeGreaterThan(20_000);
      } finally {
        repo.close();
      }
    } finally {
      f.cleanup();
    }
  });

  /** A local bare repository holding `bytes` of incompressible content. */
  const bareWith = (name: string, bytes: number): string => {
    const f = new GitFixture(`rl-git-bounds-${name}-`);
    f.write('blob.bin', randomBytes(bytes).toString('base64'));
    f.commit('content');
    const bare = path.join(tmp, `${name}.git`);
    execFileSync('git', ['clone', '--quiet', '--bare', f.dir, bare]);
    f.cleanup();
    return bare;
  };
  const fail = (why: string) => new DomainError('repo_clone_failed', why);
  const over = () => new DomainError('repo_quota_exceeded', 'over');

  it('a clone growing past what the workspace may still take is stopped and removed; one within it is kept', async () => {
    const bare = bareWith('big', 3 * 1024 * 1024);
    const target = path.join(tmp, 'ws', 'big');
    fs.mkdirSync(path.dirname(target), { recursive: true });
    const err = await cloneWithin(['clone', '--quiet', '--', `file://${bare}`, target], target, 1024 * 1024, fail, over).catch((e) => e);
    expect(err?.code).toBe('repo_quota_exceeded');
    expect(fs.existsSync(target)).toBe(false);
    await cloneWithin(['clone', '--quiet', '--', `file://${bare}`, target], target, 64 * 1024 * 1024, fail, over);
    expect(await dirBytes(target)).toBeGreaterThan(3 * 1024 * 1024);
  });

  it('a workspace already at its quota is refused before git runs, with the quota and the usage', async () => {
    const repoRoot = path.join(tmp, 'root');
    fs.mkdirSync(path.join(repoRoot, 'w1', 'old'), { recursive: true });
    fs.writeFileSync(path.join(repoRoot, 'w1', 'old', 'pack'), Buffer.alloc(2 * 1024 * 1024));
    const err = await placeRemoteRegistration({ repoId: 'next', url: 'https://github.com/acme/widgets.git' }, repoRoot, 'w1', [], 1024 * 1024).catch((e) => e);
    expect([err?.code, err?.status]).toEqual(['repo_quota_exceeded', 'too_large']);
    expect(err.message).toMatch(/may take 1048576 bytes under the repo root \(repoQuotaBytes\); 2097152 bytes were in use/);
    expect(fs.existsSync(path.join(repoRoot, 'w1', 'next'))).toBe(false);
  });

  it('repoQuotaBytes is an operator setting (default 8 GiB)', () => {
    expect(defaultOperatorConfig(tmp).repoQuotaBytes).toBe(8 * 1024 ** 3);
    const file = path.join(tmp, 'config.json');
    fs.writeFileSync(file, JSON.stringify({ repoQuotaBytes: 1024 ** 3 }));
    expect(loadOperatorConfig(tmp, { configFile: file }, {}).repoQuotaBytes).toBe(1024 ** 3);
  });
});
