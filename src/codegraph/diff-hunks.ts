import { DiffHunk, parseUnifiedDiff } from '../git/unified-diff';

/** One hunk of a zero-context unified diff: line ranges on the base (old) and head (new) side. */
export type Hunk = Omit<DiffHunk, 'text'>;

export interface FileHunks {
  /** Head path (base path for a deletion). */
  path: string;
  oldPath?: string;
  hunks: Hunk[];
}

/** Parses `git diff -U0` output into hunks per file, keyed by head path (base path for deletions). */
export function parseHunks(patch: string): Map<string, FileHunks> {
  const files = new Map<string, FileHunks>();
  for (const f of parseUnifiedDiff(patch)) {
    const hunks = f.hunks.map(({ oldStart, oldCount, newStart, newCount }) => ({ oldStart, oldCount, newStart, newCount }));
    files.set(f.path, f.oldPath ? { path: f.path, oldPath: f.oldPath, hunks } : { path: f.path, hunks });
  }
  return files;
}
