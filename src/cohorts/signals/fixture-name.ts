import { cite } from '../cite';
import { fixtureNamings } from '../evidence/fixture-names';
import type { SignalDef } from '../types';

/**
 * A changed file whose text names another changed file in a string literal (`execa('verbose-script.js')`: a test and the
 * fixture script it runs by name), where no import edge exists (evidence/fixture-names.ts). Direct evidence, so with
 * the name-pairing signals. Measured: execa 13 cases up, 6 down; the rest unchanged but commander, 1 up (docs/cohorts-history.md).
 */
export const fixtureName: SignalDef = {
  id: 'fixture-name',
  stage: 'join',
  default: true,
  measured: 'review-20: no median or mean lower on 19; execa 0.784 / 0.753 → 0.800 / 0.760 (13 up, 6 down)',
  joins: 'a changed test naming another changed file in a string literal (`execa(\'verbose-script.js\')`), and that file',
  evidence: 'a file named by another: test/verbose.js names test/fixtures/verbose-script.js in `verbose-script.js`',
  label: 'a file named by another',
  test: 'test/compute/fixture-name.test.ts',
  apply: ({ input, semantic, join }) => {
    if (!input.nameLiterals || !input.head) return;
    for (const n of fixtureNamings(input.nameLiterals, semantic, input.head.index.files.keys(), input.base?.index.files.keys())) join(n.from, n.to, 'fixture-name', `${cite(n.from)} names ${cite(n.to)} in \`${cite(JSON.stringify(n.literal).slice(1, -1))}\``);
  },
};
