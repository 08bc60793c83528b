import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { closeSharedExtractPool } from '../src/codegraph/extract-pool';
import { computeReview } from '../src/compute/review';
import { DEFAULT_SIGNALS, FormationSignal } from '../src/cohorts';
import { GitRepo } from '../src/git/repo';
import { engineGroups, randIndex } from './support/cohort-score';
import { rulesGroups, median, mean } from './support/affinity-fit';
import type { DumpCase } from './support/affinity-fit';
import { corpusHalves } from './learn-boilerplate';
import { argValue } from './support/report';

/**
 * A formation variant measured on the corpus's committed cases (bench/cohort-corpus), recomputing only the cases
 * the variant can change. `--variant boilerplate`: `boilerplate-lines` at each of `--thresholds` (0: no line is
 * boilerplate, the baseline); only cases where the dump says `similar-edit` asked for a join are recomputed, since
 * dropping keys changes nothing where it joined nothing. The others keep the dump's rules partition (the same for
 * every variant). One JSON line per case to `--out` (resumable: cases already there are skipped); `--summarize`
 * prints, per repository and variant, median / mean, cases up / down against the first threshold, and the aggregate.
 *   node bench/run.js eval-boilerplate --half training|validation --thresholds 0,3,5 | --variants '0;0+edit-rare-id' [--affected a,b] --out f.jsonl [--clones dir]
 *   node bench/run.js eval-boilerplate --summarize f.jsonl
 */
type Raw = DumpCase & { features: string[]; base: string; head: string };

