import { BOUNDS } from '../events/catalogue/bounds';
import * as path from 'node:path';
import type { GitRepo } from '../git/repo';
import { extractFacts, IN_THREAD_PARSE_MS, isParseAbandoned } from './extract';
import type { FileFacts } from './facts';
import { sharedExtractPool } from './extract-pool';
import { FactsCache } from './facts-cache';
import { goModulePath } from './languages/lang-go';
import { loadGrammar } from './languages/grammar-runtime';
import { pubspecName } from './languages/lang-dart';
import { psr4RootsOf, type Psr4Root } from './languages/lang-php';
import type { BuildModule } from './build-modules';
import { csprojOf } from './languages/lang-csharp';
import { gradleModulesOf, gradleSettingsOf, type GradleSettings } from './languages/lang-gradle';
import { languageOf, unsupportedLanguageOf } from './languages/languages';
import { stripComments } from './strip-comments';

/** Bump when extraction changes: cached facts of another engine version are ignored. */
export const CODEGRAPH_ENGINE_VERSION = 'codegraph-17'; // 16: tags-query matches start ≤ 1,000 nodes deep (extract.ts); 17: a Swift directive line's `//` comment is cut also on CRLF lines; Gradle scripts read with whitespace runs squeezed; Kotlin header repair skips lines over 1,000 characters; csproj references tag by tag

/** Files larger than this are treated as generated (minified bundles, fixtures) and not parsed. */
const MAX_PARSE_BYTES = 1024 * 1024;
const VENDORED = /(^|\/)(node_modules|vendor|third_party|bower_components|\.yarn|dist|build)\//;
const READ_CONCURRENCY = 64;
/** Below this many blobs to parse, worker start-up costs more than it saves. */
const POOL_THRESHOLD = 96;

export interface IndexedFile {
  path: string;
  blob: string;
  language: string;
  facts: FileFacts;
}

export interface IndexProgress {
  done: number;
  total: number;
  parsed: number;
  cached: number;
  path?: string;
}

export interface CommitIndex {
  commit: string;
  files: Map<string, IndexedFile>;
  /** Source files in languages without a grammar: never grouped semantically. */
  unsupported: Array<{ path: string; language: string }>;
  /** Files with a grammar that were not parsed (vendored, too large, unreadable). */
  skipped: Array<{ path: string; reason: string }>;
  languages: Record<string, number>;
  fileCount: number;
  symbolCount: number;
  parsedBlobs: number;
  cachedBlobs: number;
  /** Go modules of the tree (directory of each go.mod and its module path), for import resolution. */
  goModules: Array<{ dir: string; module: string }>;
  /** TypeScript/JavaScript path mapping (tsconfig/jsconfig `baseUrl` + `paths`) per config directory. */
  tsPathConfigs: TsPathConfig[];
  /** Dart packages of the tree (directory of each pubspec.yaml and its `name`), for `package:` imports. */
  dartPackages?: Array<{ dir: string; name: string }>;
  /** PHP PSR-4 autoload roots of every composer.json, for `use` resolution. */
  psr4Roots?: Psr4Root[];
  /** C# projects (one per .csproj, keyed by its path, depending on its `<ProjectReference>`s). */
  csProjects?: BuildModule[];
  /** Gradle modules of every settings.gradle(.kts), with their `project(…)` dependencies. */
  gradleModules?: BuildModule[];
}

export interface TsPathConfig {
  /** Directory of the tsconfig.json ("" for the root). */
  dir: string;
  /** Repo-relative directory non-relative specifiers resolve from, when `baseUrl` is set. */
  baseUrl?: string;
  /** `paths` patterns with their targets, made repo-relative. */
  paths: Array<{ pattern: string; targets: string[] }>;
}

export interface IndexOptions {
  cache: FactsCache;
  onProgress?: (p: IndexProgress) => void;
  /** Parse on worker threads when there is enough to parse (default true); false keeps it on this thread. */
  parallel?: boolean;
  /** Stops the indexing between batches (the acting token was revoked): the promise rejects with the reason. */
  signal?: AbortSignal;
}

