/**
 * The cohort affinity fitter (bench/support/affinity-fit.ts) and the partition it shares with the engine
 * (src/cohorts/affinity.ts `partitionByAffinity`), on small synthetic dumps whose answer is known.
 */
import { crossValidate, DumpCase, fitLogistic, fitModel, modelGroups, rulesGroups, trainingPairs } from '../../bench/support/affinity-fit';
import { partitionByAffinity } from '../../src/cohorts/affinity';

/**
 * A case of four files a0 a1 (commit 0) and b0 b1 (commit 1). Feature 0 (`evidence`) is 1 on the two same-commit
 * pairs and, when `noise`, on one cross pair too; feature 1 (`dir`) is 1 on the pairs sharing a directory, a0–b0 and
 * a1–b1, which never share a commit.
 */
function synthetic(repo: string, noise: boolean): DumpCase {
  const files = ['a/x0.ts', 'b/x1.ts', 'a/y0.ts', 'b/y1.ts'];
  const truth = [0, 0, 1, 1];
  const pairs: DumpCase['pairs'] = [];
  for (let i = 0; i < 4; i++) {
    for (let j = i + 1; j < 4; j++) {
      const same = truth[i] === truth[j];
      const dir = files[i][0] === files[j][0];
      pairs.push([i, j, [same || (noise && i === 0 && j === 2) ? 1 : 0, dir ? 1 : 0]]);
    }
  }
  return { repo, files, truth, node: [0, 1, 2, 3], pairs };
}

describe('affinity fitter', () => {
  const features = ['evidence', 'dir'];
  const cases = [synthetic('r1', false), synthetic('r1', true), synthetic('r2', false), synthetic('r3', true)];

  it('weighs every repository the same and every case of it the same', () => {
    const rows = trainingPairs(cases);
    // 4 cases × 6 pairs; r1's two cases share its weight: 1 / (6 pairs × 2 cases), r2's one case 1 / 6.
    expect(rows).toHaveLength(24);
    expect(rows[0].w).toBeCloseTo(1 / 12, 12);
    expect(rows[12].w).toBeCloseTo(1 / 6, 12);
  });

  it('gives the predictive feature a positive weight and the misleading one a negative weight, the same on every run', () => {
    const a = fitLogistic(trainingPairs(cases), 2);
    const b = fitLogistic(trainingPairs(cases), 2);
    expect(a).toEqual(b);
    expect(a.weights[0]).toBeGreaterThan(2);
    expect(a.weights[1]).toBeLessThan(-1);
  });

  it('chooses a threshold that forms the two commits, and scores the held-out repository with a model fitted on the others', () => {
    const model = fitModel(cases, features);
    const groups = modelGroups(synthetic('r9', false), model);
    expect(groups.get('a/x0.ts')).toBe(groups.get('b/x1.ts'));
    expect(groups.get('a/y0.ts')).toBe(groups.get('b/y1.ts'));
    expect(groups.get('a/x0.ts')).not.toBe(groups.get('a/y0.ts'));
    const rows = crossValidate(cases, features);
    expect(rows.map((r) => r.repo)).toEqual(['r1', 'r2', 'r3']);
    // r2 (no noise): perfect; by-file splits the two same-commit pairs (4/6); by-directory splits them and joins the
    // two same-directory cross pairs, right only on x0–y1 and x1–y0 (2/6).
    expect(rows[1].fitted.median).toBe(1);
    expect(rows[1].byFile.median).toBeCloseTo(4 / 6, 12);
    expect(rows[1].byDir.median).toBeCloseTo(2 / 6, 12);
  });

  it('reads the rule engine\'s partition from the `rules` feature', () => {
    const c = synthetic('r1', false);
    const groups = rulesGroups(c, 0);
    expect(new Set(groups.values()).size).toBe(2);
  });
});

describe('partitionByAffinity', () => {
  it('joins the most probable pairs first and refuses a join past the size bound', () => {
    const pairs = [
      { a: 0, b: 1, p: 0.9 },
      { a: 1, b: 2, p: 0.8 },
      { a: 2, b: 3, p: 0.7 },
      { a: 3, b: 4, p: 0.3 },
    ];
    expect(partitionByAffinity(5, pairs, 0.5, 12, 'single')).toEqual([0, 0, 0, 0, 4]);
    // Bound 2: 0–1 joins, 1–2 would make three, 2–3 joins.
    expect(partitionByAffinity(5, pairs, 0.5, 2, 'single')).toEqual([0, 0, 2, 2, 4]);
  });

  it('with average linkage, joins two groups only when their cross pairs are probable on average', () => {
    // 0–1 certain; 2 is close to 1 only: single linkage chains it, average (0.9 + 0.1) / 2 = 0.5 < 0.6 does not.
    const pairs = [
      { a: 0, b: 1, p: 0.95 },
      { a: 1, b: 2, p: 0.9 },
      { a: 0, b: 2, p: 0.1 },
    ];
    expect(partitionByAffinity(3, pairs, 0.6, 12, 'single')).toEqual([0, 0, 0]);
    expect(partitionByAffinity(3, pairs, 0.6, 12, 'average')).toEqual([0, 0, 2]);
  });
});