function dumpOf(name: string): Raw[] {
  const f = path.join(__dirname, 'cohort-corpus', `${name}.jsonl.gz`);
  const seen = new Set<string>();
  const out: Raw[] = [];
  for (const line of zlib.gunzipSync(fs.readFileSync(f)).toString('utf8').split('\n')) {
    if (!line.trim()) continue;
    const c = JSON.parse(line) as Raw;
    const key = `${c.base}\0${c.head}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(c);
  }
  return out;
}

interface CaseLine {
  repo: string;
  base: string;
  head: string;
  affected: boolean;
  byFile: number;
  byDir: number;
  dumpRules: number;
  variants: Record<string, number>;
}

function summarize(file: string): void {
  const lines = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as CaseLine);
  // The variants every recomputed case has (a resumed run may have measured fewer).
  const recomputed = lines.filter((l) => l.affected);
  const variants = Object.keys(recomputed[0]?.variants ?? {}).filter((v) => recomputed.every((l) => v in l.variants));
  const byRepo = new Map<string, CaseLine[]>();
  for (const l of lines) byRepo.set(l.repo, [...(byRepo.get(l.repo) ?? []), l]);
  const score = (l: CaseLine, v: string) => (l.affected ? l.variants[v] : l.dumpRules);
  const agg = new Map(variants.map((v) => [v, { medians: [] as number[], means: [] as number[], belowFile: 0, up: 0, down: 0, reposUp: 0, reposDown: 0 }]));
  const f3 = (x: number) => x.toFixed(3);
  console.log(`${'repository'.padEnd(34)} cases affected  by-file med  ${variants.map((v) => `t=${v} med/mean (up/down)`).join('  ')}`);
  for (const [repo, cs] of [...byRepo].sort((a, b) => a[0].localeCompare(b[0]))) {
    const fileMed = median(cs.map((c) => c.byFile));
    const base = variants[0];
    const cols = variants.map((v) => {
      const xs = cs.map((c) => score(c, v));
      const a = agg.get(v)!;
      const med = median(xs);
      a.medians.push(med);
      a.means.push(mean(xs));
      if (med < fileMed - 1e-9) a.belowFile++;
      const up = cs.filter((c) => c.affected && c.variants[v] > c.variants[base] + 1e-9).length;
      const down = cs.filter((c) => c.affected && c.variants[v] < c.variants[base] - 1e-9).length;
      a.up += up;
      a.down += down;
      const bm = median(cs.map((c) => score(c, base)));
      if (med > bm + 1e-9) a.reposUp++;
      if (med < bm - 1e-9) a.reposDown++;
      return `${f3(med)}/${f3(mean(xs))} (${up}/${down})`.padEnd(24);
    });
    console.log(`${repo.padEnd(34)} ${String(cs.length).padStart(5)} ${String(cs.filter((c) => c.affected).length).padStart(8)}  ${f3(fileMed)}        ${cols.join('')}`);
  }
  for (const [v, a] of agg) console.log(`t=${v}: ${a.medians.length} repos, mean of medians ${f3(mean(a.medians))}, mean of means ${f3(mean(a.means))}, medians below by-file ${a.belowFile}, cases up/down vs t=${variants[0]} ${a.up}/${a.down}, repo medians up/down ${a.reposUp}/${a.reposDown}`);
}

export async function main(args: string[]): Promise<void> {
  const sum = argValue(args, '--summarize');
  if (sum) return summarize(sum);
  const half = argValue(args, '--half') as 'training' | 'validation';
  const out = argValue(args, '--out');
  if (!out || (half !== 'training' && half !== 'validation')) throw new Error('usage: --half training|validation --thresholds 0,3 --out f.jsonl | --summarize f.jsonl');
  const clones = argValue(args, '--clones') ?? '/tmp/corpus';
  // --variants '0;3;0+edit-rare-id': each a boilerplate threshold and extra signals; --thresholds 0,3: thresholds only.
  const variants = (argValue(args, '--variants') ?? (argValue(args, '--thresholds') ?? '0').split(',').join(';')).split(';').map((v) => {
    const [t, ...extra] = v.split('+');
    return { name: v, threshold: Number(t), extra: extra as FormationSignal[] };
  });
  // --affected a,b: recompute the cases where the dump says one of these signals asked for a join (default similar-edit).
  const affectedBy = (argValue(args, '--affected') ?? 'similar-edit').split(',').map((x) => `signal:${x}`);
  const only = (argValue(args, '--repos') ?? '').split(',').filter(Boolean);
  const done = new Set(fs.existsSync(out) ? fs.readFileSync(out, 'utf8').split('\n').filter(Boolean).map((l) => { const c = JSON.parse(l) as CaseLine; return `${c.repo}\0${c.base}\0${c.head}`; }) : []);
  // --min-cohort N: only cases whose dumped rules partition has a cohort of N or more files (join-attach: 4).
  const minCohort = Number(argValue(args, '--min-cohort') ?? 0);
  const largest = (c: Raw) => Math.max(0, ...[...rulesGroups(c, c.features.indexOf('rules')).values()].reduce((m, g) => m.set(g, (m.get(g) ?? 0) + 1), new Map<string, number>()).values());
  const isAffected = (c: Raw) => (!minCohort || largest(c) >= minCohort) && affectedBy.some((f) => c.features.includes(f) && c.pairs.some(([, , x]) => x[c.features.indexOf(f)] > 0));
  const signals: FormationSignal[] = [...new Set<FormationSignal>([...DEFAULT_SIGNALS, 'boilerplate-lines'])];
  const workspaceDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-eval-boilerplate-'));
  try {
    for (const name of corpusHalves()[half]) {
      if (only.length && !only.includes(name)) continue;
      const cases = dumpOf(name);
      const repo = await GitRepo.open(path.join(clones, name));
      const t0 = Date.now();
      try {
        for (const c of cases) {
          if (done.has(`${name}\0${c.base}\0${c.head}`)) continue;
          const truth = new Map(c.files.map((f, i) => [f, c.truth[i]]));
          const affected = isAffected(c);
          const line: CaseLine = {
            repo: name,
            base: c.base,
            head: c.head,
            affected,
            byFile: randIndex(truth, new Map(c.files.map((f) => [f, f]))),
            byDir: randIndex(truth, new Map(c.files.map((f) => [f, path.posix.dirname(f)]))),
            dumpRules: randIndex(truth, rulesGroups(c, c.features.indexOf('rules'))),
            variants: {},
          };
          if (affected) {
            for (const v of variants) {
              const { data } = await computeReview({ repo, baseSha: c.base, headSha: c.head, workspaceDir, signals: [...signals, ...v.extra], boilerplateThreshold: v.threshold, affinityModel: null });
              line.variants[v.name] = randIndex(truth, engineGroups(data.cohorts, data.changedFiles, truth.keys()));
            }
          }
          fs.appendFileSync(out, JSON.stringify(line) + '\n');
        }
      } finally {
        repo.close();
      }
      console.error(`${name}: ${cases.length} cases, ${cases.filter(isAffected).length} recomputed ×${variants.length}, ${((Date.now() - t0) / 1000).toFixed(0)} s`);
    }
  } finally {
    await closeSharedExtractPool();
    fs.rmSync(workspaceDir, { recursive: true, force: true });
  }
}
