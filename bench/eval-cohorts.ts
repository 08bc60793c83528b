import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { closeSharedExtractPool } from '../src/codegraph/extract-pool';
import { classifyRole } from '../src/codegraph/file-roles';
import { languageOf } from '../src/codegraph/languages/languages';
import { computeReview } from '../src/compute/review';
import { ALL_SIGNALS, DEFAULT_SIGNALS, FormationSignal } from '../src/cohorts';
import { AFFINITY_FEATURES } from '../src/cohorts/affinity';
import { checkModel, WEIGHTS } from '../src/cohorts/fitted-model';
import { main as fitCohorts } from './fit-cohorts';
import type { PairEvidence } from '../src/cohorts/types';
import { GitRepo } from '../src/git/repo';
import { engineGroups, randIndex } from './support/cohort-score';
import { argValue, median, round } from './support/report';

export { randIndex };

/**
 * `npm run eval:cohorts -- --repo <git dir> [--n N] [--seed S]`: cohort quality on composite changes built
 * from the repository's own history, SmartCommit's synthetic method. A case is k = 2..4 consecutive commits
 * on the first-parent line by one author, each small (1..MAX_CODE_FILES code files), with pairwise disjoint
 * files; its diff (parent of the first → last) is computed as one PR. Ground truth: the commit each code
 * file came from. Score: the Rand index over pairs of the case's code files (source and test files with a
 * grammar — what semantic formation groups), for the engine and for three baselines (every file alone, by
 * directory, everything in one group).
 */
const MAX_CODE_FILES = 8;
/** A commit touching more files than this (any kind) is not "small". */
const MAX_ALL_FILES = 15;

interface Commit {
  sha: string;
  parent: string;
  author: string;
  files: string[];
}

interface Case {
  commits: Commit[];
  /** code file → index of the commit it came from */
  truth: Map<string, number>;
}

/** The cases of a dump file (gzipped or not), as cases to compute again: one commit base → head, the dumped truth. */
function dumpedCases(file: string): Case[] {
  const raw = fs.readFileSync(file);
  const text = file.endsWith('.gz') ? zlib.gunzipSync(raw).toString('utf8') : raw.toString('utf8');
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const d = JSON.parse(line) as DumpCase;
      return { commits: [{ sha: d.head, parent: d.base, author: '', files: d.files }], truth: new Map(d.files.map((f, i) => [f, d.truth[i]])) };
    });
}

/** mulberry32 (test/support/prng.ts): the same seed, the same sequence on every machine. */
import { mulberry32 as prng } from '../test/support/prng';

export { prng };

const isCode = (p: string) => {
  const role = classifyRole(p);
  return (role === 'source' || role === 'test') && !!languageOf(p);
};

/** First-parent history, oldest first, with each commit's changed files (renames as their new path). */
export async function history(repo: GitRepo): Promise<Commit[]> {
  const out = await repo.git(['log', '--first-parent', '--reverse', '--format=%x00%H %P%x01%ae', '--name-only', '--no-renames', 'HEAD'], { maxBuffer: 1024 * 1024 * 1024 });
  const commits: Commit[] = [];
  for (const chunk of out.split('\0').slice(1)) {
    const [head, ...rest] = chunk.split('\n');
    const [ids, author] = head.split('\x01');
    const [sha, ...parents] = ids.trim().split(' ');
    if (parents.length !== 1) continue; // roots and merges are no one's small commit
    commits.push({ sha, parent: parents[0], author, files: rest.map((l) => l.trim()).filter(Boolean) });
  }
  return commits;
}

export function candidates(commits: Commit[]): Case[] {
  const out: Case[] = [];
  const small = (c: Commit) => {
    const code = c.files.filter(isCode).length;
    return code >= 1 && code <= MAX_CODE_FILES && c.files.length <= MAX_ALL_FILES;
  };
  for (let i = 0; i < commits.length; i++) {
    for (let k = 2; k <= 4 && i + k <= commits.length; k++) {
      const window = commits.slice(i, i + k);
      // Consecutive: each commit's parent is the previous one; one author; small; disjoint files.
      if (window.some((c, j) => j > 0 && c.parent !== window[j - 1].sha)) break;
      if (window.some((c) => c.author !== window[0].author || !small(c))) break;
      const seen = new Set<string>();
      let disjoint = true;
      for (const c of window) for (const f of c.files) {
        if (seen.has(f)) disjoint = false;
        seen.add(f);
      }
      if (!disjoint) break;
      const truth = new Map<string, number>();
      window.forEach((c, j) => c.files.filter(isCode).forEach((f) => truth.set(f, j)));
      if (truth.size >= 2) out.push({ commits: window, truth });
    }
  }
  return out;
}

