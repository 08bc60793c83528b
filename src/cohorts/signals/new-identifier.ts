import * as path from 'node:path';
import { baseName, cite } from '../cite';
import { newIdentifierGroups } from '../evidence/shared-identifiers';
import type { SignalDef } from '../types';

/**
 * An identifier that no indexed file of the base holds and the changed lines of several changed files name: a name the
 * change introduces (a new struct field set in composite literals, a new method called on an inferred receiver), so the
 * files naming it are one piece of work even where no reference resolves (evidence/shared-identifiers.ts). A changed
 * source must name it: tests alone make up fresh names (`pepper`, a fixture's variable) that coincide across unrelated
 * test files (measured on commander: test-only joins cost 7 cases). The name must be one the change declares (a
 * definition of a changed file at head: a method, a function; or a key a changed source's changed lines declare:
 * `enforceRetryRules?: boolean`), or all its files must share one directory (a Go package's struct field): an external
 * API first used in this change (`srv.BaseContext` of Go's http.Server, in an example and a test of two commits) is no
 * piece of work by itself (measured on chi).
 */
export const newIdentifier: SignalDef = {
  id: 'new-identifier',
  stage: 'join',
  default: true,
  measured: 'review-17: no median lower on 13; commander 0.833 → 0.900, click 0.867 → 0.900; h3 and immer means lower',
  joins: 'changed files (one a source) whose changed lines name an identifier no indexed file of the base holds and the change declares',
  evidence: 'a name the change introduces: a.ts and b.ts both name `x`, new in this change',
  label: 'a name the change introduces',
  test: 'test/compute/formation-signals.test.ts',
  apply: ({ input, semantic, role, join }) => {
    if (!input.changedIdentifiers || !input.identifierFrequency || !input.baseIdentifierFrequency) return;
    const ids = new Map([...input.changedIdentifiers].filter(([p]) => role.has(p)));
    const declared = new Map<string, string>();
    for (const f of semantic) {
      if (f.status === 'deleted') continue;
      for (const d of input.head?.index.files.get(f.path)?.facts.defs ?? []) {
        const name = d.qname.slice(d.qname.lastIndexOf('.') + 1);
        if (!declared.has(name)) declared.set(name, f.path);
      }
    }
    for (const f of semantic) {
      if (f.role !== 'source') continue;
      for (const k of input.changedKeys?.get(f.path) ?? []) if (!declared.has(k)) declared.set(k, f.path);
    }
    for (const { name, files } of newIdentifierGroups(ids, input.baseIdentifierFrequency, input.identifierFrequency)) {
      const by = declared.get(name);
      if (!(by && files.includes(by)) && new Set(files.map((p) => path.posix.dirname(p))).size > 1) continue;
      const anchor = by && role.get(by) === 'source' ? by : files.find((p) => role.get(p) === 'source');
      if (!anchor) continue;
      for (const p of files) if (p !== anchor) join(anchor, p, 'new-identifier', `${baseName(anchor)} and ${baseName(p)} both name \`${cite(name)}\`, new in this change`);
    }
  },
};
