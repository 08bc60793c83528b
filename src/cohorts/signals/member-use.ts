import { baseName, cite } from '../cite';
import { MAX_FILE_SHARE } from '../evidence/shared-identifiers';
import type { SignalDef } from '../types';

/**
 * A member one changed source declares on a changed line (`_headers: Headers` in a class body) that one other changed
 * file's changed lines access (`event.response._headers`), where no resolved edge reaches (a member of an inferred
 * receiver). The name must be rare (shared-identifiers' bound) and on the changed lines of just these two files:
 * `options.timeout` or a name three files touch says nothing about which two belong together. Measured: h3 and got,
 * 5 up, none down on 26 repositories (docs/cohorts-history.md).
 */
export const memberUse: SignalDef = {
  id: 'member-use',
  stage: 'join',
  default: true,
  measured: 'review-20: h3 0.833 / 0.762 → 0.900 / 0.769 (4 up), got 1 up, none down on 26',
  joins: 'a changed source declaring a rare member on a changed line and the one other changed file whose changed lines access it',
  evidence: 'a member declared and used: a.ts declares `_headers`, which b.ts changes lines accessing',
  label: 'a member declared and used',
  test: 'test/compute/formation-signals.test.ts',
  apply: ({ input, role, join }) => {
    if (!input.changedMembers || !input.changedIdentifiers || !input.identifierFrequency) return;
    const namedBy = new Map<string, number>();
    for (const [p, ids] of input.changedIdentifiers) if (role.has(p)) for (const id of ids) namedBy.set(id, (namedBy.get(id) ?? 0) + 1);
    const frequency = input.identifierFrequency;
    const rare = (name: string) => name.length >= 3 && namedBy.get(name) === 2 && (frequency.counts.get(name) ?? 0) <= Math.max(2, MAX_FILE_SHARE * frequency.files);
    const members = [...input.changedMembers].filter(([p]) => role.has(p)).sort((a, b) => a[0].localeCompare(b[0]));
    const declaredBy = new Map<string, string>();
    for (const [p, m] of members) if (role.get(p) === 'source') for (const d of m.declared) if (rare(d) && !declaredBy.has(d)) declaredBy.set(d, p);
    for (const [p, m] of members) {
      for (const name of [...m.accessed].sort()) {
        const by = declaredBy.get(name);
        if (by && by !== p && join(by, p, 'member-use', `${baseName(by)} declares \`${cite(name)}\`, which ${baseName(p)} changes lines accessing`)) break;
      }
    }
  },
};
