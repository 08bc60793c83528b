import { createHash } from 'node:crypto';
import * as path from 'node:path';
import type * as TS from 'typescript-compiler-api';
import type { GitRepo, TreeEntry } from '../git/repo';
import type { CheckerEdgeStore, CheckerForm, ReferenceKind, StoredCheckerEdge } from './facts';
import type { CodeGraph } from './graph';
import { CODEGRAPH_ENGINE_VERSION } from './indexer';

/**
 * Type-resolved edges for TypeScript/JavaScript: TypeScript's checker over a Program of the files whose
 * references are wanted (the changed files of a PR, or every file for an evaluation) and whatever they
 * import, read from the commit's blobs (no checkout). Each identifier the checker binds to a declaration
 * in another indexed file becomes an edge to the innermost indexed definition containing that
 * declaration, recorded with provenance `checker` (and `member` when the declaration is a field of that
 * definition rather than the definition itself). This finds what the syntax-only resolver cannot: member calls on
 * inferred receivers (`const e = make(); e.run()` → `Job.run`), `require('../')` through a package root,
 * re-exports of re-exports. The syntactic edges stay; the
 * checker only adds. Bounded: at most `maxProgramFiles` project files are loaded (nearest imports first,
 * as the compiler discovers them) and the walk stops at `budgetMs`; what was not reached keeps the
 * syntactic edges alone. Only files under a project root (tsconfig.json, jsconfig.json or package.json
 * in their directory or above) are walked.
 *
 * Cost (a computation runs this by default): parsed SourceFiles are shared between Programs (base and
 * head, successive computations), a computation asks only for edges into the changed files (`targetFiles`),
 * and each walked file's edges are stored per commit (`cache`), so a recomputation walks nothing twice.
 */
export interface CheckerEdgeOptions {
  /** Repo paths of the TS/JS files whose outgoing references are resolved. */
  files: string[];
  /** Wall-clock budget: files not walked when it is exceeded (default none, so results do not depend on load). */
  budgetMs?: number;
  /** Cap on project source files the Program may load (default 600). */
  maxProgramFiles?: number;
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
}

/** Bump when what a walk records changes (the stored per-commit results are keyed by it). */
export const TYPE_EDGES_VERSION = 'checker-2';

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
  /** True when the budget or the file cap stopped the work early. */
  truncated: boolean;
  ms: number;
  /** Of `ms`: reading the blobs, building the Program (parse + module resolution), walking with the checker. */
  readMs?: number;
  programMs?: number;
  walkMs?: number;
}

let loaded: typeof TS | undefined;
function ts(): typeof TS {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  loaded ??= require('typescript-compiler-api') as typeof TS;
  return loaded;
}

/**
 * Parsed (and, once a checker ran, bound) SourceFiles of earlier Programs, by compiler options, path and
 * blob: base and head of a PR share most files, and so do successive computations of one repository.
 * Sharing them between Programs is what TypeScript's own language service does (its document registry):
 * binding is per file and done once, everything a checker derives lives in that checker. Bounded by
 * source size (least recently used out first).
 */