/** Indexes every file of `commit` that has a grammar; parse results come from the blob cache when possible. */
export async function indexCommit(repo: GitRepo, commit: string, opts: IndexOptions): Promise<CommitIndex> {
  const tree = await repo.lsTree(commit);
  const result: CommitIndex = { commit, files: new Map(), unsupported: [], skipped: [], languages: {}, fileCount: 0, symbolCount: 0, parsedBlobs: 0, cachedBlobs: 0, goModules: [], tsPathConfigs: [], dartPackages: [], psr4Roots: [], csProjects: [], gradleModules: [] };
  const gradleSettings: GradleSettings[] = [];
  const gradleScripts = new Map<string, string>();
  const todo: Array<{ path: string; blob: string; language: string }> = [];
  for (const e of tree) {
    if (e.type !== 'blob' || e.mode === '120000') continue;
    if (e.path === 'go.mod' || e.path.endsWith('/go.mod')) {
      const mod = goModulePath((await repo.readBlob(e.sha))?.toString('utf8') ?? '');
      if (mod) result.goModules.push({ dir: e.path === 'go.mod' ? '' : e.path.slice(0, -'/go.mod'.length), module: mod });
    }
    if ((e.path === 'composer.json' || e.path.endsWith('/composer.json')) && !VENDORED.test(e.path)) {
      result.psr4Roots!.push(...psr4RootsOf(e.path, (await repo.readBlob(e.sha))?.toString('utf8') ?? ''));
    }
    if ((e.path === 'pubspec.yaml' || e.path.endsWith('/pubspec.yaml')) && !VENDORED.test(e.path)) {
      const name = pubspecName((await repo.readBlob(e.sha))?.toString('utf8') ?? '');
      if (name) result.dartPackages!.push({ dir: e.path === 'pubspec.yaml' ? '' : e.path.slice(0, -'/pubspec.yaml'.length), name });
    }
    if (/\.csproj$/i.test(e.path) && !VENDORED.test(e.path)) {
      const project = csprojOf(e.path, (await repo.readBlob(e.sha))?.toString('utf8') ?? '');
      result.csProjects!.push({ key: project.path, dir: project.dir, deps: project.references });
    }
    if (/(^|\/)settings\.gradle(\.kts)?$/.test(e.path) && !VENDORED.test(e.path)) {
      gradleSettings.push(gradleSettingsOf(e.path, (await repo.readBlob(e.sha))?.toString('utf8') ?? ''));
    }
    if (/(^|\/)build\.gradle(\.kts)?$/.test(e.path) && !VENDORED.test(e.path)) {
      gradleScripts.set(e.path, (await repo.readBlob(e.sha))?.toString('utf8') ?? '');
    }
    if (/(^|\/)(tsconfig|jsconfig)\.json$/.test(e.path) && !VENDORED.test(e.path)) {
      const config = tsPathConfigOf(e.path, (await repo.readBlob(e.sha))?.toString('utf8') ?? '');
      if (config) result.tsPathConfigs.push(config);
    }
    const language = languageOf(e.path);
    if (!language) {
      const other = unsupportedLanguageOf(e.path);
      if (other) result.unsupported.push({ path: e.path, language: other });
      continue;
    }
    if (e.path.length > BOUNDS.path) {
      result.skipped.push({ path: e.path, reason: `path longer than ${BOUNDS.path} characters` });
      continue;
    }
    if (VENDORED.test(e.path) || /\.min\.js$/.test(e.path)) {
      result.skipped.push({ path: e.path, reason: 'vendored or generated path' });
      continue;
    }
    todo.push({ path: e.path, blob: e.sha, language });
  }
  result.gradleModules = gradleModulesOf(gradleSettings, gradleScripts);
  const total = todo.length;
  let done = 0;
  const fresh: Array<{ blob: string; grammar: string; engine: string; facts: FileFacts; json?: string }> = [];
  const report = (p?: string) => opts.onProgress?.({ done, total, parsed: result.parsedBlobs, cached: result.cachedBlobs, path: p });

  // Facts by position in the tree: files are added in tree order whatever finished first, so the graph
  // (and everything derived from it) does not depend on cache state or worker scheduling.
  const factsAt: Array<FileFacts | undefined> = new Array(todo.length);
  const misses: number[] = [];
  todo.forEach((f, i) => {
    const facts = opts.cache.get(f.blob, f.language, CODEGRAPH_ENGINE_VERSION);
    if (facts) {
      result.cachedBlobs++;
      factsAt[i] = facts;
      done++;
    } else misses.push(i);
  });
  report();

  const pool = opts.parallel !== false && misses.length >= POOL_THRESHOLD ? sharedExtractPool() : null;
  // From a worker the facts come with their JSON text (the cache stores it as is); on this thread they are serialized when stored.
  // On this thread (too few files to be worth the workers) a parse holds the event loop: past
  // IN_THREAD_PARSE_MS the file goes to a worker after all, which has the whole budget (the same facts).
  const extract = (language: string, text: string): Promise<{ facts: FileFacts; json?: string }> =>
    pool
      ? pool.run(language, text)
      : loadGrammar(language).then((g) => {
          if (opts.parallel === false) return { facts: extractFacts(g, text) };
          const facts = extractFacts(g, text, { parseBudgetMs: IN_THREAD_PARSE_MS });
          if (!isParseAbandoned(facts)) return { facts };
          // (No pool on a single core: the whole budget here, as before.)
          return sharedExtractPool()?.run(language, text) ?? { facts: extractFacts(g, text) };
        });
  const inRun = new Map<string, Promise<{ facts: FileFacts; json?: string }>>();
  /** Why a (blob, language) was not parsed: a later path with the same blob is skipped for the same reason. */
  const skippedWhy = new Map<string, string>();
  const working: Array<Promise<void>> = [];
  // Reads run READ_CONCURRENCY blobs ahead of the parsing (git cat-file runs in its own process), and each
  // blob goes to a worker as soon as it has arrived: the workers start on the first blob, not on a whole
  // batch. A (blob, language) already in this run is not read again. An aborted run (a revoked token, a
  // shutdown) leaves reads and the workers' jobs in flight when the loop throws; killing git then rejects
  // them. Each is observed here so that rejection is never unhandled; the loop still awaits the same
  // promises and sees their errors.
  const observed = <T>(p: Promise<T>): Promise<T> => {
    p.catch(() => undefined);
    return p;
  };
  const keyOf = (f: { blob: string; language: string }) => `${f.blob}:${f.language}`;
  const reads: Array<Promise<Buffer | null> | undefined> = new Array(misses.length);
  const readKeys = new Set<string>();
  let ahead = 0;
  const readAhead = (upTo: number) => {
    for (const end = Math.min(upTo, misses.length); ahead < end; ahead++) {
      const f = todo[misses[ahead]];
      const key = keyOf(f);
      if (readKeys.has(key)) continue;
      readKeys.add(key);
      reads[ahead] = observed(repo.readBlob(f.blob));
    }
  };
  readAhead(READ_CONCURRENCY);
  for (let k = 0; k < misses.length; k++) {
    opts.signal?.throwIfAborted();
    const i = misses[k];
    const f = todo[i];
    const key = keyOf(f);
    const same = inRun.get(key);
    if (same) {
      result.cachedBlobs++;
      working.push(observed(same.then(({ facts }) => {
        factsAt[i] = facts;
        done++;
      })));
      continue;
    }
    const why = skippedWhy.get(key);
    if (why !== undefined) {
      result.skipped.push({ path: f.path, reason: why });
      done++;
      continue;
    }
    const content = await reads[k]!;
    reads[k] = undefined;
    readAhead(k + 1 + READ_CONCURRENCY);
    if (!content || content.length > MAX_PARSE_BYTES || content.includes(0)) {
      const reason = !content ? 'unreadable blob' : content.length > MAX_PARSE_BYTES ? 'larger than 1 MiB' : 'binary content';
      skippedWhy.set(key, reason);
      result.skipped.push({ path: f.path, reason });
      done++;
      continue;
    }
    const job = extract(f.language, content.toString('utf8'));
    inRun.set(key, job);
    result.parsedBlobs++;
    working.push(observed(job.then(({ facts, json }) => {
      factsAt[i] = facts;
      fresh.push({ blob: f.blob, grammar: f.language, engine: CODEGRAPH_ENGINE_VERSION, facts, ...(json !== undefined ? { json } : {}) });
      done++;
      report(f.path);
    })));
    // Bound the texts held in memory while workers catch up.
    if (working.length >= 4 * READ_CONCURRENCY) await Promise.all(working.splice(0));
    if (fresh.length >= 500) opts.cache.putMany(fresh.splice(0));
  }
  await Promise.all(working);
  opts.cache.putMany(fresh);
  todo.forEach((f, i) => {
    const facts = factsAt[i];
    if (facts) add(result, f, facts);
  });
  report();
  return result;
}

