import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { GLOB_MATCH_STEPS, GlobMatchBudgetExceeded, loadRenderConfig, touchesPaths } from '../../src/axes/visual/harness/render';
import { GitRepo } from '../../src/git/repo';

/**
 * `visual.paths` globs come from a repository's own `.review-ledger.json` (read even where repo
 * configuration is not enabled, to say why nothing rendered) and are matched against every changed
 * file name — both chosen by repository content. A backtracking RegExp let "*a*a*a…*b" against one
 * long file name block the server's event loop for minutes (every workspace stalls). Matching must be
 * linear, keep the glob meaning, and a repo's glob list is bounded.
 */
describe('repository globs cannot stall the server', () => {
  /** The meaning the globs had (a reference written out here, used only on harmless globs). */
  const reference = (glob: string, file: string): boolean => {
    let re = '';
    for (let i = 0; i < glob.length; i++) {
      const ch = glob[i];
      if (ch === '*' && glob[i + 1] === '*') {
        re += glob[i + 2] === '/' ? '(?:.*/)?' : '.*';
        i += glob[i + 2] === '/' ? 2 : 1;
      } else if (ch === '*') re += '[^/]*';
      else if (ch === '?') re += '[^/]';
      else re += ch.replace(/[.+^${}()|[\]\\]/g, '\\$&');
    }
    return new RegExp(`^${re}(?:/.*)?$`).test(file);
  };

  it('a catastrophic glob against a long file name answers at once', () => {
    const evil = '*a'.repeat(10) + 'b';
    const file = 'a'.repeat(40);
    const t0 = process.hrtime.bigint();
    expect(touchesPaths([{ status: 'modified', path: file }], [evil])).toBe(false);
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    // A backtracking matcher takes tens of seconds here; a linear one well under a millisecond.
    expect(ms).toBeLessThan(2000);
  });

  it('all the matches of one PR share a step budget: 100 globs of 500 characters against 1,000 paths of 4,000 characters are refused, not walked (~160 ms per file)', () => {
    const globs = Array.from({ length: 100 }, (_, i) => `${'*'.repeat(498)}${i}!`);
    const changed = Array.from({ length: 1_000 }, (_, i) => ({ status: 'modified' as const, path: `${'a'.repeat(3_990)}/${i}.ts` }));
    expect(() => touchesPaths(changed, globs)).toThrow(GlobMatchBudgetExceeded);
    expect(() => touchesPaths(changed, globs)).toThrow(`visual.paths: matching these globs against this PR's changed files would take more than ${GLOB_MATCH_STEPS} steps`);
    // Real globs against a PR of 20,000 real paths: answered, not refused (a 20 M budget refused it).
    expect(touchesPaths(Array.from({ length: 20_000 }, (_, i) => ({ status: 'modified' as const, path: `src/components/feature-${i}/view-component.tsx` })), ['src/ui/**', 'src/components/**/*.css', 'goldens/**/*.png'])).toBe(false);
  });

  it('keeps what the globs mean', () => {
    const globs = ['src/ui', 'src/**/*.tsx', '**/*.css', 'a?c/*', 'lib/**', '*.md', 'x/**/y', 'docs/*/index.html', '**', 'a.b+c(d)'];
    const files = ['src/ui/button.tsx', 'src/ui', 'src/uix/a.ts', 'src/a/b/c.tsx', 'src/c.tsx', 'styles/x.css', 'x.css', 'abc/d', 'abc/d/e', 'abd', 'lib', 'lib/x/y',
      'README.md', 'docs/README.md', 'x/y', 'x/p/q/y', 'x/py', 'docs/a/index.html', 'docs/a/b/index.html', 'a.b+c(d)', 'a.b+c(d)/e', 'aXb+c(d)'];
    for (const g of globs) for (const f of files) expect([g, f, touchesPaths([{ status: 'modified', path: f }], [g])]).toEqual([g, f, reference(g, f)]);
    expect(touchesPaths([{ status: 'renamed', path: 'new.ts', oldPath: 'src/ui/old.ts' }], ['src/ui'])).toBe(true);
  });

  it("a repository's glob list is bounded", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-globs-'));
    try {
      const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, encoding: 'utf8' }).trim();
      git('init', '-q');
      fs.writeFileSync(path.join(dir, '.review-ledger.json'), JSON.stringify({ visual: { renderCommand: 'true', outputDir: 'out', paths: Array.from({ length: 101 }, (_, i) => `p${i}/**`) } }));
      git('add', '.');
      git('-c', 'user.email=t@example.com', '-c', 'user.name=t', 'commit', '-qm', 'c');
      const repo = await GitRepo.open(dir);
      try {
        const cfg = await loadRenderConfig(repo, git('rev-parse', 'HEAD'), undefined, true);
        expect(cfg).toEqual({ error: expect.stringContaining('at most 100 globs') });
        // A configuration file of megabytes is not parsed at all.
        fs.writeFileSync(path.join(dir, '.review-ledger.json'), JSON.stringify({ visual: { renderCommand: 'true', outputDir: 'out', pad: 'x'.repeat(300 * 1024) } }));
        git('add', '.');
        git('-c', 'user.email=t@example.com', '-c', 'user.name=t', 'commit', '-qm', 'big');
        expect(await loadRenderConfig(repo, git('rev-parse', 'HEAD'), undefined, true)).toEqual({ error: expect.stringContaining('more than the 262144') });
        expect(await loadRenderConfig(repo, git('rev-parse', 'HEAD'), undefined, false)).toBeUndefined();
      } finally {
        repo.close();
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
