import { baseName } from '../cite';
import { typeTestSubject } from '../evidence/pairing';
import type { SignalDef } from '../types';

/**
 * A tsd type test and the declaration file beside it (`index.test-d.ts` ↔ `index.d.ts`, evidence/pairing.ts
 * `typeTestSubject`): joined even when the test already joined the implementation through a reference, since the
 * declarations are what it checks. Measured: earned its place on execa (docs/cohorts-history.md).
 */
export const typeTest: SignalDef = {
  id: 'type-test',
  stage: 'join',
  default: true,
  measured: 'review-16: execa 0.700 / 0.707 → 0.733 / 0.727 (33 cases up, none down); eleven others unchanged',
  joins: 'a tsd type test `X.test-d.ts` and the declaration file `X.d.ts` beside it',
  evidence: 'a type test and its declarations: index.test-d.ts checks index.d.ts',
  label: 'a type test and its declarations',
  test: 'test/compute/formation-signals.test.ts',
  apply: ({ semantic, join }) => {
    const sources = semantic.filter((f) => f.role === 'source').map((f) => f.path);
    for (const t of semantic.filter((f) => f.role === 'test')) {
      const subject = typeTestSubject(t.path, sources);
      if (subject) join(t.path, subject, 'type-test', `${baseName(t.path)} checks ${baseName(subject)}`);
    }
  },
};
