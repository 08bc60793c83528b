import { baseName, firstFour } from '../cite';
import { sharedIdentifierPairs } from '../evidence/shared-identifiers';
import type { SignalDef } from '../types';

/**
 * Rare identifiers (named in at most 5 % of the commit's indexed files) on the changed lines of exactly two changed files,
 * at least three of them: one piece of work without a resolved edge (evidence/shared-identifiers.ts). Measured: eight
 * repositories, 16 cases up, none down (docs/cohorts-history.md).
 */
export const sharedIdentifiers: SignalDef = {
  id: 'shared-identifiers',
  stage: 'join',
  default: true,
  measured: 'session 29: 16 cases up, none down on eight; commander 0.800 → 0.833, chi 0.868 → 0.902',
  joins: 'the only two changed files whose changed lines name at least three of the same rare identifiers',
  evidence: 'rare identifiers both change: a.ts and b.ts both change lines naming `x`, `y`, `z`',
  label: 'rare identifiers both change',
  test: 'test/compute/formation-signals.test.ts',
  apply: ({ input, role, join }) => {
    if (!input.changedIdentifiers || !input.identifierFrequency) return;
    const ids = new Map([...input.changedIdentifiers].filter(([p]) => role.has(p)));
    for (const { a, b, names } of sharedIdentifierPairs(ids, input.identifierFrequency)) join(a, b, 'shared-identifiers', `${baseName(a)} and ${baseName(b)} both change lines naming ${firstFour(names)}`);
  },
};
