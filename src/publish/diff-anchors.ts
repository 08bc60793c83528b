/**
 * Where GitHub accepts a review comment, computed from the `patch` of each file of the PR exactly as
 * GitHub applies it (REST "create a review": `line`/`side`, `start_line`/`start_side`):
 *
 * * only lines shown inside a hunk are commentable;
 * * RIGHT numbers new-file lines and covers added (`+`) and context (` `) lines;
 * * LEFT numbers old-file lines and covers deleted (`-`) and context lines;
 * * a multi-line comment needs both ends commentable on their side AND in the same hunk
 *   ("start line must be part of the same hunk as the line"), and `start_line` < `line`;
 * * a file without a `patch` (binary, too large, pure rename) takes no line comments at all.
 *
 * Pure: no I/O. The GitHub stand-in of the tests applies the same rules through this module's twin
 * written independently in test/publish/fake-github.ts, so a mistake here is not mirrored there.
 */

export type Side = 'RIGHT' | 'LEFT';

export interface PrFile {
  filename: string;
  status: string;
  previousFilename?: string;
  /** Absent for binary files, very large diffs and renames without content change. */
  patch?: string;
}

export interface Hunk {
  /** 0-based index of the hunk in the file's patch. */
  index: number;
  oldStart: number;
  newStart: number;
}

/** The commentable lines of one file: side → line number → hunk index. */
export interface FileDiffMap {
  filename: string;
  status: string;
  hasPatch: boolean;
  right: Map<number, number>;
  left: Map<number, number>;
  hunks: Hunk[];
}

const HUNK_HEADER = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

/** Parses a GitHub `patch` (the hunks of a unified diff without the file header). */
export function parsePatch(filename: string, status: string, patch: string | undefined): FileDiffMap {
  const map: FileDiffMap = { filename, status, hasPatch: patch !== undefined && patch !== '', right: new Map(), left: new Map(), hunks: [] };
  if (!map.hasPatch) return map;
  let oldLine = 0;
  let newLine = 0;
  let hunk = -1;
  for (const raw of patch!.split('\n')) {
    const header = HUNK_HEADER.exec(raw);
    if (header) {
      hunk++;
      oldLine = Number(header[1]);
      newLine = Number(header[3]);
      map.hunks.push({ index: hunk, oldStart: oldLine, newStart: newLine });
      continue;
    }
    if (hunk < 0) continue;
    const kind = raw[0];
    if (kind === '+') map.right.set(newLine++, hunk);
    else if (kind === '-') map.left.set(oldLine++, hunk);
    else if (kind === ' ') {
      map.left.set(oldLine++, hunk);
      map.right.set(newLine++, hunk);
    }
    // "\ No newline at end of file" and a trailing empty string are not lines of either file.
  }
  return map;
}

export function diffMapOf(files: readonly PrFile[]): Map<string, FileDiffMap> {
  const out = new Map<string, FileDiffMap>();
  for (const f of files) out.set(f.filename, parsePatch(f.filename, f.status, f.patch));
  return out;
}

export type FoldReason = 'no_anchor' | 'not_in_diff' | 'file_has_no_patch' | 'line_outside_diff' | 'range_spans_hunks' | 'head_moved_since_review' | 'github_rejected_anchors';

export interface InlinePlacement {
  inline: true;
  path: string;
  side: Side;
  line: number;
  /** Only when the comment spans several lines (GitHub refuses start_line == line). */
  startLine?: number;
}

export type Placement = InlinePlacement | { inline: false; reason: FoldReason };

export interface AnchorLike {
  path: string;
  startLine: number;
  endLine: number;
  side?: Side;
}

/**
 * Places one finding's anchor on the current diff, or says why it cannot be. A file the PR deletes
 * has only a LEFT side, so an anchor on it is read as LEFT whatever the reviewer said.
 */
export function placeAnchor(anchor: AnchorLike | undefined, diff: ReadonlyMap<string, FileDiffMap>): Placement {
  if (!anchor) return { inline: false, reason: 'no_anchor' };
  const file = diff.get(anchor.path);
  if (!file) return { inline: false, reason: 'not_in_diff' };
  if (!file.hasPatch) return { inline: false, reason: 'file_has_no_patch' };
  const side: Side = file.status === 'removed' ? 'LEFT' : (anchor.side ?? 'RIGHT');
  const lines = side === 'RIGHT' ? file.right : file.left;
  const endHunk = lines.get(anchor.endLine);
  const startHunk = lines.get(anchor.startLine);
  if (endHunk === undefined || startHunk === undefined) return { inline: false, reason: 'line_outside_diff' };
  if (startHunk !== endHunk) return { inline: false, reason: 'range_spans_hunks' };
  return anchor.startLine === anchor.endLine
    ? { inline: true, path: anchor.path, side, line: anchor.endLine }
    : { inline: true, path: anchor.path, side, line: anchor.endLine, startLine: anchor.startLine };
}
