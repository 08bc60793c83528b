import type { SignalDef } from '../types';

/**
 * The same edit in two files (`similar-edit`'s line, `same-substitution`'s substitution) joins them only when their
 * changed lines also name a common rare identifier (evidence/shared-identifiers.ts `sharesRareIdentifier`): an edit
 * without one (`except ValueError:` → `except (ValueError, TypeError):` in two modules) is as often two pieces of work
 * as one. Each file of an edit joins the first earlier file of that edit it shares a rare identifier with.
 */
export const editRareId: SignalDef = {
  id: 'edit-rare-id',
  stage: 'input',
  default: false,
  measured: 'pending',
  joins: 'none: `similar-edit` and `same-substitution` join two files only when they also name a common rare identifier',
  evidence: 'fewer `the same edit` and `the same substitution` joins',
  test: 'test/cohorts/boilerplate-lines.test.ts',
};
