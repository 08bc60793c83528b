import { createHash } from 'node:crypto';
import * as path from 'node:path';
import type { GitRepo, TreeEntry } from '../../git/repo';
import { ts, type CheckerCaps, type CheckerJob, type JobDefinition, type NotWalkedReason } from './checker-job';
import { CHECKER_HEAP_MB, clearCheckerThreadCache, runOnCheckerThread } from './checker-thread';
import type { CheckerEdgeStore, StoredCheckerEdge } from '../facts';
import type { CodeGraph } from '../graph';
import { CODEGRAPH_ENGINE_VERSION } from '../indexer';

/**
 * Type-resolved edges for TypeScript/JavaScript: TypeScript's checker over a Program of the files whose
 * references are wanted (the changed files of a PR, or every file for an evaluation) and whatever they
 * import, read from the commit's blobs (no checkout). Each identifier the checker binds to a declaration
 * in another indexed file becomes an edge to the innermost indexed definition containing that
 * declaration, recorded with provenance `checker` (and `member` when the declaration is a field of that
 * definition rather than the definition itself). This finds what the syntax-only resolver cannot: member calls on
 * inferred receivers (`const e = make(); e.run()` → `Job.run`), `require('../')` through a package root,
 * re-exports of re-exports. The syntactic edges stay; the checker only adds. Only files under a project
 * root (tsconfig.json, jsconfig.json or package.json in their directory or above) are walked.
 *
 * Bounded twice (docs/cohorts.md, "What the checker may cost"):
 * - deterministic work caps, counted in what the compiler does, never in time, so one input gives the
 *   same edges on any machine: at most `maxFiles` files asked for (else none is walked), a Program of at
 *   most `maxProgramFiles` files and `maxProgramChars` characters (nearest imports first, as the compiler
 *   discovers them), at most `maxQueries` identifiers handed to the checker and `maxTypeWork` of the
 *   checker's own work (types + instantiations + relation checks). A file is walked whole or not at all;
 *   each file not walked is reported with its reason (`skipped`) and keeps the syntactic edges alone;
 * - a wall-clock safety limit (`safetyMs`) on the worker thread the compiler runs on (checker-thread.ts),
 *   for what no counter sees (one pathological question can run for minutes): past it the thread is
 *   terminated and nothing of the checker is used (`failedSafe`), so the caller can fall back to the
 *   syntactic edges for the whole review. That verdict is stored per commit like a result, so the same
 *   computation on the same workspace gives the same bytes again.
 *
 * Cost (a computation runs this by default): parsed SourceFiles are shared between Programs (base and
 * head, successive computations), a computation asks only for edges into the changed files (`targetFiles`),
 * and each walked file's edges are stored per commit (`cache`), so a recomputation walks nothing twice.
 */
export interface CheckerEdgeOptions {
  /** Repo paths of the TS/JS files whose outgoing references are resolved. */
  files: string[];
  /** More TS/JS files under a project root than this: none is walked (default CHECKER_LIMITS.maxFiles). */
  maxFiles?: number;
  /** Cap on project source files the Program may load (default 600). */
  maxProgramFiles?: number;
  /** Cap on the characters of source the Program may load (default CHECKER_LIMITS.maxProgramChars). */
  maxProgramChars?: number;
  /** Cap on identifiers handed to the checker (default CHECKER_LIMITS.maxQueries). */
  maxQueries?: number;
  /** Cap on the checker's work: types + instantiations + relation-cache entries (default CHECKER_LIMITS.maxTypeWork). */
  maxTypeWork?: number;
  /** Wall-clock safety limit of the checker's thread (default CHECKER_LIMITS.safetyMs). */
  safetyMs?: number;
  /** Heap limit of the checker's thread in MiB (default CHECKER_LIMITS.heapMb): past it the thread is stopped. */
  heapMb?: number;
  /** Load TypeScript's standard library declarations (default false: measured, the same edges on h3 at half the time). */
  lib?: boolean;
  /**
   * Only edges into these files are wanted (a computation: the changed files — what formation and the
   * blast radius read of the checker's edges). A property name (`x.name`) no definition of these files
   * carries is then not asked of the checker at all: inferring `x`'s type is most of a walk's cost.
   * Default: every file.
   */
  targetFiles?: readonly string[];
  /** Per-commit store of each walked file's checker edges (the workspace's facts cache): a file walked before at this commit is not walked again. */
  cache?: CheckerEdgeStore;
  /** Stops the checker's thread when the computation is stopped (nothing is then stored or added). */
  signal?: AbortSignal;
  /**
   * Whose computations may share parsed SourceFiles on the checker's thread (a computation: its
   * workspace). Parses are never reused across scopes: a reuse shows in the metrics and the timings, so a
   * process-wide cache would let one tenant learn whether another recently reviewed a given file.
   */
  cacheScope?: string;
}

