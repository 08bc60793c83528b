import type { z } from 'zod';
import type { StreamFold } from '../../events/kernel-types';
import { reviewStreamOf, reviewTargetSchema } from '../../events/streams';
import type { DependencyDiffData } from '../../events/catalogue/compute';
import type { QueryDefinition } from './query';
import type { PrEvent } from '../../events/catalogue/event-types';

interface DependencyDiffsState {
  latest: { headSha: string; baseSha: string; diffs: DependencyDiffData[] } | null;
}

const fold: StreamFold<DependencyDiffsState, PrEvent> = {
  initialState: () => ({ latest: null }),
  evolve(s, e) {
    if (e.type === 'ReviewComputed') {
      s.latest = { headSha: e.data.headSha, baseSha: e.data.baseSha, diffs: e.data.dependencyDiffs };
    }
    return s;
  },
};

/** SPEC §13: the dependencies the PR adds, removes, upgrades or downgrades (major bumps flagged), per manifest. */
export function dependencyDiffsView(s: DependencyDiffsState) {
  if (!s.latest) return { computed: false as const, headSha: null, baseSha: null, diffs: [], majorBumps: 0 };
  const majorBumps = s.latest.diffs.reduce((n, d) => n + d.changes.filter((c) => c.major).length, 0);
  return { computed: true as const, headSha: s.latest.headSha, baseSha: s.latest.baseSha, diffs: s.latest.diffs, majorBumps };
}

export const dependencyDiffsQuery: QueryDefinition<z.infer<typeof reviewTargetSchema>, DependencyDiffsState, ReturnType<typeof dependencyDiffsView>> = {
  name: 'dependencyDiffs',
  description: 'Dependency changes of the latest computation per manifest/lock: added, removed, upgraded/downgraded, major bumps flagged.',
  input: reviewTargetSchema,
  access: { minRole: 'viewer' },
  affects: (input, e) => e.streamId === reviewStreamOf(input) && e.type === 'ReviewComputed',
  fold: () => fold,
  sources: (input) => [reviewStreamOf(input)],
  view: (s) => dependencyDiffsView(s),
};
