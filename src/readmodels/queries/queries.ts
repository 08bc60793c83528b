import type { QueryDefinition } from './query';
import { verdictQuery } from './verdict';
import { nodeStatusQuery } from './node-status';
import { reReviewDeltaQuery } from './re-review-delta';
import { reviewStatusQuery } from './review-status';
import { reportingGroupsQuery } from './reporting-groups';
import { ciSignalsQuery } from './ci-signals';
import { auditQuery } from './audit';
import { cohortProgressQuery } from './cohort-progress';
import { reviewMetricsQuery } from './review-metrics';
import { cohortContextQuery } from './cohort-context';
import { cohortsQuery } from './cohorts';
import { apiContractQuery } from './api-contract';
import { visualQuery } from './visual';
import { dependencyDiffsQuery } from './dependency-diffs';
import { blastRadiusQuery } from './blast-radius';
import { cohortImpactQuery } from './cohort-impact';
import { publishPreviewQuery } from './publish-preview';

/** Every query of the ledger (RPC `review_studio.<name>` + `watch<Name>`). One line each. */
export const QUERIES: QueryDefinition[] = [
  verdictQuery,
  nodeStatusQuery,
  reReviewDeltaQuery,
  reviewStatusQuery,
  reportingGroupsQuery,
  ciSignalsQuery,
  auditQuery,
  cohortProgressQuery,
  reviewMetricsQuery,
  cohortContextQuery,
  cohortsQuery,
  apiContractQuery,
  visualQuery,
  dependencyDiffsQuery,
  blastRadiusQuery,
  cohortImpactQuery,
  publishPreviewQuery,
];

export const queryByName = (name: string): QueryDefinition | undefined => QUERIES.find((q) => q.name === name);
