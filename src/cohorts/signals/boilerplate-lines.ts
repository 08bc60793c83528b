import type { SignalDef } from '../types';

/**
 * A changed line that recurs across many repositories' histories (`defer resp.Body.Close()`, `if err != nil {`) says
 * nothing about which piece of work two files belong to: computeReview drops the keys of the learned boilerplate lines
 * (src/cohorts/boilerplate-lines.json, bench/learn-boilerplate.ts) from `similar-edit`'s input before formation.
 */
export const boilerplateLinesSignal: SignalDef = {
  id: 'boilerplate-lines',
  stage: 'input',
  default: false,
  measured: 'off: training half (37 repos, 184 recomputed cases) 0 up / 1 down at every threshold 3-12 (mobx: `configurable: true`); validation half (36 repos, 181 cases) 0 / 0 at 3',
  joins: 'none: keeps `similar-edit` from joining files over a line learned as boilerplate across repositories',
  evidence: 'fewer `the same edit` joins',
  test: 'test/cohorts/boilerplate-lines.test.ts',
};
