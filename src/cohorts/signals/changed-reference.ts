import type { SignalDef } from '../types';

/**
 * A reference counts as a link only when it is itself on a changed line of a source file (the caller's change is
 * about the callee: a new call, an updated call, a removed one); a changed test exercises whatever it references.
 * Without it, any edge from a changed fragment does. With it, a reference on a changed line counts even when its
 * enclosing definition is no changed fragment (the line proves it changed).
 */
export const changedReference: SignalDef = {
  id: 'changed-reference',
  stage: 'edge',
  default: true,
  measured: 'halves different-commit joins on h3 (17.6 % → 8.8 %) and click; lifts both',
  joins: 'a changed source and the changed definition it references on a changed line; a changed test and any changed definition it references',
  evidence: 'changed references: f → g',
  test: 'test/compute/formation-signals.test.ts',
  edge: {
    linesProveChange: true,
    skips: (ctx, e, fromFile, side) => !ctx.testFiles.has(fromFile) && !ctx.onChangedLine(fromFile, side, e.line),
  },
};
