import { z } from 'zod';
import { principalSchema } from '../envelope';
import { cohortSchema } from './compute';
import { defineEvent } from './define';
import { reviewerBriefSchema, shaSchema } from './review';
import { roleSchema } from '../roles';

export const cohortReviewStatusSchema = z.enum(['complete', 'partial']);
export type CohortReviewStatus = z.infer<typeof cohortReviewStatusSchema>;

/**
 * One reviewer brief says how far it got with one cohort (seeds/004 §2.4: a unit that could not be
 * finished is marked partial, never passed off as clean). Keyed by the content-derived cohort key, so
 * the mark survives rebases and force-pushes; `headSha` records which head it was made on.
 */
export const CohortReviewMarked = defineEvent(
  'CohortReviewMarked',
  'pr',
  1,
  z.object({
    cohortKey: cohortSchema.shape.key,
    brief: reviewerBriefSchema,
    status: cohortReviewStatusSchema,
    reason: z.string().max(4000).optional(),
    headSha: shaSchema,
    by: principalSchema,
    role: roleSchema,
  }),
);

export const progressEvents = [CohortReviewMarked];