/** The default caps (docs/configuration.md, docs/cohorts.md "What the checker may cost"). */
export const CHECKER_LIMITS = {
  maxFiles: 100,
  maxProgramFiles: 600,
  maxProgramChars: 8_000_000,
  maxQueries: 100_000,
  maxTypeWork: 250_000,
  safetyMs: 30_000,
  heapMb: CHECKER_HEAP_MB,
} as const;
export type CheckerLimits = { -readonly [K in keyof typeof CHECKER_LIMITS]: number };

/** Bump when what a walk records changes (the stored per-commit results are keyed by it). */
export const TYPE_EDGES_VERSION = 'checker-5';

export interface CheckerEdgeStats {
  /** Files whose references were walked. */
  walked: number;
  /** Project files the Program loaded. */
  programFiles: number;
  /** Edges the checker added that the syntactic resolver did not have. */
  added: number;
  /** Cross-file edges the checker confirmed that were already there. */
  confirmed: number;
  /** TS/JS files asked for that have no project root (tsconfig/jsconfig/package.json at or above them): not walked. */
  outsideProject?: number;
  /** Of `walked`, files whose edges came from the per-commit store (no checker run for them). */
  fromCache?: number;
  /** Of the Program's project files, those whose parsed SourceFile was reused from an earlier Program. */
  reusedSourceFiles?: number;
  /** True when a cap stopped the work early (the Program left files out, or files were not walked). */
  truncated: boolean;
  /** Files asked for that were not walked because of a deterministic cap, each with why (in the order asked). */
  skipped?: Array<{ path: string; reason: string }>;
  /** No file was walked, and why: more files than `maxFiles`, or the safety limit (then `failedSafe`). */
  skippedAll?: string;
  /** The safety limit stopped the checker's thread (or it failed): no checker edge was added. */
  failedSafe?: 'time' | 'memory' | 'failed';
  /** Identifiers handed to the checker, and its work (see CheckerCaps). */
  queries?: number;
  typeWork?: number;
  ms: number;
  /** Of `ms`: reading the blobs, building the Program (parse + module resolution), walking with the checker. */
  readMs?: number;
  programMs?: number;
  walkMs?: number;
}

/** What a cap means, as the review says it (the numbers are the caps, never measured times). */
export function notWalkedReason(reason: NotWalkedReason, caps: CheckerCaps): string {
  switch (reason) {
    case 'program-size':
      return `type edges skipped: the checker's Program reached its cap of ${caps.maxProgramChars} characters of source`;
    case 'queries':
      return `type edges skipped: the checker reached its cap of ${caps.maxQueries} identifiers`;
    case 'type-work':
      return `type edges skipped: the checker reached its cap of ${caps.maxTypeWork} type operations`;
    case 'not-loaded':
      return `type edges skipped: the checker's Program did not load the file`;
  }
}

/** Forgets the parsed SourceFiles kept between Programs (benchmarks measure the cold path with it). */
export function clearCheckerSourceCache(): void {
  clearCheckerThreadCache();
}

const TS_LANGUAGES = new Set(['typescript', 'tsx', 'javascript']);

