import { createHash } from 'node:crypto';
import * as path from 'node:path';
import { BOUNDS, clipText } from '../events/catalogue/bounds';
import { ReviewComputed } from '../events/catalogue/compute';
import type { EventData } from '../events/catalogue/define';
import { MAX_EVENT_BYTES } from '../events/store/port';

type Data = EventData<typeof ReviewComputed>;

/** Room left in the 1 MiB event for its metadata (principal, idempotency key, causation ids). */
const METADATA_ALLOWANCE = 16 * 1024;
export const REVIEW_COMPUTED_BYTE_BUDGET = MAX_EVENT_BYTES - METADATA_ALLOWANCE;

/**
 * Caps applied in turn while the computation does not fit in one event: the dependency changes copied
 * into each cohort's clues (the full list stays in `dependencyDiffs`), listed dependents, reading-order
 * steps, then fragments per cohort. Counts and scores stay computed on everything;
 * only the lists are cut, and the cut is recorded in the metrics.
 */
const STAGES: Array<{ clueChanges: number; dependents: number; publicApi: number; tests: number; steps: number; fragments: number; anchors: number }> = [
  { clueChanges: 20, dependents: 50, publicApi: 100, tests: 100, steps: Infinity, fragments: Infinity, anchors: Infinity },
  { clueChanges: 0, dependents: 10, publicApi: 50, tests: 50, steps: 100, fragments: Infinity, anchors: Infinity },
  { clueChanges: 0, dependents: 0, publicApi: 20, tests: 20, steps: 30, fragments: 200, anchors: 200 },
  { clueChanges: 0, dependents: 0, publicApi: 10, tests: 10, steps: 10, fragments: 50, anchors: 50 },
  { clueChanges: 0, dependents: 0, publicApi: 3, tests: 3, steps: 3, fragments: 10, anchors: 10 },
  { clueChanges: 0, dependents: 0, publicApi: 1, tests: 1, steps: 1, fragments: 1, anchors: 1 },
];

const bytesOf = (d: Data) => Buffer.byteLength(JSON.stringify(d));

/**
 * Makes a computation recordable: every field is bounded at its source already; this is the last line,
 * so the engine's own output never fails its own event (SPEC §8: a lost review is worse than a clipped
 * list). Strings the schema still refuses as too long are clipped with a marker (`metrics.clippedFields`
 * counts them — a non-zero count is a bug at the source), non-finite metrics are dropped, and an event
 * over the byte budget gets its lists capped stage by stage (`metrics.trimStage`).
 */
export function fitReviewComputed(data: Data): Data {
  let clipped = 0;
  for (let pass = 0; pass < 3; pass++) {
    const parsed = ReviewComputed.schema.safeParse(data);
    if (parsed.success) break;
    let fixed = false;
    for (const issue of parsed.error.issues) {
      if (issue.code === 'too_big' && issue.origin === 'string') {
        fixed = setAt(data, issue.path, (v) => (typeof v === 'string' ? clipText(v, Number(issue.maximum)) : v)) || fixed;
        clipped++;
      } else if (issue.path[0] === 'metrics' && issue.path.length === 2) {
        delete (data.metrics as Record<string, number>)[String(issue.path[1])];
        fixed = true;
      }
    }
    if (!fixed) break;
  }
  if (clipped) data.metrics.clippedFields = clipped;

  if (bytesOf(data) <= REVIEW_COMPUTED_BYTE_BUDGET) return data;
  const full = data.cohorts.map((c) => ({ dependents: { files: c.blastRadius.dependents.files, symbols: c.blastRadius.dependents.symbols }, publicApi: c.blastRadius.publicApi, tests: c.blastRadius.tests, steps: c.readingOrder.steps, fragments: c.fragments, anchors: c.anchors, clues: c.clues }));
  for (let s = 0; s < STAGES.length; s++) {
    const cap = STAGES[s];
    let omittedSteps = 0;
    let omittedFragments = 0;
    let omittedAnchors = 0;
    data.cohorts.forEach((c, i) => {
      const f = full[i];
      const d = c.blastRadius.dependents;
      d.files = f.dependents.files.slice(0, cap.dependents);
      d.symbols = f.dependents.symbols.slice(0, cap.dependents);
      if (d.files.length < f.dependents.files.length || d.symbols.length < f.dependents.symbols.length) d.truncated = true;
      c.readingOrder.steps = f.steps.slice(0, cap.steps);
      omittedSteps += f.steps.length - c.readingOrder.steps.length;
      if (c.readingOrder.steps.length < f.steps.length) {
        const last = c.readingOrder.steps[c.readingOrder.steps.length - 1];
        const note = ` (${f.steps.length - c.readingOrder.steps.length} further steps not recorded: the computation is bounded to one event)`;
        c.readingOrder.steps[c.readingOrder.steps.length - 1] = { ...last, why: `${clipText(last.why, BOUNDS.readingWhy - note.length)}${note}` };
      }
      c.fragments = f.fragments.slice(0, cap.fragments);
      omittedFragments += f.fragments.length - c.fragments.length;
      // The key was derived from all anchors already; only the recorded list is shortened.
      c.anchors = f.anchors.slice(0, cap.anchors);
      omittedAnchors += f.anchors.length - c.anchors.length;
      c.blastRadius.publicApi = f.publicApi.slice(0, cap.publicApi);
      c.blastRadius.tests = f.tests.slice(0, cap.tests);
      c.clues = f.clues.map((clue) => {
        if (!clue.dependencyChanges || clue.dependencyChanges.length <= cap.clueChanges) return clue;
        const { dependencyChanges, ...rest } = clue;
        return cap.clueChanges > 0 ? { ...rest, dependencyChanges: dependencyChanges.slice(0, cap.clueChanges) } : rest;
      });
    });
    data.metrics.trimStage = s + 1;
    data.metrics.omittedReadingSteps = omittedSteps;
    data.metrics.omittedFragments = omittedFragments;
    data.metrics.omittedAnchors = omittedAnchors;
    if (bytesOf(data) <= REVIEW_COMPUTED_BYTE_BUDGET) return data;
  }
  foldCohorts(data);
  return data;
}

