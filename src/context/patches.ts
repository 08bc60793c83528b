/** One hunk of a unified diff with its text (header line included). */
export interface TextHunk {
  oldStart: number;
  oldCount: number;
  newStart: number;
  newCount: number;
  text: string;
}

function unquotePath(raw: string): string {
  const p = raw.startsWith('"') && raw.endsWith('"') ? (JSON.parse(raw) as string) : raw;
  return p.replace(/^[ab]\//, '');
}

/** Splits `git diff` output into hunks per file, keyed by head path (base path for deletions) and by base path. */
export function splitPatch(patch: string): Map<string, TextHunk[]> {
  const files = new Map<string, TextHunk[]>();
  let oldPath: string | undefined;
  let current: TextHunk[] | undefined;
  let hunk: { h: TextHunk; lines: string[] } | undefined;
  let inHeader = false;
  const flush = () => {
    if (hunk && current) current.push({ ...hunk.h, text: hunk.lines.join('\n') });
    hunk = undefined;
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
      current = [];
      files.set(newPath, current);
      if (oldPath && oldPath !== newPath) files.set(oldPath, current);
    } else if (line.startsWith('@@') && current) {
      flush();
      const m = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/.exec(line);
      if (m) hunk = { h: { oldStart: Number(m[1]), oldCount: m[2] === undefined ? 1 : Number(m[2]), newStart: Number(m[3]), newCount: m[4] === undefined ? 1 : Number(m[4]), text: '' }, lines: [line] };
    } else if (hunk && !inHeader && (line.startsWith('+') || line.startsWith('-') || line.startsWith(' ') || line.startsWith('\\'))) {
      hunk.lines.push(line);
    }
  }
  flush();
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
