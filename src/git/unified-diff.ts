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

const C_ESCAPES: Record<string, number> = { a: 7, b: 8, t: 9, n: 10, v: 11, f: 12, r: 13, '"': 34, '\\': 92 };

/**
 * Git's C-style quoting of a path (`core.quotePath`): `\ooo` octal bytes of the UTF-8 encoding (every
 * non-ASCII name, e.g. `"docs/zh-CN/\345\217\202.md"`) and `\t \n \" \\ …`. Not JSON: JSON.parse
 * refuses the octal escapes.
 */
export function unquoteGitPath(quoted: string): string {
  const bytes: number[] = [];
  for (let i = 1; i < quoted.length - 1; i++) {
    const c = quoted[i];
    if (c !== '\\') {
      const ch = String.fromCodePoint(quoted.codePointAt(i)!);
      bytes.push(...Buffer.from(ch, 'utf8'));
      i += ch.length - 1;
      continue;
    }
    const next = quoted[i + 1];
    if (/[0-7]/.test(next)) {
      bytes.push(parseInt(quoted.slice(i + 1, i + 4), 8) & 0xff);
      i += 3;
    } else {
      bytes.push(C_ESCAPES[next] ?? next.charCodeAt(0));
      i += 1;
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

function unquotePath(raw: string): string {
  const p = raw.startsWith('"') && raw.endsWith('"') ? unquoteGitPath(raw) : raw;
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
