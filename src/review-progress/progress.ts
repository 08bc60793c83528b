import type { StreamFold } from '../events/kernel-types';
import type { RecordedEvent } from '../events/envelope';
import type { CohortData } from '../events/catalogue/compute';
import type { ReviewerBrief } from '../events/catalogue/review';
import type { CohortReviewStatus } from '../events/catalogue/progress';
import { catalogued } from '../events/catalogue/event-types';

export interface CohortMark {
  status: CohortReviewStatus;
  reason?: string;
  by: string;
  headSha: string;
  /** Global position of the mark. */
  at: number;
}

export interface ProgressCohort {
  key: string;
  title: string;
  files: string[];
}

/**
 * Review progress of one PR, folded from its stream. Marks are keyed by the stable cohort key and
 * outlive computations: a recompute for a rebased head replaces `cohorts` wholesale, and every cohort
 * whose key comes back finds its marks again. Plain JSON only, so the fold is deterministic.
 */
export interface ProgressState {
  exists: boolean;
  roster: ReviewerBrief[];
  /** The latest computation's cohorts (null before the first compute). */
  computedHead: string | null;
  cohorts: ProgressCohort[] | null;
  /** cohortKey → brief → latest mark. */
  marks: Record<string, Partial<Record<ReviewerBrief, CohortMark>>>;
}

export const initialProgressState = (): ProgressState => ({ exists: false, roster: [], computedHead: null, cohorts: null, marks: {} });

export function evolveProgress(s: ProgressState, raw: RecordedEvent): ProgressState {
  const e = catalogued(raw);
  switch (e.type) {
    case 'ReviewRequested':
      s.exists = true;
      s.roster = [...(e.data.roster as ReviewerBrief[])];
      break;
    case 'ReviewComputed':
      s.computedHead = e.data.headSha as string;
      s.cohorts = (e.data.cohorts as CohortData[]).map((c) => ({ key: c.key, title: c.title, files: c.files }));
      break;
    case 'CohortReviewMarked': {
      const byBrief = (s.marks[e.data.cohortKey as string] ??= {});
      byBrief[e.data.brief as ReviewerBrief] = { status: e.data.status as CohortReviewStatus, ...(e.data.reason ? { reason: e.data.reason as string } : {}), by: e.data.by as string, headSha: e.data.headSha as string, at: e.globalPosition };
      break;
    }
    default:
      break;
  }
  return s;
}

export const progressFold: StreamFold<ProgressState> = { initialState: initialProgressState, evolve: evolveProgress };

export const PROGRESS_EVENT_TYPES = new Set(['ReviewRequested', 'ReviewComputed', 'CohortReviewMarked']);

/** `pending`: the brief has not said anything about the cohort yet. */
export type BriefProgress = CohortReviewStatus | 'pending';

export interface CohortProgress {
  cohortKey: string;
  title: string;
  /** complete only when every brief of the roster marked it complete. */
  status: 'complete' | 'partial' | 'pending';
  briefs: Array<{ brief: ReviewerBrief; status: BriefProgress; reason?: string; by?: string; headSha?: string }>;
}

export function progressOfCohort(marks: ProgressState['marks'], cohort: { key: string; title: string }, roster: readonly ReviewerBrief[]): CohortProgress {
  const own = marks[cohort.key] ?? {};
  const briefs = roster.map((brief) => {
    const m = own[brief];
    return m ? { brief, status: m.status as BriefProgress, ...(m.reason ? { reason: m.reason } : {}), by: m.by, headSha: m.headSha } : { brief, status: 'pending' as BriefProgress };
  });
  const status = briefs.length > 0 && briefs.every((b) => b.status === 'complete') ? 'complete' : briefs.some((b) => b.status !== 'pending') ? 'partial' : 'pending';
  return { cohortKey: cohort.key, title: cohort.title, status, briefs };
}

/**
 * The cohorts the roster has not reviewed completely (SPEC §8, issue 11): a cohort counts as reviewed
 * only when every brief on the roster marked it `complete`. Pure; finalize applies it to the token axes.
 */
export function partialCohorts(state: Pick<ProgressState, 'marks'>, cohorts: ReadonlyArray<{ key: string; title: string }>, roster: readonly ReviewerBrief[]): CohortProgress[] {
  return cohorts.map((c) => progressOfCohort(state.marks, c, roster)).filter((p) => p.status !== 'complete');
}

const MAX_REASON = 4000;

/** What each brief still owes on one incomplete cohort: `qa: not reviewed`, `engineer: partial (reason)`. */
export function missingBriefs(p: CohortProgress): string {
  return p.briefs
    .filter((b) => b.status !== 'complete')
    .map((b) => `${b.brief}: ${b.status === 'pending' ? 'not reviewed' : `partial${b.reason ? ` (${b.reason})` : ''}`}`)
    .join(', ')
    .slice(0, 300);
}

const NAMED = 3;

/** Short: how many cohorts are incomplete and the first few by title and key (the details are said once, in the finalization). */
export function describePartialCohorts(partial: CohortProgress[]): string {
  const named = partial.slice(0, NAMED).map((p) => `"${p.title.slice(0, 60)}" [${p.cohortKey}]`);
  const more = partial.length > NAMED ? ` and ${partial.length - NAMED} more` : '';
  return `${partial.length} cohort(s) not reviewed completely: ${named.join(', ')}${more}`;
}

type TokenAxis = { status: string; reason?: string };

/**
 * A partial review is never reported as clean: token axes that claim `pass` or `warn` become `partial`
 * with the incomplete cohorts named. `fail` stays (a found problem outranks incompleteness), and so do
 * `partial`, `unavailable` and `not_applicable`, which already say they are not a clean pass.
 */
export function tokenAxesUnderProgress<T extends Record<string, TokenAxis>>(axes: T, partial: CohortProgress[]): T {
  if (partial.length === 0) return axes;
  const reason = describePartialCohorts(partial);
  const out: Record<string, TokenAxis> = {};
  for (const [name, axis] of Object.entries(axes)) {
    out[name] = axis.status === 'pass' || axis.status === 'warn' ? { status: 'partial', reason: axis.reason ? `${reason} (reviewer said: ${axis.reason.slice(0, 300)})`.slice(0, MAX_REASON) : reason } : axis;
  }
  return out as T;
}

export interface ProgressView {
  exists: boolean;
  computedHead: string | null;
  roster: ReviewerBrief[];
  cohorts: CohortProgress[];
  totals: { cohorts: number; complete: number; partial: number; pending: number };
  /** Marks on keys the latest computation no longer has (the change they reviewed is gone). */
  orphaned: Array<{ cohortKey: string; briefs: ReviewerBrief[] }>;
}

export function progressView(s: ProgressState): ProgressView {
  const cohorts = (s.cohorts ?? []).map((c) => progressOfCohort(s.marks, c, s.roster));
  const current = new Set((s.cohorts ?? []).map((c) => c.key));
  const orphaned = Object.keys(s.marks)
    .filter((k) => !current.has(k))
    .sort()
    .map((cohortKey) => ({ cohortKey, briefs: (Object.keys(s.marks[cohortKey]) as ReviewerBrief[]).sort() }));
  return {
    exists: s.exists,
    computedHead: s.computedHead,
    roster: s.roster,
    cohorts,
    totals: {
      cohorts: cohorts.length,
      complete: cohorts.filter((c) => c.status === 'complete').length,
      partial: cohorts.filter((c) => c.status === 'partial').length,
      pending: cohorts.filter((c) => c.status === 'pending').length,
    },
    orphaned,
  };
}
