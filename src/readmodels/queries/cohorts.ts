import type { StreamFold } from '../../events/kernel-types';
import type { z } from 'zod';
import { reviewStreamOf, reviewTargetSchema } from '../../events/streams';
import type { RecordedEvent } from '../../events/envelope';
import type { changedFileSchema, CohortData, VerifiedDiagram } from '../../events/catalogue/compute';
import type { QueryDefinition } from './query';
import type { PrEvent } from '../../events/catalogue/event-types';

type ReviewTargetInput = z.infer<typeof reviewTargetSchema>;
type ChangedFileData = z.infer<typeof changedFileSchema>;

export interface CohortsState {
  computation: { headSha: string; baseSha: string; cohorts: CohortData[]; changedFiles: ChangedFileData[]; position: number } | null;
  /** cohortKey → the latest summary: keyed by the stable key, so a summary survives a rebase. */
  summaries: Record<string, { markdown: string; by: string; position: number }>;
  /** cohortKey → diagrams in the order they were added. */
  diagrams: Record<string, Array<{ diagram: VerifiedDiagram; headSha: string | null; by: string; position: number }>>;
}

const TYPES = new Set(['ReviewComputed', 'CohortSummarySet', 'ReviewDiagramAdded']);

export const cohortsFold: StreamFold<CohortsState, PrEvent> = {
  initialState: () => ({ computation: null, summaries: {}, diagrams: {} }),
  evolve(s, e: PrEvent) {
    if (e.type === 'ReviewComputed') {
      s.computation = { headSha: e.data.headSha, baseSha: e.data.baseSha, cohorts: e.data.cohorts, changedFiles: e.data.changedFiles ?? [], position: e.globalPosition };
    } else if (e.type === 'CohortSummarySet') {
      s.summaries[e.data.cohortKey] = { markdown: e.data.markdown, by: e.data.by, position: e.globalPosition };
    } else if (e.type === 'ReviewDiagramAdded') {
      (s.diagrams[e.data.cohortKey] ??= []).push({ diagram: e.data.diagram, headSha: e.data.headSha ?? null, by: e.data.by, position: e.globalPosition });
    }
    return s;
  },
};

/** The edges of a typed diagram, whatever its kind (messages, relations or transitions). */
export function edgesOf(diagram: VerifiedDiagram): Array<{ from: string; to: string; verified: boolean }> {
  switch (diagram.kind) {
    case 'sequence':
      return diagram.messages;
    case 'entityRelation':
      return diagram.relations;
    case 'stateMachine':
      return diagram.transitions;
  }
}

/**
 * SPEC §8.5–8.6: the cohorts of the latest computation in reading order (riskiest first), each with its
 * grouping mode and reason, blast radius, guided reading order, summary and typed diagrams. Every
 * diagram carries its count of unverified edges so a client can never draw a guessed edge as fact.
 */
export function cohortsView(s: CohortsState) {
  const c = s.computation;
  if (!c) return { computed: false as const, headSha: null, baseSha: null, cohorts: [], changedFiles: [] };
  const cohorts = [...c.cohorts]
    .sort((a, b) => a.rank - b.rank || (a.key < b.key ? -1 : 1))
    .map((cohort) => ({
      ...cohort,
      summary: s.summaries[cohort.key] ?? null,
      diagrams: (s.diagrams[cohort.key] ?? []).map((entry) => {
        const edges = edgesOf(entry.diagram);
        return { ...entry, edgeCount: edges.length, unverifiedEdges: edges.filter((x) => !x.verified).length };
      }),
    }));
  return { computed: true as const, headSha: c.headSha, baseSha: c.baseSha, position: c.position, cohorts, changedFiles: c.changedFiles };
}

export const cohortsQuery: QueryDefinition<ReviewTargetInput, CohortsState, ReturnType<typeof cohortsView>> = {
  name: 'cohorts',
  description: 'Cohorts of the latest computation in reading order (riskiest first) with grouping mode and reason, blast radius, reading order, summary and typed diagrams (unverified edges counted).',
  input: reviewTargetSchema,
  access: { minRole: 'viewer' },
  affects: (input, e) => e.streamId === reviewStreamOf(input) && TYPES.has(e.type),
  fold: () => cohortsFold,
  sources: (input) => [reviewStreamOf(input)],
  view: (s) => cohortsView(s),
};