/** Pair counts of one partition: same-commit pairs split, different-commit pairs joined. */
function pairErrors(truth: Map<string, number>, groups: Map<string, string>): { same: number; split: number; different: number; joined: number } {
  const files = [...truth.keys()];
  const r = { same: 0, split: 0, different: 0, joined: 0 };
  for (let i = 0; i < files.length; i++) {
    for (let j = i + 1; j < files.length; j++) {
      const sameTruth = truth.get(files[i]) === truth.get(files[j]);
      const sameGroup = groups.get(files[i]) === groups.get(files[j]);
      if (sameTruth) {
        r.same++;
        if (!sameGroup) r.split++;
      } else {
        r.different++;
        if (sameGroup) r.joined++;
      }
    }
  }
  return r;
}

/** One case of a dump: the truth files, the formation node each maps to (-1: none) and the evidence of the pairs between those nodes. */
export interface DumpCase {
  repo: string;
  base: string;
  head: string;
  features: readonly string[];
  files: string[];
  /** Index of the commit each file came from. */
  truth: number[];
  /** Formation node of each file (a rename's old path maps to its new path's node); -1 when formation had none. */
  node: number[];
  /** Pairs of nodes [a, b, x] (a < b), the nodes some file maps to. */
  pairs: Array<[number, number, number[]]>;
}

export function dumpCase(repo: string, base: string, head: string, truth: Map<string, number>, evidence: PairEvidence | undefined, changedFiles: ReadonlyArray<{ path: string; oldPath?: string }>): DumpCase {
  const files = [...truth.keys()];
  const at = new Map((evidence?.files ?? []).map((p, i) => [p, i]));
  const renamedTo = new Map(changedFiles.filter((f) => f.oldPath && f.oldPath !== f.path).map((f) => [f.oldPath!, f.path]));
  const node = files.map((f) => at.get(f) ?? (renamedTo.has(f) ? at.get(renamedTo.get(f)!) : undefined) ?? -1);
  const used = new Set(node.filter((n) => n >= 0));
  const pairs = (evidence?.pairs ?? []).filter((q) => used.has(q.a) && used.has(q.b)).map((q): [number, number, number[]] => [q.a, q.b, q.x.map((v) => Math.round(v * 1e4) / 1e4)]);
  return { repo, base, head, features: AFFINITY_FEATURES, files, truth: files.map((f) => truth.get(f)!), node, pairs };
}

