import { reviewStreamOf, reviewTargetSchema } from '../../events/streams';
import { PROGRESS_EVENT_TYPES, progressFold, progressView, ProgressState, ProgressView } from '../../review-progress/progress';
import type { QueryDefinition } from './query';
import { z } from 'zod';

type Input = z.infer<typeof reviewTargetSchema>;

/** `review_studio.cohortProgress`: per cohort of the latest computation and per roster brief, how far review got. */
export const cohortProgressQuery: QueryDefinition<Input, ProgressState, ProgressView> = {
  name: 'cohortProgress',
  description: 'Review progress per cohort and reviewer brief (complete / partial / pending), keyed by stable cohort keys so it survives rebases.',
  input: reviewTargetSchema,
  access: { minRole: 'viewer' },
  affects: (input, e) => e.streamId === reviewStreamOf(input) && PROGRESS_EVENT_TYPES.has(e.type),
  fold: () => progressFold,
  sources: (input) => [reviewStreamOf(input)],
  view: (s) => progressView(s),
};
