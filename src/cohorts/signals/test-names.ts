import { baseName, firstFour } from '../cite';
import { ChangedNames, testNameCandidates, testNamesSubject } from '../evidence/shared-identifiers';
import type { SignalDef } from '../types';

/**
 * A test that every other signal left without a source (a feature-named suite reaching the code only through the
 * package's entry point) joins the one changed source whose changed lines name most of what its own do
 * (evidence/shared-identifiers.ts). Measured: thirteen repositories, 19 cases up, none down.
 */
export const testNames: SignalDef = {
  id: 'test-names',
  stage: 'join',
  default: true,
  measured: 'review-13: 19 cases up, none down on 13 repositories',
  joins: 'a test nothing joined to a source and the one changed source whose changed lines name most of the same rare identifiers and string literals',
  evidence: 'a test and the source it names: a.test.ts and a.ts both change lines naming `x`',
  label: 'a test and the source it names',
  test: 'test/compute/formation-signals.test.ts',
  apply: ({ input, semantic, uf, join }) => {
    if (!input.changedIdentifiers || !input.identifierFrequency) return;
    const names = new Map<string, ChangedNames>();
    for (const f of semantic) names.set(f.path, { identifiers: input.changedIdentifiers.get(f.path) ?? new Set(), literals: input.changedLiterals?.get(f.path) ?? new Set() });
    const sources = semantic.filter((f) => f.role === 'source').map((f) => f.path);
    const withSource = new Set(sources.map((s) => uf.find(s)));
    const lone = semantic.filter((f) => f.role === 'test' && !withSource.has(uf.find(f.path))).map((f) => f.path);
    const candidates = testNameCandidates(lone, new Set(sources), names, input.identifierFrequency);
    for (const t of lone) {
      if (withSource.has(uf.find(t))) continue; // joined a source with another test of its cohort
      const hit = testNamesSubject(candidates.get(t), (p) => uf.find(p));
      if (hit && join(t, hit.source, 'test-names', `${baseName(t)} and ${baseName(hit.source)} both change lines naming ${firstFour(hit.names)}`)) withSource.add(uf.find(t));
    }
  },
};
