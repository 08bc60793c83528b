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
    if (bytesOf(data) <= REVIEW_COMPUTED_BYTE_BUDGET) break;
  }
  return data;
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
