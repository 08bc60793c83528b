import { baseName, firstFour } from '../cite';
import type { SignalDef } from '../types';

/**
 * A hand-written declaration file and the JavaScript beside it that both change one member (`index.d.ts` adds `s(…)`,
 * `index.js` sets `$.s`): the implementation never imports its typings (evidence/declared-members.ts). Measured: execa 9 up, none down.
 */
export const declaredMember: SignalDef = {
  id: 'declared-member',
  stage: 'join',
  default: true,
  measured: 'review-20: execa 0.784 / 0.753 → 0.800 / 0.757 alone (9 cases up, none down)',
  joins: 'a hand-written `X.d.ts` and the `X.js` beside it, both changing a member the implementation starts or stops naming',
  evidence: 'a declaration and its implementation: index.d.ts and index.js both change `s`',
  label: 'a declaration and its implementation',
  test: 'test/compute/formation-signals.test.ts',
  apply: ({ input, role, join }) => {
    for (const p of input.declaredMembers ?? []) {
      if (role.has(p.declaration) && role.has(p.implementation)) join(p.declaration, p.implementation, 'declared-member', `${baseName(p.declaration)} and ${baseName(p.implementation)} both change ${firstFour(p.names)}`);
    }
  },
};