/** package.json / tsconfig / jsconfig files of a commit (not vendored), remembered per repository for the last few commits (base and head are asked twice). */
const configsByRepo = new WeakMap<GitRepo, Map<string, TreeEntry[]>>();
async function projectConfigsAt(repo: GitRepo, commit: string): Promise<TreeEntry[]> {
  let memo = configsByRepo.get(repo);
  if (!memo) configsByRepo.set(repo, (memo = new Map()));
  const hit = memo.get(commit);
  if (hit) return hit;
  const configs = (await repo.lsTree(commit)).filter((e) => e.type === 'blob' && /(^|\/)(package\.json|tsconfig(\.[\w-]+)?\.json|jsconfig\.json)$/.test(e.path) && !VENDORED.test(e.path));
  memo.set(commit, configs);
  if (memo.size > 16) memo.delete(memo.keys().next().value!);
  return configs;
}
const VENDORED = /(^|\/)(node_modules|vendor|third_party|bower_components|\.yarn|dist|build)\//;

/** Adds the checker's cross-file edges for `opts.files` to `graph` (see the file comment); none when it failed safe. */
export async function addCheckerEdges(graph: CodeGraph, repo: GitRepo, opts: CheckerEdgeOptions): Promise<CheckerEdgeStats> {
  const resolved = await resolveCheckerEdges(graph, repo, opts);
  resolved.apply();
  return resolved.stats;
}

/**
 * The checker's cross-file edges for `opts.files`, added to `graph` only by `apply()`: a computation
 * resolves both sides first and applies neither when one of them failed safe (the whole review is then
 * syntax-only). `stats.added` / `confirmed` are counted by `apply()`.
 */
