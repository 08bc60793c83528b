import { baseName, cite } from '../cite';
import { AffinityCohort, testAffinityJoins } from '../evidence/test-affinity';
import type { FormationFile, SignalDef } from '../types';
import { pushTo } from '../group';

/**
 * Last of the direct signals: a cohort of sources that no test joined and a cohort of tests that joined no source, whose
 * changed lines' words are each other's clearly closest (a relative decision with a floor; evidence/test-affinity.ts).
 */
export const testAffinity: SignalDef = {
  id: 'test-affinity',
  stage: 'join',
  default: true,
  measured: 'review-19: no median or mean lower on 13, 46 cases up, 3 down; got 0.700 → 0.800',
  joins: 'a cohort of sources no test joined and a cohort of tests that joined no source whose changed lines\' words are clearly, both ways, each other\'s closest',
  evidence: 'a test closest in words to the change: a.test.ts adds lines whose words are closest to a.ts\'s changed lines (…; affinity 0.42, next 0.10)',
  label: 'a test closest in words to the change',
  test: 'test/compute/formation-signals.test.ts',
  apply: ({ input, semantic, uf, join }) => {
    const { affinityWords, affinityFrequency } = input;
    if (!affinityWords || !affinityFrequency) return;
    const members = new Map<string, FormationFile[]>();
    for (const f of semantic) pushTo(members, uf.find(f.path), f);
    const sources: AffinityCohort[] = [];
    const tests: AffinityCohort[] = [];
    for (const [root, files] of [...members].sort((a, b) => a[0].localeCompare(b[0]))) {
      const hasSource = files.some((f) => f.role === 'source');
      const hasTest = files.some((f) => f.role === 'test');
      if (hasSource === hasTest) continue;
      const words = new Set<string>();
      for (const f of files) for (const w of (hasSource ? affinityWords.get(f.path)?.changed : affinityWords.get(f.path)?.added) ?? []) words.add(w);
      (hasSource ? sources : tests).push({ key: root, words });
    }
    for (const j of testAffinityJoins(sources, tests, affinityFrequency)) {
      const test = members.get(j.test)!.map((f) => f.path).sort();
      const source = members.get(j.source)!.map((f) => f.path).sort();
      const names = (ps: string[]) => `${ps.slice(0, 2).map(baseName).join(', ')}${ps.length > 2 ? ` and ${ps.length - 2} more` : ''}`;
      const next = Math.max(j.nextTest, j.nextSource);
      join(test[0], source[0], 'test-affinity', `${names(test)} adds lines whose words are closest to ${names(source)}'s changed lines (${j.words.slice(0, 4).map((w) => `\`${cite(w)}\``).join(', ')}${j.words.length > 4 ? ` and ${j.words.length - 4} more` : ''}; affinity ${j.score.toFixed(2)}, next ${next.toFixed(2)})`);
    }
  },
};
