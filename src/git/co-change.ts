import type { GitRepo } from './repo';

/** Commits read back from the base: enough history to see habits, little enough to stay fast. */
export const CO_CHANGE_WINDOW = 300;
/** A commit touching more files than this (a reformat, a rename sweep) says nothing about which belong together. */
const MAX_FILES_PER_COMMIT = 20;
/** Joined only when they changed together at least this often… */
const MIN_TOGETHER = 2;
/** …and in at least this share of the commits of the rarer of the two. */
const MIN_SHARE = 0.5;

/**
 * Pairs of `files` that earlier commits (first-parent history of `base`, newest CO_CHANGE_WINDOW) changed
 * together — the co-change signal of cohort formation, weaker than a reference. Paths are as of each
 * commit (renames are not followed).
 */
export async function coChangePairs(repo: GitRepo, base: string, files: string[]): Promise<Array<{ a: string; b: string; together: number; window: number }>> {
  if (files.length < 2) return [];
  const wanted = new Set(files);
  let log: string;
  try {
    log = await repo.git(['log', '--first-parent', '--no-merges', '--no-renames', `-n${CO_CHANGE_WINDOW}`, '--format=%x00', '--name-only', base]);
  } catch {
    return []; // a shallow or broken history has no co-change evidence
  }
  const freq = new Map<string, number>();
  const together = new Map<string, number>();
  for (const chunk of log.split('\0').slice(1)) {
    const all = chunk.split('\n').map((l) => l.trim()).filter(Boolean);
    if (all.length > MAX_FILES_PER_COMMIT) continue;
    const mine = all.filter((f) => wanted.has(f)).sort();
    for (const f of mine) freq.set(f, (freq.get(f) ?? 0) + 1);
    for (let i = 0; i < mine.length; i++) for (let j = i + 1; j < mine.length; j++) {
      const key = `${mine[i]}\0${mine[j]}`;
      together.set(key, (together.get(key) ?? 0) + 1);
    }
  }
  const out: Array<{ a: string; b: string; together: number; window: number }> = [];
  for (const [key, n] of together) {
    const [a, b] = key.split('\0');
    if (n >= MIN_TOGETHER && n / Math.min(freq.get(a)!, freq.get(b)!) >= MIN_SHARE) out.push({ a, b, together: n, window: CO_CHANGE_WINDOW });
  }
  // Strongest first: formation joins in this order under its size bound.
  return out.sort((x, y) => y.together - x.together || x.a.localeCompare(y.a) || x.b.localeCompare(y.b));
}
