/** A plain-text table with a header row, columns padded to their widest cell (the CLI's list output). */
export function table(header: string[], rows: string[][]): string {
  if (rows.length === 0) return `(none)\n`;
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : (c ?? '').padEnd(widths[i]))).join('  ').trimEnd();
  return `${[line(header), ...rows.map(line)].join('\n')}\n`;
}
