import { baseName } from '../cite';
import { subjectOf } from '../evidence/pairing';
import type { SignalDef } from '../types';

/** A test no reference joined to a source joins the changed source its name pairs with (evidence/pairing.ts `subjectOf`). */
export const testSubject: SignalDef = {
  id: 'test-subject',
  stage: 'join',
  default: true,
  measured: 'click median 0.724 → 0.793, h3 0.762 → 0.800; by name parts (review-19): got 0.700 → 0.714, chi 0.902 → 1.000',
  joins: 'a changed test that no reference joined and the changed source its name pairs with (`foo.test.ts` ↔ `foo.ts`)',
  evidence: 'test ↔ subject: foo.test.ts tests foo.ts',
  label: 'test ↔ subject',
  test: 'test/compute/formation-signals.test.ts',
  apply: ({ semantic, joinedTests, join }) => {
    const sources = semantic.filter((f) => f.role === 'source').map((f) => f.path);
    for (const t of semantic.filter((f) => f.role === 'test' && !joinedTests.has(f.path))) {
      const subject = subjectOf(t.path, sources);
      if (subject) join(t.path, subject, 'test-subject', `${baseName(t.path)} tests ${baseName(subject)}`);
    }
  },
};
