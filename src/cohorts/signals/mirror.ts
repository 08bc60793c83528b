import { cite } from '../cite';
import type { SignalDef } from '../types';

/** A generated or vendored copy of the changed tree under another root and its source (evidence/mirrors.ts); joined before the reference links so none can bound it out. */
export const mirror: SignalDef = {
  id: 'mirror',
  stage: 'pre-join',
  default: true,
  measured: 'review-10: zod median 0.833 → 1.000 (16 cases up, none down); eight others unchanged',
  joins: 'a changed file that is a generated or vendored copy of another changed file under another root, and that file',
  evidence: 'copies of one tree: deno/lib/types.ts is a generated mirror of src/types.ts',
  label: 'copies of one tree',
  test: 'test/compute/formation-signals.test.ts',
  apply: ({ input, role, join }) => {
    for (const m of [...(input.mirrors ?? [])].sort((x, y) => x.mirror.localeCompare(y.mirror) || x.source.localeCompare(y.source))) {
      if (role.has(m.mirror) && role.has(m.source)) join(m.mirror, m.source, 'mirror', `${cite(m.mirror)} is a generated mirror of ${cite(m.source)}`);
    }
  },
};