const SOURCE_CACHE_MAX_CHARS = 6_000_000;
const sourceFiles = new Map<string, { sf: TS.SourceFile; version: string; chars: number }>();
let sourceChars = 0;
function cachedSourceFile(key: string): { sf: TS.SourceFile; version: string } | undefined {
  const e = sourceFiles.get(key);
  if (!e) return undefined;
  sourceFiles.delete(key);
  sourceFiles.set(key, e);
  return e;
}
function keepSourceFile(key: string, sf: TS.SourceFile, version: string): void {
  const chars = sf.text.length;
  if (chars > SOURCE_CACHE_MAX_CHARS / 4) return;
  const old = sourceFiles.get(key);
  if (old) {
    sourceFiles.delete(key);
    sourceChars -= old.chars;
  }
  sourceFiles.set(key, { sf, version, chars });
  sourceChars += chars;
  for (const [k, e] of sourceFiles) {
    if (sourceChars <= SOURCE_CACHE_MAX_CHARS) break;
    sourceFiles.delete(k);
    sourceChars -= e.chars;
  }
}
/** Forgets the parsed SourceFiles kept between Programs (benchmarks measure the cold path with it). */
export function clearCheckerSourceCache(): void {
  sourceFiles.clear();
  sourceChars = 0;
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
/** The virtual root the Program sees the commit's tree under. */
const ROOT = '/__commit__';
const VENDORED = /(^|\/)(node_modules|vendor|third_party|bower_components|\.yarn|dist|build)\//;

/** Compiler options from the root tsconfig.json / jsconfig.json (relative `extends` followed), or defaults. */
function compilerOptions(t: typeof TS, texts: Map<string, string>): TS.CompilerOptions {
  // Without a config: Bundler resolution (extensionless, `.js` for `.ts`, package.json `types`; `require` in JS files too).
  const base: TS.CompilerOptions = { target: t.ScriptTarget.ES2022, module: t.ModuleKind.ESNext, moduleResolution: t.ModuleResolutionKind.Bundler, strict: false };
  const config = ['tsconfig.json', 'jsconfig.json'].find((f) => texts.has(f));
  let options = base;
  if (config) {
    const host: TS.ParseConfigHost = {
      useCaseSensitiveFileNames: true,
      readDirectory: () => [],
      fileExists: (f) => texts.has(rel(f)),
      readFile: (f) => texts.get(rel(f)),
    };
    const json = t.parseConfigFileTextToJson(`${ROOT}/${config}`, texts.get(config)!);
    if (json.config) options = { ...base, ...t.parseJsonConfigFileContent(json.config, host, ROOT, undefined, `${ROOT}/${config}`).options };
  }
  const resolution = options.moduleResolution === t.ModuleResolutionKind.Classic ? t.ModuleResolutionKind.Bundler : options.moduleResolution;
  return { ...options, moduleResolution: resolution, noEmit: true, skipLibCheck: true, types: [], allowJs: true, checkJs: false, composite: false, incremental: false, declaration: false, noResolve: false, rootDir: undefined, outDir: undefined, tsBuildInfoFile: undefined };
}

function rel(file: string): string {
  return file.startsWith(`${ROOT}/`) ? file.slice(ROOT.length + 1) : file;
}

function referenceKind(t: typeof TS, id: TS.Identifier): ReferenceKind {
  let n: TS.Node = id;
  while (n.parent && (t.isPropertyAccessExpression(n.parent) || t.isQualifiedName(n.parent)) && ((n.parent as TS.PropertyAccessExpression).name === n || (n.parent as TS.QualifiedName).right === n)) n = n.parent;
  const p = n.parent;
  if (!p) return 'use';
  if (t.isCallExpression(p) && p.expression === n) return 'call';
  if (t.isNewExpression(p) && p.expression === n) return 'class';
  if (t.isTypeReferenceNode(p)) return 'type';
  if (t.isExpressionWithTypeArguments(p) && p.parent && t.isHeritageClause(p.parent)) return p.parent.token === t.SyntaxKind.ImplementsKeyword ? 'implementation' : 'class';
  return 'use';
}

/** How `id` names what it refers to (see Edge.form). */
function formOf(t: typeof TS, checker: TS.TypeChecker, id: TS.Identifier): CheckerForm {
  const p = id.parent;
  let owner: TS.Node | undefined;
  if (p && t.isPropertyAccessExpression(p) && p.name === id) owner = p.expression;
  else if (p && t.isQualifiedName(p) && p.right === id) owner = p.left;
  else if (p && t.isElementAccessExpression(p) && p.argumentExpression === id) owner = p.expression;
  if (!owner) return 'binding';
  let sym = t.isIdentifier(owner) || t.isPropertyAccessExpression(owner) || t.isQualifiedName(owner) ? checker.getSymbolAtLocation(owner) : undefined;
  if (sym && sym.flags & t.SymbolFlags.Alias) sym = checker.getAliasedSymbol(sym);
  // A module (`import * as ns`, `require('../')`) or a TypeScript namespace: its members are declarations.
  if (sym && (sym.flags & (t.SymbolFlags.ValueModule | t.SymbolFlags.NamespaceModule) || sym.declarations?.some((d) => t.isSourceFile(d)))) return 'namespace';
  return 'receiver';
}

/** `name` of `x.name` / `X.name` (a type's qualified name): resolving it means inferring what `x` is. */
function isPropertyName(t: typeof TS, id: TS.Identifier): boolean {
  const p = id.parent;
  return !!p && ((t.isPropertyAccessExpression(p) && p.name === id) || (t.isQualifiedName(p) && p.right === id));
}

function isDeclarationName(t: typeof TS, id: TS.Identifier): boolean {
  const p = id.parent;
  if (!p || (p as { name?: unknown }).name !== id) return false;
  if (t.isShorthandPropertyAssignment(p)) return false; // `{ useState }` uses the value it names
  return t.isDeclarationStatement(p) || t.isVariableDeclaration(p) || t.isParameter(p) || t.isPropertyDeclaration(p) || t.isMethodDeclaration(p) || t.isPropertySignature(p) || t.isMethodSignature(p) || t.isBindingElement(p) || t.isTypeParameterDeclaration(p) || t.isEnumMember(p) || t.isPropertyAssignment(p) || t.isGetAccessorDeclaration(p) || t.isSetAccessorDeclaration(p);
}

/** Adds the checker's cross-file edges for `opts.files` to `graph` (see the file comment). */
export async function addCheckerEdges(graph: CodeGraph, repo: GitRepo, opts: CheckerEdgeOptions): Promise<CheckerEdgeStats> {
  const started = performance.now();
  const budget = opts.budgetMs ?? Infinity;
  const cap = opts.maxProgramFiles ?? 600;
  const stats: CheckerEdgeStats = { walked: 0, programFiles: 0, added: 0, confirmed: 0, truncated: false, ms: 0 };
  const index = graph.index;
  const candidates = opts.files.filter((f) => TS_LANGUAGES.has(index.files.get(f)?.language ?? ''));
  if (!candidates.length) return stats;
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
  if (!inProject.length) return stats;
  const t = ts();
  // The stored result of a file at this commit depends on the commit (every text the Program reads), the
  // index's definitions (engine version) and these options.
  const targets = opts.targetFiles ? new Set(opts.targetFiles) : undefined;
  const targetNames = targets ? new Set([...targets].flatMap((f) => [...(index.files.get(f)?.facts.defs.map((d) => d.name) ?? []), ...(index.files.get(f)?.facts.exportAliases.map(([exported]) => exported) ?? [])])) : undefined;
  const targetKey = targets ? `+t:${createHash('sha256').update([...targets].sort().join('\0')).digest('hex').slice(0, 16)}` : '';
  const engine = `${TYPE_EDGES_VERSION}+${CODEGRAPH_ENGINE_VERSION}+ts-${t.version}${opts.lib ? '+lib' : ''}${targetKey}`;
  const apply = (root: string, edges: StoredCheckerEdge[]) => {
    for (const e of edges) {
      if (graph.addCheckerEdge({ ...e, fromFile: root, provenance: 'checker' })) stats.added++;
      else stats.confirmed++;
    }
  };
  const roots: string[] = [];
  stats.fromCache = 0;
  for (const root of inProject) {
    const stored = opts.cache?.getCheckerEdges(index.commit, root, engine);
    if (!stored) {
      roots.push(root);
      continue;
    }
    apply(root, stored);
    stats.walked++;
    stats.fromCache++;
  }
  if (!roots.length) {
    stats.ms = Math.round(performance.now() - started);
    return stats;
  }

  // Texts: every indexed TS/JS file is known to exist; they are read (in one batch) only when the program
  // is small enough to take them all, else the syntactic import closure of the roots is read first.
  const jsFiles = [...index.files.values()].filter((f) => TS_LANGUAGES.has(f.language));
  const wanted = new Set<string>(roots);
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
  const texts = new Map<string, string>();
  // Options come from the configs' texts, so those are read first; a file whose SourceFile an earlier
  // Program parsed under the same options is not read again.
  const configBlobs = await Promise.all(configs.map((e) => repo.readBlob(e.sha)));
  configs.forEach((e, i) => {
    const b = configBlobs[i];
    if (b) texts.set(e.path, b.toString('utf8'));
  });
  const options = compilerOptions(t, texts);
  if (opts.lib !== true) options.noLib = true;
  const optionsKey = `${t.version}\0${JSON.stringify(options)}`;
  const keyOf = (p: string, sha: string) => `${optionsKey}\0${p}\0${sha}`;
  // What the Program asks a file to be parsed as (target, module format): a cached parse made otherwise is redone from its text.
  const versionOf = (v: TS.ScriptTarget | TS.CreateSourceFileOptions) => (typeof v === 'object' ? `${v.languageVersion}/${v.impliedNodeFormat ?? ''}/${v.jsDocParsingMode ?? ''}` : String(v));
  const toRead = [...wanted].filter((p) => !sourceFiles.has(keyOf(p, index.files.get(p)!.blob))).map((p) => ({ path: p, sha: index.files.get(p)!.blob }));
  const blobs = await Promise.all(toRead.map((f) => repo.readBlob(f.sha)));
  toRead.forEach((f, i) => {
    const b = blobs[i];
    if (b) texts.set(f.path, b.toString('utf8'));
  });

  const readAt = performance.now();
  stats.readMs = Math.round(readAt - started);
  const dirs = new Set<string>();
  for (const p of [...index.files.keys(), ...texts.keys()]) for (let d = path.posix.dirname(p); d !== '.' && !dirs.has(d); d = path.posix.dirname(d)) dirs.add(d);
  const libDir = path.dirname(require.resolve('typescript-compiler-api'));
  const defaultLib = t.getDefaultLibFileName(options);
  let loadedFiles = 0;
  const sourceCache = new Map<string, TS.SourceFile | undefined>();
  const host: TS.CompilerHost = {
    getSourceFile: (fileName, languageVersion) => {
      if (sourceCache.has(fileName)) return sourceCache.get(fileName);
      let sf: TS.SourceFile | undefined;
      if (fileName.startsWith(libDir)) {
        const text = t.sys.readFile(fileName);
        sf = text !== undefined ? t.createSourceFile(fileName, text, languageVersion, false) : undefined;
      } else {
        const p = rel(fileName);
        const sha = wanted.has(p) ? index.files.get(p)?.blob : undefined;
        const key = sha ? keyOf(p, sha) : undefined;
        const kept = key ? cachedSourceFile(key) : undefined;
        const text = kept?.sf.text ?? texts.get(p);
        if (text !== undefined && (loadedFiles < cap || roots.includes(p))) {
          loadedFiles++;
          const version = versionOf(languageVersion);
          if (kept && kept.version === version) {
            sf = kept.sf;
            stats.reusedSourceFiles = (stats.reusedSourceFiles ?? 0) + 1;
          } else {
            // No parent pointers from the parser: the checker's binder sets them on every file of the Program
            // (the walk reads them only afterwards), and skipping the parser's own pass cut Program time
            // about a third on rxjs (docs/cohorts.md).
            sf = t.createSourceFile(fileName, text, languageVersion, false);
            if (key) keepSourceFile(key, sf, version);
          }
        } else if (text !== undefined || index.files.has(p)) stats.truncated = true; // capped, or not read
      }
      sourceCache.set(fileName, sf);
      return sf;
    },
    getDefaultLibFileName: () => path.join(libDir, defaultLib),
    getDefaultLibLocation: () => libDir,
    writeFile: () => undefined,
    getCurrentDirectory: () => ROOT,
    getDirectories: () => [],
    getCanonicalFileName: (f) => f,
    useCaseSensitiveFileNames: () => true,
    getNewLine: () => '\n',
    fileExists: (f) => (f.startsWith(libDir) ? t.sys.fileExists(f) : texts.has(rel(f)) || index.files.has(rel(f))),
    // Only a file's import resolution reads texts through here (package.json, configs): those are all read.

    readFile: (f) => (f.startsWith(libDir) ? t.sys.readFile(f) : texts.get(rel(f))),
    directoryExists: (d) => {
      const dir = d.replace(/\/+$/, '');
      return dir === ROOT || dir.startsWith(libDir) || dirs.has(rel(dir));
    },
  };
  const program = t.createProgram(roots.map((r) => `${ROOT}/${r}`), options, host);
  const checker = program.getTypeChecker();
  stats.programFiles = loadedFiles;
  const programAt = performance.now();
  stats.programMs = Math.round(programAt - readAt);

  const walkedRoots: Array<{ root: string; edges: StoredCheckerEdge[] }> = [];
  for (const root of roots) {
    if (performance.now() - started > budget) {
      stats.truncated = true;
      break;
    }
    const sf = program.getSourceFile(`${ROOT}/${root}`);
    if (!sf) continue;
    stats.walked++;
    const seen = new Set<string>();
    const found: StoredCheckerEdge[] = [];
    walkedRoots.push({ root, edges: found });
    const visit = (node: TS.Node): void => {
      if (t.isImportDeclaration(node) || t.isExportDeclaration(node) || t.isImportEqualsDeclaration(node)) return;
      if (t.isIdentifier(node) && !isDeclarationName(t, node) && (!targetNames || targetNames.has(node.text) || !isPropertyName(t, node))) {
        const parent = node.parent;
        let sym = parent && t.isShorthandPropertyAssignment(parent) && parent.name === node ? checker.getShorthandAssignmentValueSymbol(parent) : checker.getSymbolAtLocation(node);
        if (sym && sym.flags & t.SymbolFlags.Alias) sym = checker.getAliasedSymbol(sym);
        const decl = sym?.declarations?.[0];
        const target = decl?.getSourceFile();
        // A module's own symbol (`commander` in `import * as commander from '..'` or `require('../')`) is
        // declared by the whole source file, not by a definition in it: its members are resolved one by
        // one (`commander.program` → `program`), so the namespace itself is no edge. (Its declaration's
        // start skips the leading comments and would land on whatever definition comes first.)
        if (decl && target && target !== sf && !t.isSourceFile(decl) && target.fileName.startsWith(`${ROOT}/`) && (!targets || targets.has(rel(target.fileName)))) {
          const toFile = rel(target.fileName);
          const line = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
          const declLine = target.getLineAndCharacterOfPosition(decl.getStart(target)).line + 1;
          const to = graph.definitionAt(toFile, declLine);
          if (to) {
            // A declaration that is not a definition of its own (a field, a property of an object literal)
            // lands on its owner, marked as a member read: formation does not follow those (an edge to the
            // whole class for every field read would make each widely used type a hub).
            const member = to.def.name === sym!.name ? undefined : sym!.name;
            const from = graph.definitionAt(root, line)?.id ?? root;
            const key = `${from}\0${to.id}`;
            if (!seen.has(key)) {
              seen.add(key);
              found.push({ from, to: to.id, toFile, kind: referenceKind(t, node), line, form: formOf(t, checker, node), ...(member ? { member } : {}) });
            }
          }
        }
      }
      t.forEachChild(node, visit);
    };
    visit(sf);
    apply(root, found);
  }
  // A truncated Program may have missed declarations a complete one sees: only complete results are kept.
  if (opts.cache && !stats.truncated && walkedRoots.length) opts.cache.putCheckerEdges(walkedRoots.map((w) => ({ commit: index.commit, path: w.root, engine, edges: w.edges })));
  stats.walkMs = Math.round(performance.now() - programAt);
  stats.ms = Math.round(performance.now() - started);
  return stats;
}
