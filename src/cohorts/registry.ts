import type { FormationSignal, SignalDef, SignalStage } from './types';
import { changedReference } from './signals/changed-reference';
import { testHub } from './signals/test-hub';
import { codeChange } from './signals/code-change';
import { wrapper } from './signals/wrapper';
import { typeBindings } from './signals/type-bindings';
import { typeEdges } from './signals/type-edges';
import { newSymbolImport } from './signals/new-symbol-import';
import { changedImport } from './signals/changed-import';
import { mirror } from './signals/mirror';
import { testSubject } from './signals/test-subject';
import { typeTest } from './signals/type-test';
import { fixtureName } from './signals/fixture-name';
import { declaredMember } from './signals/declared-member';
import { memberUse } from './signals/member-use';
import { similarEdit } from './signals/similar-edit';
import { editIdiom } from './signals/edit-idiom';
import { boilerplateLinesSignal } from './signals/boilerplate-lines';
import { editRareId } from './signals/edit-rare-id';
import { joinAttach } from './signals/join-attach';
import { sharedIdentifiers } from './signals/shared-identifiers';
import { newIdentifier } from './signals/new-identifier';
import { toolingConfig } from './signals/tooling-config';
import { testNames } from './signals/test-names';
import { testTitles } from './signals/test-titles';
import { sameSubstitution } from './signals/same-substitution';
import { testAffinity } from './signals/test-affinity';
import { coChange } from './signals/co-change';
import { directory } from './signals/directory';

/**
 * Every formation signal, in the order formCohorts applies them: by stage (STAGES), then in this order within a
 * stage. The order is part of the result (a join refused by the cohort bound stays refused, a test joined by an earlier
 * signal is no candidate for a later one), so a new signal goes where it was measured. docs/cohorts.md's signal table is
 * rendered from this list (cohort-docs.ts).
 */
export const SIGNALS: readonly SignalDef[] = [
  changedReference,
  testHub,
  codeChange,
  wrapper,
  typeBindings,
  typeEdges,
  newSymbolImport,
  changedImport,
  mirror,
  testSubject,
  typeTest,
  fixtureName,
  declaredMember,
  memberUse,
  similarEdit,
  editIdiom,
  boilerplateLinesSignal,
  editRareId,
  joinAttach,
  sharedIdentifiers,
  newIdentifier,
  toolingConfig,
  testNames,
  testTitles,
  sameSubstitution,
  testAffinity,
  coChange,
  directory,
];

/** The stages in the order formation runs them. */
export const STAGES: readonly SignalStage[] = ['input', 'edge', 'link', 'pre-join', 'join'];

export const ALL_SIGNALS: readonly FormationSignal[] = SIGNALS.map((s) => s.id);
/** The signals on unless a computation names its own (each measured with and without, docs/cohorts.md). */
export const DEFAULT_SIGNALS: readonly FormationSignal[] = SIGNALS.filter((s) => s.default).map((s) => s.id);

/** The registry's entries of one stage, in order. */
export function signalsOf<S extends SignalStage>(stage: S): Array<Extract<SignalDef, { stage: S }>> {
  return SIGNALS.filter((s): s is Extract<SignalDef, { stage: S }> => s.stage === stage);
}
