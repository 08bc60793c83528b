import { parseUnifiedDiff, unquoteGitPath } from '../../src/git/unified-diff';
import { GitFixture } from '../support/git-fixture';

describe('parseUnifiedDiff (the one git diff parser)', () => {
  test('real git output: renames, deletions, hunk ranges and text; a removed "-- x" line is body, not a header', () => {
    const g = new GitFixture('rl-udiff-');
    g.write('a.txt', 'one\ntwo\n-- x\nfour\n');
    g.write('old/name.txt', 'keep\nkeep\nkeep\nkeep\nkeep\nchange me\n');
    g.write('gone.txt', 'bye\n');
    const base = g.commit('base');
    g.write('a.txt', 'one\ntwo\nfour\n');
    g.remove('old/name.txt');
    g.write('new/name.txt', 'keep\nkeep\nkeep\nkeep\nkeep\nchanged\n');
    g.remove('gone.txt');
    const head = g.commit('head');
    const files = parseUnifiedDiff(g.git('diff', '--find-renames', '-U0', base, head));
    g.cleanup();
    const byPath = new Map(files.map((f) => [f.path, f]));
    expect([...byPath.keys()].sort()).toEqual(['a.txt', 'gone.txt', 'new/name.txt']);
    const a = byPath.get('a.txt')!;
    expect(a.hunks).toEqual([{ oldStart: 3, oldCount: 1, newStart: 2, newCount: 0, text: '@@ -3 +2,0 @@ two\n--- x' }]);
    expect(byPath.get('new/name.txt')).toMatchObject({ oldPath: 'old/name.txt', hunks: [{ oldStart: 6, oldCount: 1, newStart: 6, newCount: 1 }] });
    expect(byPath.get('gone.txt')!.hunks[0]).toMatchObject({ oldStart: 1, oldCount: 1, newStart: 0, newCount: 0 });
  });

  test('paths git quotes C-style (octal UTF-8 bytes for non-ASCII names, \\t, \\", \\\\) come back as the real paths', () => {
    const g = new GitFixture('rl-udiff-quoted-');
    try {
      const names = ['docs/zh-CN/可变参数.md', 'src/tab\there.ts', 'src/quote"d.ts', 'src/back\\slash.ts', 'src/emoji-😀.ts'];
      for (const n of names) g.write(n, 'one\n');
      const base = g.commit('base');
      for (const n of names) g.write(n, 'two\n');
      g.commit('head');
      const patch = g.git('-c', 'core.quotePath=true', 'diff', '--no-color', '-U0', base, 'HEAD');
      expect(patch).toContain('\\345\\217\\257');
      expect(parseUnifiedDiff(patch).map((f) => f.path).sort()).toEqual([...names].sort());
    } finally {
      g.cleanup();
    }
    expect(unquoteGitPath('"a\\tb\\\\c\\"d"')).toBe('a\tb\\c"d');
  });
});