export async function resolveCheckerEdges(graph: CodeGraph, repo: GitRepo, opts: CheckerEdgeOptions): Promise<{ stats: CheckerEdgeStats; apply: () => void }> {
  const started = performance.now();
  const limits: CheckerLimits = {
    maxFiles: opts.maxFiles ?? CHECKER_LIMITS.maxFiles,
    maxProgramFiles: opts.maxProgramFiles ?? CHECKER_LIMITS.maxProgramFiles,
    maxProgramChars: opts.maxProgramChars ?? CHECKER_LIMITS.maxProgramChars,
    maxQueries: opts.maxQueries ?? CHECKER_LIMITS.maxQueries,
    maxTypeWork: opts.maxTypeWork ?? CHECKER_LIMITS.maxTypeWork,
    safetyMs: opts.safetyMs ?? CHECKER_LIMITS.safetyMs,
    heapMb: opts.heapMb ?? CHECKER_LIMITS.heapMb,
  };
  const stats: CheckerEdgeStats = { walked: 0, programFiles: 0, added: 0, confirmed: 0, truncated: false, ms: 0 };
  const found: Array<{ root: string; edges: StoredCheckerEdge[] }> = [];
  const apply = () => {
    if (stats.failedSafe) return;
    for (const { root, edges } of found) {
      for (const e of edges) {
        if (graph.addCheckerEdge({ ...e, fromFile: root, provenance: 'checker' })) stats.added++;
        else stats.confirmed++;
      }
    }
  };
  const done = () => {
    stats.ms = Math.round(performance.now() - started);
    return { stats, apply };
  };
  const index = graph.index;
  const candidates = opts.files.filter((f) => TS_LANGUAGES.has(index.files.get(f)?.language ?? ''));
  if (!candidates.length) return done();
  const configs = await projectConfigsAt(repo, index.commit);
  // Only files under a project root (a config or package.json in their directory or above): elsewhere
  // there is no module resolution to trust, and the syntactic edges stand alone.
  const projectDirs = new Set(configs.map((e) => path.posix.dirname(e.path)));
  const underRoot = (f: string) => {
    for (let d = path.posix.dirname(f); ; d = path.posix.dirname(d)) {
      if (projectDirs.has(d)) return true;
      if (d === '.' || d === '/') return false;
    }
  };
  const inProject = candidates.filter(underRoot);
  stats.outsideProject = candidates.length - inProject.length;
  if (!inProject.length) return done();
  // Decided on what was asked, never on what a cache holds, so a recomputation decides the same.
  if (inProject.length > limits.maxFiles) {
    stats.truncated = true;
    stats.skippedAll = `type edges skipped: ${inProject.length} changed TS/JS files, more than the checker's cap of ${limits.maxFiles}`;
    return done();
  }
  const t = ts();
  // The stored result of a file at this commit depends on the commit (every text the Program reads), the
  // index's definitions (engine version), these options and the caps.
  const caps: CheckerCaps = { maxProgramFiles: limits.maxProgramFiles, maxProgramChars: limits.maxProgramChars, maxQueries: limits.maxQueries, maxTypeWork: limits.maxTypeWork };
  const targets = opts.targetFiles ? new Set(opts.targetFiles) : undefined;
  const targetNames = targets ? new Set([...targets].flatMap((f) => [...(index.files.get(f)?.facts.defs.map((d) => d.name) ?? []), ...(index.files.get(f)?.facts.exportAliases.map(([exported]) => exported) ?? [])])) : undefined;
  const targetKey = targets ? `+t:${createHash('sha256').update([...targets].sort().join('\0')).digest('hex').slice(0, 16)}` : '';
  const capsKey = `+c:${caps.maxProgramFiles}/${caps.maxProgramChars}/${caps.maxQueries}/${caps.maxTypeWork}`;
  const engine = `${TYPE_EDGES_VERSION}+${CODEGRAPH_ENGINE_VERSION}+ts-${t.version}${opts.lib ? '+lib' : ''}${targetKey}${capsKey}`;
  // The safety limit's verdict on exactly these files (stored like a result: see the file comment).
  const verdictPath = `#checker-safety-limit#${createHash('sha256').update(inProject.join('\0')).digest('hex').slice(0, 32)}`;
  // The heap limit joins the key only when it is not the default, so verdicts stored before it was configurable still answer.
  const verdictEngine = `${engine}+s:${limits.safetyMs}${limits.heapMb === CHECKER_LIMITS.heapMb ? '' : `+h:${limits.heapMb}`}`;
  const failSafe = (reason: 'time' | 'memory' | 'failed') => {
    stats.failedSafe = reason;
    stats.truncated = true;
    stats.walked = 0;
    stats.skippedAll =
      reason === 'time'
        ? `type edges skipped for the whole review: the checker ran past its wall-clock safety limit of ${limits.safetyMs} ms`
        : reason === 'memory'
          ? 'type edges skipped for the whole review: the checker ran out of its heap limit'
          : 'type edges skipped for the whole review: the checker failed';
  };
  const verdict = opts.cache?.getCheckerEdges(index.commit, verdictPath, verdictEngine);
  if (verdict) {
    failSafe(((verdict[0] as unknown as { failedSafe?: 'time' | 'memory' | 'failed' } | undefined)?.failedSafe) ?? 'time');
    return done();
  }
  const roots: string[] = [];
  stats.fromCache = 0;
  for (const root of inProject) {
    const stored = opts.cache?.getCheckerEdges(index.commit, root, engine);
    if (!stored) {
      roots.push(root);
      continue;
    }
    found.push({ root, edges: stored });
    stats.walked++;
    stats.fromCache++;
  }
  if (!roots.length) return done();

  // Texts: every indexed TS/JS file is known to exist; they are read (in one batch) only when the program
  // is small enough to take them all, else the syntactic import closure of the roots is read first.
  const jsFiles = [...index.files.values()].filter((f) => TS_LANGUAGES.has(f.language));
  const wanted = new Set<string>(roots);
  const ambient: string[] = [];
  const cap = limits.maxProgramFiles;
  if (jsFiles.length <= cap) for (const f of jsFiles) wanted.add(f.path);
  else {
    let frontier = [...roots];
    for (let depth = 0; depth < 4 && frontier.length && wanted.size < cap; depth++) {
      const next: string[] = [];
      for (const p of frontier) {
        const file = index.files.get(p)!;
        for (const d of file.facts.imports) {
          const target = graph.resolveModule(file, d.source);
          if (target && !wanted.has(target) && index.files.has(target) && wanted.size < cap) {
            wanted.add(target);
            next.push(target);
          }
        }
      }
      frontier = next;
    }
  }
  // What tsc would load beside the roots and their imports: the project's ambient declaration files
  // (script-mode `.d.ts`, or one with `declare global`), which nothing imports but which declare the
  // globals the roots name (a runtime's `worker-configuration.d.ts`, `env.d.ts`). Those the root config's
  // `include`/`files` take and it does not `exclude`, in path order, within the file cap; they are the
  // Program's roots after the walked ones (not walked), so its caps count them after the roots' imports.
  const all = jsFiles.length <= cap;
  for (const p of await ambientDeclarationFiles(repo, jsFiles, configs, all ? new Set(roots) : wanted, cap - (all ? roots.length : wanted.size), cap)) {
    wanted.add(p);
    ambient.push(p);
  }
  // The configs (compiler options, package.json for module resolution) and every wanted file, in one batch.
  const toRead = [...configs.map((e) => ({ path: e.path, sha: e.sha })), ...[...wanted].map((p) => ({ path: p, sha: index.files.get(p)!.blob }))];
  const blobs = await Promise.all(toRead.map((f) => repo.readBlob(f.sha)));
  const texts: Array<[string, string]> = [];
  toRead.forEach((f, i) => {
    const b = blobs[i];
    if (b) texts.push([f.path, b.toString('utf8')]);
  });
  const readAt = performance.now();
  stats.readMs = Math.round(readAt - started);
  const defsOf = (f: string): JobDefinition[] => (graph.defsByFile.get(f) ?? []).map((s) => [s.id, s.def.name, s.def.start, s.def.end]);
  const edgeFiles = new Set([...roots, ...(targets ?? jsFiles.map((f) => f.path))]);
  const job: CheckerJob = {
    roots,
    ...(ambient.length ? { ambient } : {}),
    texts,
    blobs: [...wanted].map((p) => [p, index.files.get(p)!.blob]),
    indexed: [...index.files.keys()],
    defs: [...edgeFiles].map((f) => [f, defsOf(f)]),
    ...(targets ? { targets: [...targets], targetNames: [...targetNames!] } : {}),
    lib: opts.lib === true,
    caps,
    cacheScope: opts.cacheScope ?? '',
  };
  const outcome = await runOnCheckerThread(job, limits.safetyMs, opts.signal, limits.heapMb);
  if (!outcome.ok) {
    failSafe(outcome.reason);
    // Only the limit's verdict is stored (a crash of the thread is no property of the input).
    if (opts.cache && outcome.reason !== 'failed') opts.cache.putCheckerEdges([{ commit: index.commit, path: verdictPath, engine: verdictEngine, edges: [{ failedSafe: outcome.reason } as unknown as StoredCheckerEdge] }]);
    found.length = 0;
    return done();
  }
  const r = outcome.result;
  stats.programFiles = r.programFiles;
  stats.reusedSourceFiles = r.reusedSourceFiles;
  stats.queries = r.queries;
  stats.typeWork = r.typeWork;
  stats.programMs = r.programMs;
  stats.walkMs = r.walkMs;
  stats.walked += r.walked.length;
  found.push(...r.walked);
  if (r.notWalked.length) stats.skipped = r.notWalked.map((n) => ({ path: n.root, reason: notWalkedReason(n.reason, caps) }));
  if (r.capped || r.notWalked.length) stats.truncated = true;
  // A truncated Program may have missed declarations a complete one sees: only complete results are kept.
  if (opts.cache && !stats.truncated && r.walked.length) opts.cache.putCheckerEdges(r.walked.map((w) => ({ commit: index.commit, path: w.root, engine, edges: w.edges })));
  return done();
}

