// One line per feature catalogue. Add yours here (keep it one line each).
import type { EventDefinition } from './define';
import { repoEvents } from './repo';
import { computeEvents } from './compute';
import { contractEvents } from './contract';
import { visualEvents } from './visual';
import { reviewEvents } from './review';
import { progressEvents } from './progress';
import { statusCheckEvents } from './status-check';

export const CATALOGUE_PARTS: EventDefinition[][] = [
  repoEvents,
  computeEvents,
  contractEvents,
  visualEvents,
  reviewEvents,
  progressEvents,
  statusCheckEvents,
];
