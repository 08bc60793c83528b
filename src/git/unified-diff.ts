/** One hunk of a unified diff: line ranges on the base (old) and head (new) side, and its text. */
export interface DiffHunk {
  oldStart: number;
  oldCount: number;
  newStart: number;
  newCount: number;
  /** The hunk's lines, its `@@` header included. */
  text: string;
}

export interface FilePatch {
  /** Head path (base path for a deletion). */
  path: string;
  /** Base path when it differs (renames). */
  oldPath?: string;
  hunks: DiffHunk[];
}

function unquotePath(raw: string): string {
  const p = raw.startsWith('"') && raw.endsWith('"') ? (JSON.parse(raw) as string) : raw;
  return p.replace(/^[ab]\//, '');
}

/** The one parser of `git diff` output in the project: files in patch order with their hunks. */
export function parseUnifiedDiff(patch: string): FilePatch[] {
  const files: FilePatch[] = [];
  let oldPath: string | undefined;
  let current: FilePatch | undefined;
  let lines: string[] | undefined;
  // `--- `/`+++ ` are headers only before the first hunk: a removed line "-- x" reads "--- x" in the body.
  let inHeader = false;
  const flush = () => {
    if (lines && current) current.hunks[current.hunks.length - 1].text = lines.join('\n');
    lines = undefined;
  };
  for (const line of patch.split('\n')) {
    if (line.startsWith('diff --git ')) {
      flush();
      current = undefined;
      oldPath = undefined;
      inHeader = true;
    } else if (inHeader && line.startsWith('--- ')) {
      const p = line.slice(4).trim();
      oldPath = p === '/dev/null' ? undefined : unquotePath(p);
    } else if (inHeader && line.startsWith('+++ ')) {
      inHeader = false;
      const p = line.slice(4).trim();
      const newPath = p === '/dev/null' ? oldPath : unquotePath(p);
      if (!newPath) continue;
      current = { path: newPath, hunks: [] };
      if (oldPath && oldPath !== newPath) current.oldPath = oldPath;
      files.push(current);
    } else if (line.startsWith('@@') && current) {
      flush();
      const m = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/.exec(line);
      if (m) {
        current.hunks.push({ oldStart: Number(m[1]), oldCount: m[2] === undefined ? 1 : Number(m[2]), newStart: Number(m[3]), newCount: m[4] === undefined ? 1 : Number(m[4]), text: '' });
        lines = [line];
      }
    } else if (lines && !inHeader && (line.startsWith('+') || line.startsWith('-') || line.startsWith(' ') || line.startsWith('\\'))) {
      lines.push(line);
    }
  }
  flush();
  return files;
}