type Cohort = Data['cohorts'][number];

/** Where a cohort is folded at each level: its directory, its top-level directory, or all together. */
const FOLD_LEVELS: Array<(file: string) => string> = [(f) => path.posix.dirname(f), (f) => (f.includes('/') ? f.slice(0, f.indexOf('/')) : '.'), () => ''];

/**
 * The last stage, when even one-item lists do not fit: a PR of thousands of changed files is thousands of
 * cohorts (~650 bytes each at the last stage: ~1,500 single-file cohorts fill the event). Rather than
 * losing the review (`payload_too_large`), the lowest-ranked cohorts are folded into one path cohort per
 * directory — failing that, per top-level directory, then into one — keeping whole as many of the
 * riskiest cohorts as fit. A folded cohort lists its files (the review diff shows them whole), no
 * fragments, anchors or reading steps, the highest blast-radius score of its members, and says why in
 * `groupingReason`; `metrics.foldedCohorts` counts the cohorts folded. Its key is derived from the
 * directory (`f-…`), so a recompute of the same PR folds to the same keys. Past what even one folded
 * cohort of every file can hold (~9,000 files, the file lists themselves), the computation still fails.
 */
function foldCohorts(data: Data): void {
  const byRank = [...data.cohorts].sort((a, b) => a.rank - b.rank);
  const totalFiles = data.changedFiles.length;
  const build = (level: number, keep: number): Cohort[] => {
    const dirOf = FOLD_LEVELS[level];
    const kept = byRank.slice(0, keep).map((c, i) => ({ ...c, rank: i + 1 }));
    const folds = new Map<string, Cohort[]>();
    for (const c of byRank.slice(keep)) {
      const dir = dirOf(c.files[0] ?? '');
      const list = folds.get(dir);
      if (list) list.push(c);
      else folds.set(dir, [c]);
    }
    // Folded cohorts follow the kept ones in the order of their riskiest member.
    const folded = [...folds].map(([dir, members], i): Cohort => {
      const files = [...new Set(members.flatMap((m) => m.files))].sort();
      const where = dir === '' ? 'the rest of the PR' : dir === '.' ? '(root)' : `${dir}/`;
      const count = ` — ${files.length} file${files.length === 1 ? '' : 's'}, ${members.length} cohorts folded`;
      return {
        key: `f-${createHash('sha256').update(`folded\n${level}\n${dir}`).digest('hex').slice(0, 16)}`,
        title: `${clipText(where, BOUNDS.cohortTitle - count.length)}${count}`,
        grouping: 'path',
        groupingReason: clipText(`folded: this PR's ${totalFiles} changed files do not fit one ReviewComputed event as separate cohorts; the ${keep} riskiest cohorts are whole, these ${members.length} are folded by ${level === 2 ? 'nothing (one cohort)' : level === 1 ? 'top-level directory' : 'directory'}`, BOUNDS.groupingReason),
        files,
        fragments: [],
        anchors: [],
        blastRadius: { dependents: { files: [], symbols: [], depth: members[0].blastRadius.dependents.depth, truncated: true }, publicApi: [], tests: [], score: Math.max(...members.map((m) => m.blastRadius.score)) },
        readingOrder: { order: members[0].readingOrder.order, steps: [] },
        rank: keep + i + 1,
        clues: [],
      };
    });
    return [...kept, ...folded];
  };
  const fits = (cohorts: Cohort[]) => bytesOf({ ...data, cohorts }) <= REVIEW_COMPUTED_BYTE_BUDGET;
  for (let level = 0; level < FOLD_LEVELS.length; level++) {
    if (!fits(build(level, 0))) continue;
    // The most cohorts kept whole that still fit (more kept, more bytes: a binary search).
    let lo = 0;
    let hi = byRank.length;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (fits(build(level, mid))) lo = mid;
      else hi = mid - 1;
    }
    data.cohorts = build(level, lo);
    data.metrics.trimStage = STAGES.length + 1 + level;
    data.metrics.foldedCohorts = byRank.length - lo;
    return;
  }
}

function setAt(root: unknown, at: PropertyKey[], f: (v: unknown) => unknown): boolean {
  let node = root as Record<PropertyKey, unknown>;
  for (let i = 0; i < at.length - 1; i++) {
    node = node?.[at[i]] as Record<PropertyKey, unknown>;
    if (node === undefined || node === null) return false;
  }
  const key = at[at.length - 1];
  const before = node[key];
  node[key] = f(before);
  return node[key] !== before;
}
