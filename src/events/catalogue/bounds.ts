import { createHash } from 'node:crypto';

/**
 * Length bounds of the strings the review computation records (ReviewComputed and its parts). The zod
 * schemas read these constants, and the producers clip to them at the source, so the engine's own
 * output can never fail its own event schema.
 */
export const BOUNDS = {
  /** Repo-relative paths. */
  path: 4000,
  /** Stable symbol ids `path#Qualified.name`. */
  symbolId: 2000,
  /** Fragment ids `path#symbol` / `path#<residual>`. */
  fragmentId: 4000,
  /** Definition kinds (`function`, `class`, …) and language names. */
  kind: 50,
  cohortTitle: 1000,
  groupingReason: 2000,
  /**
   * One name or path a grouping reason cites (an identifier, a symbol, a file): clipped with a marker so one
   * long name never crowds out the rest of the reason (the full names are in the cohort's files, fragments and diff).
   */
  reasonName: 120,
  readingWhy: 1000,
  note: 4000,
  error: 4000,
  dependencyName: 500,
  dependencyVersion: 500,
  dependencyGroup: 100,
  /** Visual snapshot ids (a golden's repo path, or `harness:id`). */
  snapshotId: 500,
  /** Files listed as not walked by TypeScript's checker (`typeEdges.skippedFiles`; the rest are counted). */
  typeEdgeSkips: 20,
} as const;

/** What a clipped text ends with; the number says how much was cut. */
export const clipMarker = (cut: number): string => `… [+${cut} chars]`;

/**
 * `text` if it fits in `max` characters, else its start followed by a marker naming how many characters
 * were cut (the whole result is at most `max`). For prose: reasons, notes, reading-order explanations.
 */
export function clipText(text: string, max: number): string {
  if (text.length <= max) return text;
  // The marker's own length depends on the count; a fixed point over one or two digits is enough.
  let keep = max - clipMarker(text.length - max).length;
  keep = max - clipMarker(text.length - keep).length;
  if (keep <= 0) return text.slice(0, max);
  return `${text.slice(0, keep)}${clipMarker(text.length - keep)}`;
}

/**
 * For identifiers that must stay distinct (symbol ids, fragment ids, paths): when too long, the start
 * followed by `…~` and a hash of the whole text, so two long ids sharing a prefix never collide and the
 * same id always clips the same way.
 */
export function clipId(id: string, max: number): string {
  if (id.length <= max) return id;
  const digest = createHash('sha256').update(id).digest('hex').slice(0, 16);
  const tail = `…~${digest}`;
  return `${id.slice(0, Math.max(0, max - tail.length))}${tail}`;
}
