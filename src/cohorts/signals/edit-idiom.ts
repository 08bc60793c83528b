import type { SignalDef } from '../types';

/**
 * A shared changed line (or substitution) that the head commit's unchanged code already holds is an idiom being spread
 * file by file, not one edit: computeReview drops those keys from `similar-edit`'s and `same-substitution`'s inputs
 * before formation (evidence/similar-edits.ts `idiomEditKeys`, compute/review.ts).
 */
export const editIdiom: SignalDef = {
  id: 'edit-idiom',
  stage: 'input',
  default: true,
  measured: 'review-15: starlette 0.800 / 0.685 → 1.000 / 0.828; no median lower',
  joins: 'none: keeps `similar-edit` and `same-substitution` from joining files over a line the unchanged code already holds',
  evidence: 'fewer `the same edit` and `the same substitution` joins',
  test: 'test/compute/formation-signals.test.ts',
};