export async function main(args: string[]): Promise<void> {
  // --cv: the leave-repository-out table from the corpus's dumps (bench/fit-cohorts.ts), no computation.
  if (args.includes('--cv')) return fitCohorts(args);
  const repoDir = argValue(args, '--repo');
  if (!repoDir) throw new Error('usage: npm run eval:cohorts -- --repo <git dir> [--n N] [--seed S] [--signals a,b | --without a] [--syntax-only] [--verbose] [--all-cases] [--formation rules|fitted] [--dump file.jsonl] [--budget-s S] [--cases-from dump.jsonl.gz] | --cv [--dumps dir]');
  const n = Number(argValue(args, '--n') ?? 150);
  const seed = Number(argValue(args, '--seed') ?? 1);
  const verbose = args.includes('--verbose');
  // --all-cases: print every case (with --verbose only those the engine loses to by-file or by-directory).
  const allCases = args.includes('--all-cases');
  // --syntax-only: no TypeScript checker (the compute default runs it for TS/JS under a project root).
  const syntaxOnly = args.includes('--syntax-only');
  // --dump <file.jsonl>: appends each case's truth and pair evidence (bench/fit-cohorts.ts reads it).
  const dump = argValue(args, '--dump');
  // --budget-s S: take no new case after S seconds (the dump of a large corpus; which cases then depends on the machine).
  const budgetMs = Number(argValue(args, '--budget-s') ?? Infinity) * 1000;
  const started = performance.now();
  // --formation rules|fitted|default: the rule engine, the fitted model (weights.json, adopted or not), or the engine's default.
  const formation = argValue(args, '--formation') ?? 'default';
  const affinityModel = formation === 'rules' ? null : formation === 'fitted' ? checkModel(WEIGHTS) : undefined;
  
  // --signals a,b (or none) sets them; --without a,b removes from the default.
  const listArg = (name: string) => (argValue(args, name) ?? '').split(',').filter(Boolean);
  let signals: FormationSignal[] = argValue(args, '--signals') !== undefined ? (listArg('--signals').filter((x) => x !== 'none') as FormationSignal[]) : [...DEFAULT_SIGNALS];
  signals = signals.filter((x) => !listArg('--without').includes(x));
  for (const x of signals) if (!ALL_SIGNALS.includes(x)) throw new Error(`unknown signal ${x}; known: ${ALL_SIGNALS.join(', ')}`);
  const name = path.basename(path.resolve(repoDir));
  const repo = await GitRepo.open(repoDir);
  const workspaceDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-eval-cohorts-'));
  try {
    const all = candidates(await history(repo));
    // Sample without replacement; a case's commits may overlap another case's (as in SmartCommit).
    const rand = prng(seed);
    const pool = [...all];
    for (let i = pool.length - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1));
      [pool[i], pool[j]] = [pool[j], pool[i]];
    }
    // --cases-from <dump.jsonl[.gz]>: exactly the cases of an earlier dump (its base, head and truth), recomputed by
    // this engine — a corpus re-dumped after a change of what the engine reads, case for case.
    const casesFrom = argValue(args, '--cases-from');
    const cases: Case[] = casesFrom ? dumpedCases(casesFrom) : pool.slice(0, n);
    const scores = { engine: [] as number[], byFile: [] as number[], byDirectory: [] as number[], oneGroup: [] as number[] };
    const vsDir = { wins: 0, ties: 0, losses: 0 };
    const errors = { same: 0, split: 0, different: 0, joined: 0 };
    let mergedNothing = 0;
    let failures = 0;
    /** Cases whose code files are all but one generated by their header (no pair left to score). */
    let generatedOnly = 0;
    const ms: number[] = [];
    for (const c of cases) {
      if (performance.now() - started > budgetMs) break;
      const base = c.commits[0].parent;
      const head = c.commits[c.commits.length - 1].sha;
      const t0 = performance.now();
      let groups: Map<string, string>;
      try {
        let evidence: PairEvidence | undefined;
        const { data } = await computeReview({ repo, baseSha: base, headSha: head, workspaceDir, signals, typeEdges: !syntaxOnly, affinityModel, ...(dump ? { onFormationEvidence: (e: PairEvidence) => (evidence = e) } : {}) });
        // A file the engine reads as generated from its header (SPEC §8.3) is no formation node: not scored, as
        // generated paths are not (isCode). A case left with fewer than two code files has nothing to score.
        const roles = new Map(data.changedFiles.map((f) => [f.path, f.role]));
        for (const f of [...c.truth.keys()]) if (roles.has(f) && roles.get(f) !== 'source' && roles.get(f) !== 'test') c.truth.delete(f);
        if (c.truth.size < 2) {
          generatedOnly++;
          continue;
        }
        groups = engineGroups(data.cohorts, data.changedFiles, c.truth.keys());
        if (dump) fs.appendFileSync(dump, JSON.stringify(dumpCase(name, base, head, c.truth, evidence, data.changedFiles)) + '\n');
      } catch (e) {
        failures++;
        console.error(`  compute failed for ${base.slice(0, 8)}..${head.slice(0, 8)}: ${(e as Error).message.slice(0, 300)}`);
        continue;
      }
      ms.push(performance.now() - t0);
      const engine = randIndex(c.truth, groups);
      const byFile = randIndex(c.truth, new Map([...c.truth.keys()].map((f) => [f, f])));
      const byDirectory = randIndex(c.truth, new Map([...c.truth.keys()].map((f) => [f, path.posix.dirname(f)])));
      const oneGroup = randIndex(c.truth, new Map([...c.truth.keys()].map((f) => [f, ''])));
      scores.engine.push(engine);
      scores.byFile.push(byFile);
      scores.byDirectory.push(byDirectory);
      scores.oneGroup.push(oneGroup);
      if (Math.abs(engine - byDirectory) < 1e-9) vsDir.ties++;
      else if (engine > byDirectory) vsDir.wins++;
      else vsDir.losses++;
      const e = pairErrors(c.truth, groups);
      for (const k of Object.keys(errors) as Array<keyof typeof errors>) errors[k] += e[k];
      if (new Set([...c.truth.keys()].map((f) => groups.get(f))).size === c.truth.size) mergedNothing++;
      if (allCases || (verbose && engine < Math.max(byFile, byDirectory))) {
        const show = (m: Map<string, string | number>) => [...new Set(m.values())].map((g) => [...c.truth.keys()].filter((f) => m.get(f) === g).join(' ')).join('  |  ');
        console.log(`case ${base.slice(0, 8)}..${head.slice(0, 8)} engine ${engine.toFixed(2)} file ${byFile.toFixed(2)} dir ${byDirectory.toFixed(2)}\n  truth:  ${show(c.truth)}\n  engine: ${show(new Map([...c.truth.keys()].map((f) => [f, groups.get(f)!])))}`);
      }
    }
    const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
    const row = (label: string, xs: number[]) => `${label.padEnd(20)} median ${median(xs).toFixed(3)}  mean ${mean(xs).toFixed(3)}`;
    const scored = scores.engine.length;
    console.log(`eval:cohorts — ${name}: ${scored} composite cases (of ${all.length} candidates, seed ${seed}), signals [${signals.join(', ') || 'none'}], formation ${formation}${affinityModel !== undefined ? '' : ` (${WEIGHTS.adopted ? WEIGHTS.version : 'rules'})`}, ${syntaxOnly ? 'syntactic edges only' : `type-resolved + syntactic edges (checker edges join: ${signals.includes('type-edges') ? 'all' : signals.includes('type-bindings') ? 'bindings and namespace members' : 'none'})`}, k = 2..4 consecutive small commits by one author with disjoint files; Rand index over code-file pairs`);
    console.log(row('engine', scores.engine));
    console.log(row('group-by-file', scores.byFile));
    console.log(row('group-by-directory', scores.byDirectory));
    console.log(row('one-group', scores.oneGroup));
    console.log(`engine vs by-directory per case: ${vsDir.wins} wins, ${vsDir.ties} ties, ${vsDir.losses} losses`);
    console.log(`engine pair errors: ${errors.same ? ((100 * errors.split) / errors.same).toFixed(1) : '0'} % of same-commit pairs split, ${errors.different ? ((100 * errors.joined) / errors.different).toFixed(1) : '0'} % of different-commit pairs joined; merged nothing in ${mergedNothing} of ${scored} cases; ${generatedOnly} cases left with one code file (the others generated by their header); ${failures} compute failures; median compute ${median(ms).toFixed(0)} ms`);
    console.log(
      JSON.stringify({
        bench: 'eval-cohorts',
        repo: name,
        seed,
        signals,
        typeEdges: !syntaxOnly,
        candidates: all.length,
        cases: scored,
        generatedOnly,
        failures,
        engine: { median: round(median(scores.engine)), mean: round(mean(scores.engine)) },
        byFile: { median: round(median(scores.byFile)), mean: round(mean(scores.byFile)) },
        byDirectory: { median: round(median(scores.byDirectory)), mean: round(mean(scores.byDirectory)) },
        oneGroup: { median: round(median(scores.oneGroup)), mean: round(mean(scores.oneGroup)) },
        vsDirectory: vsDir,
        sameCommitPairsSplit: round(errors.same ? errors.split / errors.same : 0),
        differentCommitPairsJoined: round(errors.different ? errors.joined / errors.different : 0),
        mergedNothing,
        medianComputeMs: Math.round(median(ms)),
      }),
    );
  } finally {
    await closeSharedExtractPool();
    repo.close();
    fs.rmSync(workspaceDir, { recursive: true, force: true });
  }
}
