import { baseName, firstFour } from '../cite';
import { testTitleCandidates, testTitlesSubject } from '../evidence/test-titles';
import type { SignalDef } from '../types';

/**
 * A test still without a source whose added test cases are titled for what one changed source's changed lines name
 * (`test('reusedSocket getter', …)` beside `return this._request?.reusedSocket`): a regression test and its fix, where
 * the test reaches the code only through the package's entry point (evidence/test-titles.ts).
 */
export const testTitles: SignalDef = {
  id: 'test-titles',
  stage: 'join',
  default: true,
  measured: 'review-18: no median lower on 13; got 0.667 → 0.700 (21 up, 4 down), commander 0.900 → 1.000',
  joins: 'a test still without a source and the one changed source whose changed lines name a rare identifier the titles of its added test cases name',
  evidence: 'a test titled for the change: a.test.ts adds test cases titled for `x`, which a.ts changes lines naming',
  label: 'a test titled for the change',
  test: 'test/compute/formation-signals.test.ts',
  apply: ({ input, semantic, role, uf, join }) => {
    if (!input.changedTitleWords || !input.changedIdentifiers || !input.identifierFrequency) return;
    const ids = new Map([...input.changedIdentifiers].filter(([p]) => role.has(p)));
    const sources = new Set(semantic.filter((f) => f.role === 'source').map((f) => f.path));
    const withSource = new Set([...sources].map((s) => uf.find(s)));
    const lone = semantic.filter((f) => f.role === 'test' && !withSource.has(uf.find(f.path))).map((f) => f.path);
    const candidates = testTitleCandidates(lone, sources, input.changedTitleWords, ids, input.identifierFrequency);
    for (const t of lone) {
      if (withSource.has(uf.find(t))) continue; // joined a source with another test of its cohort
      const hit = testTitlesSubject(candidates.get(t), (p) => uf.find(p));
      if (hit && join(t, hit.source, 'test-titles', `${baseName(t)} adds test cases titled for ${firstFour(hit.words)}, which ${baseName(hit.source)} changes lines naming`)) withSource.add(uf.find(t));
    }
  },
};
