/**
 * The known name closest to a mistyped one, for "did you mean" hints (CLI commands and queries, RPC
 * methods): the smallest edit distance, case-insensitive, when it is at most a third of the name's
 * length (at least 2); null when nothing is that close, so a wild guess is never offered.
 */
export function closestName(name: string, known: readonly string[]): string | null {
  const wanted = name.toLowerCase().slice(0, 100);
  const limit = Math.max(2, Math.floor(wanted.length / 3));
  let best: string | null = null;
  let bestDistance = limit + 1;
  for (const k of known) {
    const d = editDistance(wanted, k.toLowerCase(), bestDistance);
    if (d < bestDistance) {
      best = k;
      bestDistance = d;
    }
  }
  return best;
}

/** Levenshtein distance with transpositions counted as one edit; stops early past `cap`. */
function editDistance(a: string, b: string, cap: number): number {
  if (Math.abs(a.length - b.length) >= cap) return cap;
  let prev2: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      let d = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, prev2[j - 2] + 1);
      cur.push(d);
      rowMin = Math.min(rowMin, d);
    }
    if (rowMin >= cap) return cap;
    prev2 = prev;
    prev = cur;
  }
  return prev[b.length];
}

/** ` — did you mean "x"?` for a message, or '' when nothing is close. */
export function didYouMean(name: string, known: readonly string[]): string {
  const c = closestName(name, known);
  return c ? ` — did you mean "${c}"?` : '';
}
