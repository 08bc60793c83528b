/**
 * eval:cohorts scoring (bench/support/cohort-score.ts): the two rules of 47fbcde on hand-built partitions.
 * Rand index = pairs on which truth and partition agree (same/same or different/different) ÷ all pairs.
 */
import { engineGroups, randIndex } from '../../bench/support/cohort-score';

describe('eval:cohorts engine partition', () => {
  it('scores a rename\'s old path in its new path\'s cohort', () => {
    // Commit 0 edited a.ts and moved old.ts → new.ts (history uses --no-renames, so both paths are truth
    // files); commit 1 edited b.ts. The engine lists the rename once, under its new path.
    const truth = new Map([['src/a.ts', 0], ['src/old.ts', 0], ['src/new.ts', 0], ['src/b.ts', 1]]);
    const groups = engineGroups(
      [{ key: 'K1', files: ['src/a.ts', 'src/new.ts'] }, { key: 'K2', files: ['src/b.ts'] }],
      [{ path: 'src/a.ts' }, { path: 'src/new.ts', oldPath: 'src/old.ts' }, { path: 'src/b.ts' }],
      truth.keys(),
    );
    expect(groups.get('src/old.ts')).toBe('K1');
    // 6 pairs: a–old, a–new, old–new same/same; a–b, old–b, new–b different/different → 6/6 = 1.
    // (Without the rule old.ts would be a group of its own: a–old and old–new split → 4/6 ≈ 0.667.)
    expect(randIndex(truth, groups)).toBe(1);
  });

  it('makes each truth file absent from the output a group of its own', () => {
    // Commit 0: a.ts, x.ts; commit 1: b.ts, y.ts. The output lists only a.ts and b.ts.
    const truth = new Map([['a.ts', 0], ['b.ts', 1], ['x.ts', 0], ['y.ts', 1]]);
    const groups = engineGroups(
      [{ key: 'K1', files: ['a.ts'] }, { key: 'K2', files: ['b.ts'] }],
      [{ path: 'a.ts' }, { path: 'b.ts' }],
      truth.keys(),
    );
    expect(groups.get('x.ts')).not.toBe(groups.get('y.ts'));
    expect(new Set([...truth.keys()].map((f) => groups.get(f))).size).toBe(4);
    // 6 pairs: a–b, a–y, b–x, x–y different/different (agree); a–x, b–y same/split (disagree) → 4/6.
    // (If x and y were "together" — both unlabelled — x–y would be a joined different pair → 3/6 = 0.5.)
    expect(randIndex(truth, groups)).toBeCloseTo(4 / 6, 12);
  });
});
