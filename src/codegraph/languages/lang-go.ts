/** Parses `module <path>` out of a go.mod text. */
export function goModulePath(goMod: string): string | undefined {
  // Line by line, as /^\s*module\s+(\S+)/m matched (its `\s*` crossed line breaks, so a go.mod of blank
  // lines was rescanned from every line: quadratic, ~15 min per MiB).
  let offset = 0;
  for (const line of goMod.split('\n')) {
    const m = /^\s*module(?=\s|$)/.exec(line);
    if (m) {
      let j = offset + m[0].length;
      while (j < goMod.length && /\s/.test(goMod[j])) j++;
      let k = j;
      while (k < goMod.length && !/\s/.test(goMod[k])) k++;
      if (k > j && j > offset + m[0].length) return goMod.slice(j, k).replace(/^"|"$/g, '');
    }
    offset += line.length + 1;
  }
  return undefined;
}
