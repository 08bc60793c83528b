/**
 * Scoring helpers of `npm run eval:cohorts` (bench/eval-cohorts.ts), pure so that test/bench/cohort-score.test.ts
 * can exercise them on hand-built partitions.
 */

/** Rand index of a partition (file → group label) against the truth over all pairs of the truth's files. */
export function randIndex(truth: Map<string, number>, groups: Map<string, string>): number {
  const files = [...truth.keys()];
  let agree = 0;
  let pairs = 0;
  for (let i = 0; i < files.length; i++) {
    for (let j = i + 1; j < files.length; j++) {
      pairs++;
      const sameTruth = truth.get(files[i]) === truth.get(files[j]);
      const sameGroup = groups.get(files[i]) === groups.get(files[j]);
      if (sameTruth === sameGroup) agree++;
    }
  }
  return pairs ? agree / pairs : 1;
}

/**
 * The engine's partition as scored: file → cohort key from the review output's cohorts, then
 * (1) a rename is one reviewed file: its old path (a truth file too when one commit moved it) is in the
 *     cohort of its new path;
 * (2) a truth file the output does not list is a group of its own (two absent files are not "together").
 */
export function engineGroups(
  cohorts: ReadonlyArray<{ key: string; files: readonly string[] }>,
  changedFiles: ReadonlyArray<{ path: string; oldPath?: string }>,
  truthFiles: Iterable<string>,
): Map<string, string> {
  const groups = new Map<string, string>();
  for (const cohort of cohorts) for (const f of cohort.files) groups.set(f, cohort.key);
  for (const cf of changedFiles) if (cf.oldPath && cf.oldPath !== cf.path && !groups.has(cf.oldPath) && groups.has(cf.path)) groups.set(cf.oldPath, groups.get(cf.path)!);
  for (const f of truthFiles) if (!groups.has(f)) groups.set(f, `absent\0${f}`);
  return groups;
}
