import { DiffHunk, parseUnifiedDiff } from '../git/unified-diff';

/** One hunk of a unified diff with its text (header line included). */
export type TextHunk = DiffHunk;

/** Splits `git diff` output into hunks per file, keyed by head path (base path for deletions) and by base path. */
export function splitPatch(patch: string): Map<string, TextHunk[]> {
  const files = new Map<string, TextHunk[]>();
  for (const f of parseUnifiedDiff(patch)) {
    files.set(f.path, f.hunks);
    if (f.oldPath) files.set(f.oldPath, f.hunks);
  }
  return files;
}

/** The hunks touching lines [start, end] on one side. */
export function hunksTouching(hunks: readonly TextHunk[], side: 'head' | 'base', start: number, end: number): TextHunk[] {
  return hunks.filter((h) => {
    const s = side === 'head' ? h.newStart : h.oldStart;
    const n = side === 'head' ? h.newCount : h.oldCount;
    return s <= end && s + Math.max(n, 1) - 1 >= start;
  });
}
