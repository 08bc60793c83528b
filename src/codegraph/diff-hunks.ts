/** One hunk of a zero-context unified diff: line ranges on the base (old) and head (new) side. */
export interface Hunk {
  oldStart: number;
  oldCount: number;
  newStart: number;
  newCount: number;
}

export interface FileHunks {
  /** Head path (base path for a deletion). */
  path: string;
  oldPath?: string;
  hunks: Hunk[];
}

function unquotePath(raw: string): string {
  const p = raw.startsWith('"') && raw.endsWith('"') ? JSON.parse(raw) as string : raw;
  return p.replace(/^[ab]\//, '');
}

/** Parses `git diff -U0` output into hunks per file. */
export function parseHunks(patch: string): Map<string, FileHunks> {
  const files = new Map<string, FileHunks>();
  let oldPath: string | undefined;
  let current: FileHunks | undefined;
  // `--- `/`+++ ` are headers only before the first hunk: a removed line "-- x" reads "--- x" in the body.
  let inHeader = false;
  for (const line of patch.split('\n')) {
    if (line.startsWith('diff --git ')) {
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
      files.set(newPath, current);
    } else if (line.startsWith('@@') && current) {
      const m = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/.exec(line);
      if (m) current.hunks.push({ oldStart: Number(m[1]), oldCount: m[2] === undefined ? 1 : Number(m[2]), newStart: Number(m[3]), newCount: m[4] === undefined ? 1 : Number(m[4]) });
    }
  }
  return files;
}
