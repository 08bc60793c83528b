import { parseUnifiedDiff } from '../../src/git/unified-diff';
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
});
