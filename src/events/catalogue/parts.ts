// One line per feature catalogue. Add yours here (keep it one line each).
import type { EventDefinition } from './define';

export const CATALOGUE_PARTS: EventDefinition[][] = [];
