import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { GitRepo } from '../../src/git/repo';
import { GitFixture } from '../support/git-fixture';
import { command, serverFixture } from '../rpc/support';

/**
 * SPEC §16: a repo registered over RPC has its git dir exactly `<top>/.git`, with no links out of it.
 * The attack from issue 36: a folder in the tenant's own clone is itself a git dir — `HEAD`, a `config`
 * with `core.worktree=.`, and tracked symlinks `objects` / `refs` into another workspace's repo — and
 * registering that folder indexed the other workspace's branches and let `reviewDiff` return its source.
 */
describe("a registered repo's git dir is confined to <top>/.git", () => {
  let fx: Awaited<ReturnType<typeof serverFixture>>;
  const fixtures: GitFixture[] = [];
  let victim: GitFixture;
  let victimHead: string;
  beforeAll(async () => {
    fx = await serverFixture();
    // Another workspace's private repo under the same repo root.
    victim = new GitFixture('private-', path.join(fx.dataDir, 'repos', 'other-ws'));
    victim.write('secret.ts', 'export const apiKey = "victim-secret";\n');
    victimHead = victim.commit('private');
  });
  afterAll(async () => {
    await fx.close();
    for (const g of fixtures) g.cleanup();
  });
  const rootOf = () => path.join(fx.dataDir, 'repos', fx.workspaceId);
  const register = (payload: Record<string, unknown>) => command(fx.server.url, fx.ownerToken, fx.workspaceId, 'registerRepo', payload);

  it("the issue's attack: a git dir committed into the tenant's clone, linking into another workspace's repo, is refused", async () => {
    const clone = new GitFixture('clone-', rootOf());
    fixtures.push(clone);
    clone.git('remote', 'add', 'origin', 'https://github.com/tenant/app.git');
    const rel = path.relative(path.join(clone.dir, 'evil'), path.join(victim.dir, '.git'));
    clone.write('evil/HEAD', 'ref: refs/heads/main\n');
    clone.write('evil/config', '[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = .\n[remote "origin"]\n\turl = https://github.com/tenant/evil.git\n');
    fs.symlinkSync(path.join(rel, 'objects'), path.join(clone.dir, 'evil', 'objects'));
    fs.symlinkSync(path.join(rel, 'refs'), path.join(clone.dir, 'evil', 'refs'));
    clone.commit('a folder that is a git dir');
    // The probe is live: plain git, in that folder, reads the victim's commit.
    expect(clone.git('-C', 'evil', 'rev-parse', 'HEAD')).toBe(victimHead);

    const r = await register({ repoId: 'evil', path: path.join(path.basename(clone.dir), 'evil') });
    expect(r.error?.data?.code).toBe('repo_git_dir_refused');
    expect(r.error?.message).toContain('is a git directory itself, not a work tree with a .git directory');
    const ws = await fx.server.ledger.workspace(fx.workspaceId);
    for await (const e of ws.store.readAll()) expect(e.type).not.toBe('RepoRegistered');
  });

  describe('GitRepo.open refuses every other shape of a git dir that is not its own', () => {
    let scratch: string;
    beforeEach(() => {
      scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-gitdir-'));
    });
    afterEach(() => fs.rmSync(scratch, { recursive: true, force: true }));
    const refusal = (what: string) => ({ code: 'repo_git_dir_refused', message: expect.stringContaining(what) });

    it('.git as a symlink to another repo', async () => {
      const top = path.join(scratch, 'top');
      fs.mkdirSync(top);
      fs.symlinkSync(path.join(victim.dir, '.git'), path.join(top, '.git'));
      await expect(GitRepo.open(top)).rejects.toMatchObject(refusal('.git" is a symlink'));
    });

    it('a .git file (gitdir: …) pointing at another repo', async () => {
      const top = path.join(scratch, 'top');
      fs.mkdirSync(top);
      fs.writeFileSync(path.join(top, '.git'), `gitdir: ${path.join(victim.dir, '.git')}\n`);
      await expect(GitRepo.open(top)).rejects.toMatchObject(refusal('is not a directory'));
    });

    it('a real .git whose objects and refs are links into another repo', async () => {
      const g = new GitFixture('linked-', scratch);
      for (const name of ['objects', 'refs']) {
        fs.rmSync(path.join(g.dir, '.git', name), { recursive: true });
        fs.symlinkSync(path.join(victim.dir, '.git', name), path.join(g.dir, '.git', name));
      }
      await expect(GitRepo.open(g.dir)).rejects.toMatchObject(refusal('objects" leads outside the git dir'));
    });

    it('a link one level down (refs/heads) into another repo', async () => {
      const g = new GitFixture('linked-', scratch);
      fs.rmSync(path.join(g.dir, '.git', 'refs', 'heads'), { recursive: true });
      fs.symlinkSync(path.join(victim.dir, '.git', 'refs', 'heads'), path.join(g.dir, '.git', 'refs', 'heads'));
      await expect(GitRepo.open(g.dir)).rejects.toMatchObject(refusal('heads" is a symlink that leads outside the git dir'));
    });

    it("a pack file two levels down linked to another repo's pack", async () => {
      const g = new GitFixture('pack-', scratch);
      victim.git('gc', '-q');
      const pack = fs.readdirSync(path.join(victim.dir, '.git', 'objects', 'pack')).find((f) => f.endsWith('.pack'))!;
      fs.mkdirSync(path.join(g.dir, '.git', 'objects', 'pack'), { recursive: true });
      fs.symlinkSync(path.join(victim.dir, '.git', 'objects', 'pack', pack), path.join(g.dir, '.git', 'objects', 'pack', 'pack-borrowed.pack'));
      await expect(GitRepo.open(g.dir)).rejects.toMatchObject(refusal('pack-borrowed.pack" is a symlink that leads outside the git dir'));
    });

    it('objects/info/alternates borrowing another repo\'s objects', async () => {
      const g = new GitFixture('alt-', scratch);
      fs.mkdirSync(path.join(g.dir, '.git', 'objects', 'info'), { recursive: true });
      fs.writeFileSync(path.join(g.dir, '.git', 'objects', 'info', 'alternates'), `${path.join(victim.dir, '.git', 'objects')}\n`);
      await expect(GitRepo.open(g.dir)).rejects.toMatchObject(refusal('borrows objects from another repository'));
    });

    it('a commondir redirect', async () => {
      const g = new GitFixture('common-', scratch);
      fs.writeFileSync(path.join(g.dir, '.git', 'commondir'), `${path.join(victim.dir, '.git')}\n`);
      await expect(GitRepo.open(g.dir)).rejects.toMatchObject({ code: 'repo_git_dir_refused' });
    });

    it('a plain repo, and a subfolder of it, open', async () => {
      const g = new GitFixture('plain-', scratch);
      g.write('sub/a.txt', 'a\n');
      g.commit('a');
      for (const dir of [g.dir, path.join(g.dir, 'sub')]) {
        const repo = await GitRepo.open(dir);
        expect(fs.realpathSync(repo.root)).toBe(fs.realpathSync(g.dir));
        repo.close();
      }
    });
  });
});