const DECLARATION_FILE = /\.d\.[cm]?ts$/;
/** A top-level `import` / `export` statement (formatted code: top-level statements start their line; nested ones in `declare module` blocks are indented). */
const TOP_LEVEL_MODULE_SYNTAX = /^(?:import|export)[\s{*=]/m;
const DECLARE_GLOBAL = /\bdeclare\s+global\s*\{/;

/** Script-mode (no top-level import/export) or `declare global { … }`: its declarations are global for every file of a Program holding it. */
export function isAmbientDeclarationText(text: string): boolean {
  return DECLARE_GLOBAL.test(text) || !TOP_LEVEL_MODULE_SYNTAX.test(text);
}

/**
 * Matching tsconfig `include` / `exclude` patterns against repo paths (TypeScript's wildcards: `*` and `?`
 * within a segment, `**` for any number of segments; a last segment without `.`/`*`/`?` is a directory).
 * The patterns come from the tenant's repository, so they are not compiled to regular expressions: a
 * pattern such as `*a*a*a*a*a*a*a*b.d.ts` or a dozen `**` segments made V8's backtracking take tens of
 * seconds per path on the server's main thread. Matching is a memoized walk over segments with a step
 * budget counted in comparisons (not time, so the answer does not depend on load): past it the config is
 * treated as naming no ambient file, the same on every machine.
 */
export const TSCONFIG_GLOB_BUDGET = 2_000_000;
/** At most this many `include` / `exclude` / `files` entries of at most this many characters are read. */
const TSCONFIG_MAX_PATTERNS = 256;
const TSCONFIG_MAX_PATTERN_CHARS = 1024;
class GlobBudgetExceeded extends Error {}
interface GlobBudget {
  left: number;
}
const spend = (b: GlobBudget, n: number): void => {
  b.left -= n;
  if (b.left < 0) throw new GlobBudgetExceeded('tsconfig pattern budget exceeded');
};

/** One segment against a pattern segment of `*` and `?` (the two-pointer walk: at most |p| × |s| steps). */
function segmentMatches(p: string, s: string, b: GlobBudget): boolean {
  let i = 0;
  let j = 0;
  let star = -1;
  let mark = 0;
  while (j < s.length) {
    spend(b, 1);
    if (i < p.length && (p[i] === '?' || p[i] === s[j])) {
      i++;
      j++;
    } else if (i < p.length && p[i] === '*') {
      star = i++;
      mark = j;
    } else if (star >= 0) {
      i = star + 1;
      j = ++mark;
    } else return false;
  }
  while (i < p.length && p[i] === '*') i++;
  return i === p.length;
}

/** Pattern segments (with `**`) against path segments: each (pattern, path) position pair is decided once. */
function segmentsMatch(pat: string[], path: string[], b: GlobBudget): boolean {
  const memo = new Map<number, boolean>();
  const at = (i: number, j: number): boolean => {
    const key = i * (path.length + 1) + j;
    const known = memo.get(key);
    if (known !== undefined) return known;
    spend(b, 1);
    let r: boolean;
    if (i === pat.length) r = j === path.length;
    else if (pat[i] === '**') r = at(i + 1, j) || (j < path.length && at(i, j + 1));
    else r = j < path.length && segmentMatches(pat[i], path[j], b) && at(i + 1, j + 1);
    memo.set(key, r);
    return r;
  };
  return at(0, 0);
}

/** A pattern's segments as matched (consecutive `**` are one), or undefined for one outside the project root. */
function tsconfigPattern(pattern: string, exclude: boolean): string[] | undefined {
  const segs = pattern
    .replace(/\\/g, '/')
    .split('/')
    .filter((s) => s !== '' && s !== '.')
    .filter((s, i, all) => !(s === '**' && all[i - 1] === '**'));
  if (segs.includes('..')) return undefined; // outside the project root: no indexed file
  const last = segs[segs.length - 1];
  if (!exclude && (!segs.length || !/[.*?]/.test(last))) segs.push('**', '*');
  // An excluded directory excludes everything under it.
  if (exclude && segs[segs.length - 1] !== '**') segs.push('**');
  return segs;
}

/** Which repo paths the root tsconfig.json / jsconfig.json makes part of the project (its `files`, `include` and `exclude`; without a config: every path). */
export function projectFileFilter(configText: string | undefined): { test: (p: string) => boolean; exhausted: () => boolean } {
  if (configText === undefined) return { test: () => true, exhausted: () => false };
  const raw = (ts().parseConfigFileTextToJson('tsconfig.json', configText).config ?? {}) as { files?: unknown; include?: unknown; exclude?: unknown; compilerOptions?: { outDir?: unknown } };
  const strings = (v: unknown): string[] | undefined => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string' && x.length <= TSCONFIG_MAX_PATTERN_CHARS).slice(0, TSCONFIG_MAX_PATTERNS) : undefined);
  const files = new Set((strings(raw.files) ?? []).map((f) => f.replace(/^\.\//, '')));
  const include = (strings(raw.include) ?? (strings(raw.files) ? [] : ['**/*'])).map((p) => tsconfigPattern(p, false)).filter((r): r is string[] => !!r);
  const outDir = typeof raw.compilerOptions?.outDir === 'string' && raw.compilerOptions.outDir.length <= TSCONFIG_MAX_PATTERN_CHARS ? [raw.compilerOptions.outDir] : [];
  const exclude = (strings(raw.exclude) ?? ['node_modules', 'bower_components', 'jspm_packages', ...outDir]).map((p) => tsconfigPattern(p, true)).filter((r): r is string[] => !!r);
  // One budget for every path this filter is asked about: the whole selection is bounded, not each match.
  const budget: GlobBudget = { left: TSCONFIG_GLOB_BUDGET };
  let exhausted = false;
  const test = (p: string): boolean => {
    if (files.has(p)) return true;
    if (exhausted) return false;
    const path = p.split('/');
    try {
      return include.some((r) => segmentsMatch(r, path, budget)) && !exclude.some((r) => segmentsMatch(r, path, budget));
    } catch (err) {
      if (!(err instanceof GlobBudgetExceeded)) throw err;
      exhausted = true;
      return false;
    }
  };
  return { test, exhausted: () => exhausted };
}

/**
 * The project's ambient declaration files not yet in `wanted`, in path order, at most `room` of them: the
 * `.d.ts` files of the index that the root config includes and whose text is script-mode or declares
 * `declare global` (a blob read for each candidate, at most `maxRead` candidates read).
 */
async function ambientDeclarationFiles(repo: GitRepo, jsFiles: Array<{ path: string; blob: string }>, configs: TreeEntry[], wanted: ReadonlySet<string>, room: number, maxRead: number): Promise<string[]> {
  if (room <= 0) return [];
  const config = configs.find((e) => e.path === 'tsconfig.json') ?? configs.find((e) => e.path === 'jsconfig.json');
  const configText = config ? (await repo.readBlob(config.sha))?.toString('utf8') : undefined;
  const inProject = projectFileFilter(configText);
  // Path order before the config's patterns are applied: where a hostile config exhausts the match budget does not depend on the index's order.
  const declarations = jsFiles.filter((f) => DECLARATION_FILE.test(f.path) && !wanted.has(f.path)).sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const candidates = declarations.filter((f) => inProject.test(f.path)).slice(0, maxRead);
  if (inProject.exhausted()) return [];
  const out: string[] = [];
  // Read in batches of what is still wanted, so a repository of many module-style typings reads no more than it must.
  for (let i = 0; i < candidates.length && out.length < room; ) {
    const batch = candidates.slice(i, i + Math.max(16, room - out.length));
    i += batch.length;
    const texts = await Promise.all(batch.map((f) => repo.readBlob(f.blob)));
    batch.forEach((f, j) => {
      const text = texts[j];
      if (out.length < room && text && isAmbientDeclarationText(text.toString('utf8'))) out.push(f.path);
    });
  }
  return out;
}
