import * as path from 'node:path';
import { BOUNDS, clipText } from '../events/catalogue/bounds';

/** A name or path as a reason cites it: bounded at the source (BOUNDS.reasonName), marked when clipped. */
export const cite = (name: string): string => clipText(name, BOUNDS.reasonName);
export const baseName = (p: string): string => cite(path.posix.basename(p));
/** Up to four names in backticks, then how many more: `` `a`, `b` and 3 more ``. */
export const firstFour = (names: readonly string[]): string => `${names.slice(0, 4).map((n) => `\`${cite(n)}\``).join(', ')}${names.length > 4 ? ` and ${names.length - 4} more` : ''}`;

/** Ancestors of a symbol id, nearest first: `a.ts#A.b.c` → `a.ts#A.b`, `a.ts#A`. */
export function ancestors(id: string): string[] {
  const hashAt = id.indexOf('#');
  if (hashAt < 0) return [];
  const out: string[] = [];
  let q = id.slice(hashAt + 1);
  for (let dot = q.lastIndexOf('.'); dot > 0; dot = q.lastIndexOf('.')) {
    q = q.slice(0, dot);
    out.push(`${id.slice(0, hashAt)}#${q}`);
  }
  return out;
}
