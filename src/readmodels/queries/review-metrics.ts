import { z } from 'zod';
import { reviewStreamOf, reviewTargetSchema } from '../../events/streams';
import { affectsContext, CohortContextState, contextFoldFor, contextOf, evolveContextState, prepareContext } from '../../context/context-fold';
import type { HeadMaterials } from '../../context/materials';
import type { HistoryEntry } from '../../context/history-fold';
import { DEFAULT_BUDGET_BYTES } from '../../context/pack-types';
import type { RecordedEvent } from '../../events/envelope';
import type { FileRole } from '../../events/catalogue/compute';
import { evolveProgress, initialProgressState, PROGRESS_EVENT_TYPES, progressView, ProgressState } from '../../review-progress/progress';
import type { QueryDefinition } from './query';
import { isEvent } from '../../events/catalogue/event-types';

type Input = z.infer<typeof reviewTargetSchema>;

export interface MetricsState {
  context: CohortContextState;
  progress: ProgressState;
  changedFiles: Array<{ path: string; role: FileRole }>;
  /** Why the context sizes could not be measured (repository unavailable), when so. */
  materialsError: string | null;
}

/** Roles filtered out before review: generated and vendored code, manifests whose only change is their version. */
const FILTERED: Partial<Record<FileRole, string>> = { generated: 'generated', vendored: 'vendored', 'version-bump': 'versionOnly' };

const median = (xs: number[]): number => {
  if (!xs.length) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)];
};
const ratio = (a: number, b: number): number | null => (b === 0 ? null : Math.round((a / b) * 100) / 100);

/** `history`: the read model's lookup instead of the folded history (src/readmodels/stored/history-read-model.ts). */
export function reviewMetricsView(s: MetricsState, history?: (symbolId: string) => HistoryEntry[]) {
  const c = s.context.computation;
  const filteredOut = { generated: 0, vendored: 0, versionOnly: 0 };
  for (const f of s.changedFiles) {
    const k = FILTERED[f.role] as keyof typeof filteredOut | undefined;
    if (k) filteredOut[k]++;
  }
  const filtered = filteredOut.generated + filteredOut.vendored + filteredOut.versionOnly;
  const cohorts = c?.cohorts ?? [];
  // The files a file-by-file review would open one loop each for: every file some cohort covers.
  const targetFiles = new Set(cohorts.flatMap((x) => x.files)).size;
  const fragments = cohorts.reduce((n, x) => n + x.fragments.length, 0);
  const packs = cohorts.map((x) => {
    const pack = contextOf(s.context, x.key, DEFAULT_BUDGET_BYTES, history);
    return 'stale' in pack ? null : { cohortKey: x.key, bytes: pack.usedBytes, whole: pack.counts.whole, degraded: pack.truncated.length };
  });
  const measured = packs.filter((p): p is NonNullable<typeof p> => p !== null);
  const progress = progressView(s.progress);
  return {
    exists: s.progress.exists,
    headSha: c?.headSha ?? null,
    files: {
      changed: s.changedFiles.length,
      filteredOut: { ...filteredOut, total: filtered },
      underReview: s.changedFiles.length - filtered,
      /** Files the cohorts cover: one reading loop each is what a file-by-file review would cost. */
      targets: targetFiles,
    },
    cohorts: {
      count: cohorts.length,
      /** One reading loop per cohort must not exceed one per target file. */
      withinTargetFiles: cohorts.length <= Math.max(targetFiles, cohorts.length === 0 ? 0 : 1),
      loopsPerTargetFile: ratio(cohorts.length, targetFiles),
      fragments,
      /** Fragments merged per cohort (1 = no merging). */
      fragmentsPerCohort: ratio(fragments, cohorts.length),
      semantic: cohorts.filter((x) => x.grouping === 'semantic').length,
      pathGrouped: cohorts.filter((x) => x.grouping === 'path').length,
    },
    contextPacks:
      measured.length === cohorts.length
        ? {
            budgetBytes: DEFAULT_BUDGET_BYTES,
            medianBytes: median(measured.map((p) => p.bytes)),
            maxBytes: measured.reduce((m, p) => Math.max(m, p.bytes), 0),
            totalBytes: measured.reduce((n, p) => n + p.bytes, 0),
            degradedClues: measured.reduce((n, p) => n + p.degraded, 0),
            perCohort: measured,
          }
        : { budgetBytes: DEFAULT_BUDGET_BYTES, unavailable: s.materialsError ?? 'the review was recomputed while measuring: ask again' },
    /** Partial and unreviewed cohorts are counted apart from clean (complete) ones, never mixed in. */
    progress: { clean: progress.totals.complete, partial: progress.totals.partial, unreviewed: progress.totals.pending, orphanedMarks: progress.orphaned.length },
  };
}

export type ReviewMetrics = ReturnType<typeof reviewMetricsView>;

/**
 * `review_studio.reviewMetrics` (seeds/004 §3.4): changed vs reviewed files, cohorts vs target files, the
 * fragment → cohort merge ratio, bytes preloaded per context pack (default budget), and partial cohorts
 * counted apart from clean ones.
 */
export const reviewMetricsQuery: QueryDefinition<Input, MetricsState, ReviewMetrics> = {
  name: 'reviewMetrics',
  description: 'Review metrics: changed files, files under review after filtering, cohorts vs target files, fragments per cohort, bytes preloaded per context pack, clean vs partial cohorts.',
  input: reviewTargetSchema,
  access: { minRole: 'viewer' },
  affects: (input, e) => affectsContext(input, e) || (e.streamId === reviewStreamOf(input) && PROGRESS_EVENT_TYPES.has(e.type)),
  async fold(input, ws) {
    let materials: HeadMaterials | null = null;
    let materialsError: string | null = null;
    try {
      materials = await prepareContext(ws, input, 'all');
    } catch (e) {
      materialsError = (e as Error).message;
    }
    const ctx = contextFoldFor(input.repoId, reviewStreamOf(input), materials);
    const streamId = reviewStreamOf(input);
    return {
      initialState: (): MetricsState => ({ context: ctx.initialState(), progress: initialProgressState(), changedFiles: [], materialsError }),
      evolve(s: MetricsState, e: RecordedEvent) {
        evolveContextState(s.context, e);
        if (e.streamId === streamId) {
          evolveProgress(s.progress, e);
          if (isEvent(e, 'ReviewComputed')) s.changedFiles = e.data.changedFiles.map((f) => ({ path: f.path, role: f.role }));
        }
        return s;
      },
    };
  },
  sources: () => 'all',
  view: (s) => reviewMetricsView(s),
};
