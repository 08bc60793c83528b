import { baseName } from '../cite';
import type { SignalDef } from '../types';

/** Files of the change that earlier commits changed together (git/co-change.ts). Measured: did not earn its place on the five evaluation repositories. */
export const coChange: SignalDef = {
  id: 'co-change',
  stage: 'join',
  default: false,
  measured: 'off: over-merges; h3 mean 0.693 → 0.584 (joined 17.6 % → 28.2 %), click 0.700 → 0.628',
  joins: 'two changed files that changed together in most of their earlier commits',
  evidence: 'co-change history (weaker): a.ts and b.ts changed together in 4 of the last 5 commits',
  label: 'co-change history (weaker)',
  test: 'test/cohorts/weak-signals.test.ts',
  apply: ({ input, role, join }) => {
    for (const p of input.coChange ?? []) if (role.has(p.a) && role.has(p.b)) join(p.a, p.b, 'co-change', `${baseName(p.a)} and ${baseName(p.b)} changed together in ${p.together} of the last ${p.window} commits`);
  },
};
