export { formCohorts, MAX_COHORT_FILES } from './form';
export { ALL_SIGNALS, DEFAULT_SIGNALS, SIGNALS } from './registry';
export type { CoChangePair, FormationFile, FormationInput, FormationSignal, SignalDef } from './types';
