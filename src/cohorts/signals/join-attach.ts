import type { SignalDef } from '../types';

/**
 * Against over-merging: in the `join` stage (after the references and the tests' votes), a signal attaches a file to a
 * cohort but never merges two cohorts of two or more files each (src/cohorts/form.ts `ruleFormation`), so one weak join
 * cannot chain two pieces of work together.
 */
export const joinAttach: SignalDef = {
  id: 'join-attach',
  stage: 'input',
  default: false,
  measured: 'off: training half 17 cases up / 37 down of 186 recomputed (mean of medians 0.883 → 0.876, 8 medians down, sequelize lifted above by-file)',
  joins: 'none: the join-stage signals attach single files to cohorts, never merge two cohorts of several files',
  evidence: 'fewer joins of whole cohorts',
  test: 'test/cohorts/boilerplate-lines.test.ts',
};
