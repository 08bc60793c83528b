import type { Hunk } from '../codegraph/diff-hunks';

/*
 * SPEC §5 carry-over: what becomes of a finding of round N−1 when round N starts at a new head.
 *  - `carried`: its anchored code is unchanged at the new head (same fingerprint, same anchored text):
 *    it stays in the new round as it was — live with its confirmations, or dismissed / resolved.
 *  - `outdated`: the anchored code changed (or cannot be checked): a live finding stays live in the new
 *    round, listed for re-review, and keeps holding the verdict; its confirmations no longer count.
 *  - `gone`: the code it points at was deleted (or a closed finding's code changed): it stays in its round.
 * The facts come from git at the edge (src/review/carry-facts.ts) and are recorded in
 * `FindingsCarriedOver`; the fold only applies them.
 */

/** How an anchored line range reads after a zero-context diff. */
export type MappedRange =
  | { kind: 'untouched'; startLine: number; endLine: number }
  | { kind: 'touched'; startLine: number; endLine: number }
  | { kind: 'deleted' };

/**
 * Maps the 1-based inclusive range [start, end] of the old side through the hunks of `git diff -U0`
 * (sorted, as git prints them). Untouched: no hunk removes, replaces or inserts a line inside it (it may
 * move). Deleted: every line of it is removed and nothing replaces them. Anything else is touched. One
 * pass over the file's hunks.
 */
export function mapRange(hunks: readonly Hunk[], start: number, end: number): MappedRange {
  let shift = 0;
  let touched = false;
  let removed = 0;
  let added = 0;
  for (const h of hunks) {
    if (h.oldCount === 0) {
      // A pure insertion after old line `oldStart`.
      if (h.oldStart < start) shift += h.newCount;
      else if (h.oldStart < end) {
        touched = true;
        added += h.newCount;
      } else break;
      continue;
    }
    const oldEnd = h.oldStart + h.oldCount - 1;
    if (oldEnd < start) {
      shift += h.newCount - h.oldCount;
      continue;
    }
    if (h.oldStart > end) break;
    touched = true;
    removed += Math.min(oldEnd, end) - Math.max(h.oldStart, start) + 1;
    added += h.newCount;
  }
  if (!touched) return { kind: 'untouched', startLine: start + shift, endLine: end + shift };
  if (removed === end - start + 1 && added === 0) return { kind: 'deleted' };
  const startLine = Math.max(1, start + shift);
  return { kind: 'touched', startLine, endLine: Math.max(startLine, end + shift + added - removed) };
}
