import { clipText } from '../../events/catalogue/bounds';
import { baseName } from '../cite';
import { sharesRareIdentifier } from '../evidence/shared-identifiers';
import type { SignalDef } from '../types';
import { pushTo } from '../group';

/**
 * The same part of a line changed the same way in two files (`searchParameters` → `searchParams` at each call site):
 * one edit applied in several places, where the lines around it differ (evidence/similar-edits.ts). After the test-name
 * signals and before `test-affinity` (the soft, relative decision last).
 */
export const sameSubstitution: SignalDef = {
  id: 'same-substitution',
  stage: 'join',
  default: true,
  measured: 'review-19: 20 cases up, 1 down on 13; chi 0.902 → 1.000',
  joins: 'changed files that change the same part of a line the same way (`searchParameters` → `searchParams`)',
  evidence: 'the same substitution: a.ts and b.ts both change `x` to `y`',
  label: 'the same substitution',
  test: 'test/compute/formation-signals.test.ts',
  apply: ({ input, active, semantic, join }) => {
    if (!input.editSubstitutions) return;
    const filesOf = new Map<string, string[]>();
    for (const f of semantic) for (const k of input.editSubstitutions.get(f.path) ?? []) pushTo(filesOf, k, f.path);
    for (const [k, ps] of [...filesOf.entries()].filter(([, ps]) => ps.length > 1).sort((a, b) => a[0].localeCompare(b[0]))) {
      const [from, to] = k.slice(1).split('→');
      const what = from && to ? `change \`${clipText(from, 40)}\` to \`${clipText(to, 40)}\`` : from ? `remove \`${clipText(from, 60)}\`` : `insert \`${clipText(to, 60)}\``;
      for (const [i, p] of ps.entries()) {
        if (!i) continue;
        const to = active.has('edit-rare-id') ? ps.slice(0, Math.min(i, 16)).find((q) => sharesRareIdentifier(q, p, input.changedIdentifiers, input.identifierFrequency)) : ps[0];
        if (to) join(to, p, 'same-substitution', `${baseName(to)} and ${baseName(p)} both ${what}`);
      }
    }
  },
};
