import type { SignalDef } from '../types';

/** A definition whose change is only its comments or docstring is no link target: what references it does not depend on that change. */
export const codeChange: SignalDef = {
  id: 'code-change',
  stage: 'edge',
  default: true,
  measured: 'click: a docstring fix to `echo` no longer pulls in every caller',
  joins: 'none: a definition whose changed lines are only comments, docstrings or blank lines is no link target',
  evidence: 'fewer `changed references`',
  test: 'test/compute/formation-signals.test.ts',
  edge: { unlinkable: (files) => files.flatMap((f) => [...(f.docOnly ?? [])]) },
};
