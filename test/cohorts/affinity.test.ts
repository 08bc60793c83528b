/**
 * Pair evidence and the fitted affinity model (src/cohorts/affinity.ts, weights.json): what each pair's features say,
 * the committed model matching the engine's features, and formation by a model.
 */
import { formCohorts } from '../../src/cohorts';
import type { FormationFile, FormationInput } from '../../src/cohorts';
import { AFFINITY_FEATURES } from '../../src/cohorts/affinity';
import type { AffinityModel, PairEvidence } from '../../src/cohorts/types';
import { checkModel, WEIGHTS } from '../../src/cohorts/fitted-model';

const files = (): FormationFile[] => ['src/a.ts', 'src/b.ts', 'lib/c.ts'].map((p) => ({ path: p, status: 'modified', role: 'source', language: 'typescript', fragments: [] }));
const feature = (e: PairEvidence, a: string, b: string, f: string) => {
  const i = e.files.indexOf(a);
  const j = e.files.indexOf(b);
  const q = e.pairs.find((p) => p.a === Math.min(i, j) && p.b === Math.max(i, j))!;
  return q.x[AFFINITY_FEATURES.indexOf(f)];
};
/** A model that joins exactly the pairs of one directory. */
const sameDirModel = (): AffinityModel => {
  const weights = AFFINITY_FEATURES.map((f) => (f === 'same-dir' ? 6 : 0));
  return { version: 'test-1', features: AFFINITY_FEATURES, bias: -3, weights, threshold: 0.5, linkage: 'average' };
};

describe('pair evidence', () => {
  it('records a signal\'s join, the rules\' partition and the path features of each pair', () => {
    let evidence: PairEvidence | undefined;
    const coChange = [{ a: 'src/a.ts', b: 'lib/c.ts', together: 4, window: 5 }];
    const input: FormationInput = { files: files(), dependencyDiffs: [], signals: ['co-change'], coChange, onEvidence: (e) => (evidence = e) };
    const cohorts = formCohorts(input).map((c) => c.files.join(',')).sort();
    // The rules' output is what it was without the evidence hook.
    expect(cohorts).toEqual(['lib/c.ts,src/a.ts', 'src/b.ts']);
    expect(evidence!.files).toEqual(['src/a.ts', 'src/b.ts', 'lib/c.ts']);
    expect(evidence!.pairs).toHaveLength(3);
    expect(feature(evidence!, 'src/a.ts', 'lib/c.ts', 'signal:co-change')).toBe(1);
    expect(feature(evidence!, 'src/a.ts', 'lib/c.ts', 'rules')).toBe(1);
    expect(feature(evidence!, 'src/a.ts', 'lib/c.ts', 'same-dir')).toBe(0);
    expect(feature(evidence!, 'src/a.ts', 'lib/c.ts', 'dir-distance')).toBeCloseTo(2 / 6, 12);
    expect(feature(evidence!, 'src/a.ts', 'src/b.ts', 'rules')).toBe(0);
    expect(feature(evidence!, 'src/a.ts', 'src/b.ts', 'same-dir')).toBe(1);
    // a.ts is joined by the rules, so a–b are no two loners.
    expect(feature(evidence!, 'src/a.ts', 'src/b.ts', 'same-dir-loners')).toBe(0);
    expect(feature(evidence!, 'src/a.ts', 'src/b.ts', 'signal:co-change')).toBe(0);
  });
});

describe('formation by a fitted model', () => {
  it('joins the pairs the model finds probable, and the reason says so with the features that weighed most', () => {
    const cohorts = formCohorts({ files: files(), dependencyDiffs: [], signals: [], affinityModel: sameDirModel() });
    expect(cohorts.map((c) => c.files.join(',')).sort()).toEqual(['lib/c.ts', 'src/a.ts,src/b.ts']);
    // σ(6 − 3) = 0.95
    expect(cohorts.find((c) => c.files.length === 2)!.groupingReason).toBe('fitted affinity (test-1): a.ts + b.ts 0.95 (same-dir)');
  });

  it('refuses a model fitted with another feature list', () => {
    expect(() => checkModel({ ...sameDirModel(), features: ['rules'], weights: [1] })).toThrow(/refit/);
  });
});

describe('weights.json', () => {
  it('is fitted with the engine\'s features, on the training corpus, without the held-out repositories of the issue', () => {
    expect(WEIGHTS.features).toEqual(AFFINITY_FEATURES);
    expect(WEIGHTS.weights).toHaveLength(AFFINITY_FEATURES.length);
    expect(WEIGHTS.version).toMatch(/^affinity-\d+$/);
    expect(WEIGHTS.threshold).toBeGreaterThan(0);
    expect(WEIGHTS.threshold).toBeLessThan(1);
    expect(WEIGHTS.trainedOn.length).toBeGreaterThanOrEqual(60);
    for (const banned of ['honojs+hono', 'sindresorhus+ky', 'encode+httpx', 'spf13+cobra', 'pmndrs+zustand', 'koajs+koa', 'gin-gonic+gin', 'psf+requests']) expect(WEIGHTS.trainedOn).not.toContain(banned);
    expect(() => checkModel(WEIGHTS)).not.toThrow();
  });
});
