import * as path from 'node:path';
import { cite } from '../cite';
import type { SignalDef } from '../types';
import { pushTo } from '../group';

/** Files no other signal joined, in the same directory: a weak signal, used only between loners. Measured: did not earn its place. */
export const directory: SignalDef = {
  id: 'directory',
  stage: 'join',
  default: false,
  measured: 'off: a path heuristic, not adopted',
  joins: 'changed files of one directory that no other signal joined to anything',
  evidence: 'same directory, no link (weak): no resolved link; both in src/',
  label: 'same directory, no link (weak)',
  test: 'test/cohorts/weak-signals.test.ts',
  apply: ({ semantic, uf, join }) => {
    const loners = semantic.filter((f) => uf.sizeOf(f.path) === 1).map((f) => f.path);
    const byDir = new Map<string, string[]>();
    for (const p of loners) pushTo(byDir, path.posix.dirname(p), p);
    for (const [dir, ps] of byDir) for (const p of ps.slice(1)) join(ps[0], p, 'directory', `no resolved link; both in ${cite(dir)}/`);
  },
};