function add(result: CommitIndex, f: { path: string; blob: string; language: string }, facts: FileFacts): void {
  if (facts.abandoned) {
    result.skipped.push({ path: f.path, reason: facts.abandoned });
    return;
  }
  result.files.set(f.path, { path: f.path, blob: f.blob, language: f.language, facts });
  result.fileCount++;
  result.symbolCount += facts.defs.length;
  result.languages[f.language] = (result.languages[f.language] ?? 0) + 1;
}


/**
 * `compilerOptions.baseUrl` / `paths` of a tsconfig (JSON with comments and trailing commas); `extends`
 * is not followed. Undefined when the file sets neither.
 */
export function tsPathConfigOf(configPath: string, text: string): TsPathConfig | undefined {
  let json: { compilerOptions?: { baseUrl?: string; paths?: Record<string, string[]> } };
  try {
    const stripped = stripComments(text, '"', true).replace(/,(\s*[}\]])/g, '$1');
    json = JSON.parse(stripped);
  } catch {
    return undefined;
  }
  const opts = json.compilerOptions;
  if (!opts || (opts.baseUrl === undefined && !opts.paths)) return undefined;
  const dir = configPath.includes('/') ? configPath.slice(0, configPath.lastIndexOf('/')) : '';
  const join = (p: string) => path.posix.normalize(path.posix.join(dir || '.', p)).replace(/^\.\/?/, '');
  const base = opts.baseUrl !== undefined ? join(opts.baseUrl) : dir;
  return {
    dir,
    ...(opts.baseUrl !== undefined ? { baseUrl: base } : {}),
    paths: Object.entries(opts.paths ?? {}).map(([pattern, targets]) => ({ pattern, targets: (Array.isArray(targets) ? targets : []).map((t) => path.posix.normalize(path.posix.join(base || '.', t)).replace(/^\.\/?/, '')) })),
  };
}
