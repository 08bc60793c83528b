import type { z } from 'zod';
import type { StreamFold } from '../../events/kernel-types';
import { reviewStreamOf } from '../../events/streams';
import { blastRadiusQueryInput, queryBlastRadius } from '../../compute/queries';
import { DomainError } from '../../domain-error';
import type { QueryDefinition } from './query';
import { catalogued } from '../../events/catalogue/event-types';

type Input = z.infer<typeof blastRadiusQueryInput>;
type Loaded = Awaited<ReturnType<typeof queryBlastRadius>>;

/**
 * The answer loaded from the code graph when the fold was created (like cohortContext, the graph is
 * material read at the edge, not event data), and the head the PR's latest computation is at, folded
 * from events. The view stays pure: when the PR is recomputed for another head after the answer was
 * loaded, it says `stale` instead of presenting the old head's dependents as the new head's.
 */
interface BlastRadiusState {
  loaded: Loaded | null;
  notComputed: string | null;
  computedHead: string | null;
}

export function blastRadiusView(s: BlastRadiusState, input: Input) {
  const follows = input.commit === undefined;
  if (!s.loaded) {
    return { available: false as const, stale: follows && s.computedHead !== null, reason: s.notComputed ?? 'no answer', computedHead: s.computedHead };
  }
  const stale = follows && s.computedHead !== null && s.computedHead !== s.loaded.commit;
  return { available: true as const, stale, ...(stale ? { reason: `the PR was recomputed at ${s.computedHead}: ask again for that head` } : {}), ...s.loaded };
}

export const blastRadiusQuery: QueryDefinition<Input, BlastRadiusState, ReturnType<typeof blastRadiusView>> = {
  name: 'blastRadius',
  description: 'Who references a file or symbol in the head repo (resolved edges, bounded depth), public API touched, tests reaching it — at a commit or at the PR\'s latest computed head.',
  input: blastRadiusQueryInput,
  access: { minRole: 'viewer' },
  affects: (input, e) => input.prNumber !== undefined && e.streamId === reviewStreamOf({ repoId: input.repoId, prNumber: input.prNumber }) && e.type === 'ReviewComputed',
  async fold(input, workspace): Promise<StreamFold<BlastRadiusState>> {
    let loaded: Loaded | null = null;
    let notComputed: string | null = null;
    try {
      loaded = await queryBlastRadius(workspace, input);
    } catch (err) {
      if (!(err instanceof DomainError) || err.code !== 'not_computed') throw err;
      notComputed = err.message;
    }
    return {
      initialState: () => ({ loaded, notComputed, computedHead: null }),
      evolve(s, e) {
        const ev = catalogued(e);
        if (ev.type === 'ReviewComputed') s.computedHead = ev.data.headSha;
        return s;
      },
    };
  },
  sources: (input) => (input.prNumber !== undefined ? [reviewStreamOf({ repoId: input.repoId, prNumber: input.prNumber })] : []),
  view: (s, i) => blastRadiusView(s, i),
};
