import * as path from 'node:path';
import type * as TS from 'typescript-compiler-api';
import type { CheckerForm, ReferenceKind, StoredCheckerEdge } from '../facts';

/**
 * The part of type-edges.ts that runs TypeScript's compiler: a Program over the texts it is handed and a
 * walk of the roots with the checker. It runs on a worker thread (checker-thread.ts), so that the
 * wall-clock safety limit can stop it whatever a hostile file makes the checker do; everything it needs
 * comes in the job (texts, the definitions edges may land on), nothing is read from the repository here.
 *
 * Deterministic work caps (`CheckerCaps`): the Program's size (files, characters) and the walk's work
 * (identifiers handed to the checker, and the checker's own counters of types, instantiations and
 * relation checks, read after each identifier). They count what the compiler does, never time, so the same
 * job stops at the same identifier on any machine under any load; what was not walked is reported with its
 * reason and keeps the syntactic edges alone.
 */
export interface CheckerCaps {
  /** Project source files the Program may load (roots count, and are loaded past it). */
  maxProgramFiles: number;
  /** Characters of source the Program may load, roots included: a root past it is not walked. */
  maxProgramChars: number;
  /** Identifiers handed to the checker over the whole walk. */
  maxQueries: number;
  /** The checker's work over the walk: types created + type instantiations + relation-cache entries. */
  maxTypeWork: number;
}

/** One definition an edge may land on: symbol id, name, first and last line. */
export type JobDefinition = [id: string, name: string, start: number, end: number];

export interface CheckerJob {
  /** Repo paths walked, in order. */
  roots: string[];
  /**
   * Ambient declaration files the Program loads as roots after `roots` (not walked): what tsc's `include`
   * would load that nothing imports (type-edges.ts `ambientDeclarationFiles`). Counted against the caps.
   */
  ambient?: string[];
  /** Texts by repo path: the project configs and the files the Program may load. */
  texts: Array<[path: string, text: string]>;
  /** Blob of each file the Program may load (the key of its parse kept between Programs). */
  blobs: Array<[path: string, sha: string]>;
  /** Every indexed file of the commit (what exists for module resolution). */
  indexed: string[];
  /** Definitions of the files edges may start or land in (the roots and the targets). */
  defs: Array<[path: string, defs: JobDefinition[]]>;
  /** Only edges into these files are recorded (absent: any indexed file). */
  targets?: string[];
  /** Property names the targets define: other `x.name` are not handed to the checker. */
  targetNames?: string[];
  lib: boolean;
  caps: CheckerCaps;
  /** Parses kept between Programs are reused only within one scope (a workspace: type-edges.ts `cacheScope`). */
  cacheScope: string;
}

/** Why a root was not walked (see CheckerCaps). */
export type NotWalkedReason = 'program-size' | 'queries' | 'type-work' | 'not-loaded';

export interface CheckerJobResult {
  walked: Array<{ root: string; edges: StoredCheckerEdge[] }>;
  notWalked: Array<{ root: string; reason: NotWalkedReason }>;
  /** Project files the Program loaded. */
  programFiles: number;
  programChars: number;
  reusedSourceFiles: number;
  /** Files the Program asked for beyond its caps (their references into the roots are not seen). */
  capped: number;
  queries: number;
  typeWork: number;
  programMs: number;
  walkMs: number;
}

let loaded: typeof TS | undefined;
export function ts(): typeof TS {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  loaded ??= require('typescript-compiler-api') as typeof TS;
  return loaded;
}

/**
 * Parsed (and, once a checker ran, bound) SourceFiles of earlier Programs, by compiler options, path and
 * blob: base and head of a PR share most files, and so do successive computations of one repository.
 * Sharing them between Programs is what TypeScript's own language service does (its document registry):
 * binding is per file and done once, everything a checker derives lives in that checker (so the work
 * counters do not depend on what is kept here). Bounded by source size (least recently used out first).
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
export function clearSourceCache(): void {
  sourceFiles.clear();
  sourceChars = 0;
}

/** The virtual root the Program sees the commit's tree under. */
const ROOT = '/__commit__';

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

/**
 * Names a definition owning `decl` may carry: the names of `decl` and of every declaration around it up
 * to its file (`Job.run` → run, Job; `exports.helper = …` → helper; `export default …` → default).
 */
export function declarationNames(t: typeof TS, decl: TS.Node): Set<string> {
  const names = new Set<string>();
  for (let n: TS.Node | undefined = decl; n && !t.isSourceFile(n); n = n.parent) {
    const name = (n as { name?: TS.Node }).name;
    if (name && (t.isIdentifier(name) || t.isPrivateIdentifier(name) || t.isStringLiteral(name) || t.isNumericLiteral(name) || t.isNoSubstitutionTemplateLiteral(name))) names.add(name.text);
    else if (name && t.isComputedPropertyName(name) && t.isStringLiteralLike(name.expression)) names.add(name.expression.text);
    if (t.isBinaryExpression(n)) {
      // `a.b.c = …`, `exports.f = …`, `X.prototype.m = …`: every name of the assigned path.
      for (let l: TS.Expression = n.left; ; ) {
        if (t.isPropertyAccessExpression(l)) {
          names.add(l.name.text);
          l = l.expression;
        } else if (t.isElementAccessExpression(l)) {
          if (t.isStringLiteralLike(l.argumentExpression)) names.add(l.argumentExpression.text);
          l = l.expression;
        } else {
          if (t.isIdentifier(l)) names.add(l.text);
          break;
        }
      }
    }
    if (t.isExportAssignment(n) || (t.canHaveModifiers(n) && t.getModifiers(n)?.some((m) => m.kind === t.SyntaxKind.DefaultKeyword))) names.add('default');
  }
  return names;
}

/** The checker's own work so far: types created, instantiations, relation-cache entries (deterministic for one Program and one sequence of questions). */
function typeWorkOf(program: TS.Program): number {
  const r = program.getRelationCacheSizes();
  return program.getTypeCount() + program.getInstantiationCount() + r.assignable + r.identity + r.subtype + r.strictSubtype;
}

/** Runs one job (see the file comment). Synchronous: the worker thread it runs on is what can be stopped. */
export function runCheckerJob(job: CheckerJob): CheckerJobResult {
  const t = ts();
  const started = performance.now();
  const { caps } = job;
  const texts = new Map(job.texts);
  const blobOf = new Map(job.blobs);
  const indexed = new Set(job.indexed);
  const roots = new Set(job.roots);
  const defsByFile = new Map(job.defs);
  const targets = job.targets ? new Set(job.targets) : undefined;
  const targetNames = job.targetNames ? new Set(job.targetNames) : undefined;
  const result: CheckerJobResult = { walked: [], notWalked: [], programFiles: 0, programChars: 0, reusedSourceFiles: 0, capped: 0, queries: 0, typeWork: 0, programMs: 0, walkMs: 0 };
  /** The innermost definition of `file` spanning `line`; with `names`, only one of those names (see declarationNames). */
  const definitionAt = (file: string, line: number, names?: Set<string>): { id: string; name: string } | undefined => {
    let best: JobDefinition | undefined;
    for (const d of defsByFile.get(file) ?? []) if (d[2] <= line && line <= d[3] && (!names || names.has(d[1])) && (!best || d[3] - d[2] <= best[3] - best[2])) best = d;
    return best && { id: best[0], name: best[1] };
  };

  const options = compilerOptions(t, texts);
  if (!job.lib) options.noLib = true;
  const optionsKey = `${t.version}\0${JSON.stringify(options)}`;
  const keyOf = (p: string, sha: string) => `${job.cacheScope}\0${optionsKey}\0${p}\0${sha}`;
  // What the Program asks a file to be parsed as (target, module format): a cached parse made otherwise is redone from its text.
  const versionOf = (v: TS.ScriptTarget | TS.CreateSourceFileOptions) => (typeof v === 'object' ? `${v.languageVersion}/${v.impliedNodeFormat ?? ''}/${v.jsDocParsingMode ?? ''}` : String(v));
  const dirs = new Set<string>();
  for (const p of [...indexed, ...texts.keys()]) for (let d = path.posix.dirname(p); d !== '.' && !dirs.has(d); d = path.posix.dirname(d)) dirs.add(d);
  const libDir = path.dirname(require.resolve('typescript-compiler-api'));
  const defaultLib = t.getDefaultLibFileName(options);
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
        const sha = blobOf.get(p);
        const key = sha ? keyOf(p, sha) : undefined;
        const kept = key ? cachedSourceFile(key) : undefined;
        const text = kept?.sf.text ?? (sha ? texts.get(p) : undefined);
        // The caps are taken in the order the compiler asks for files (deterministic for one set of texts).
        if (text !== undefined && (result.programFiles < caps.maxProgramFiles || roots.has(p)) && result.programChars + text.length <= caps.maxProgramChars) {
          result.programFiles++;
          result.programChars += text.length;
          const version = versionOf(languageVersion);
          if (kept && kept.version === version) {
            sf = kept.sf;
            result.reusedSourceFiles++;
          } else {
            // No parent pointers from the parser: the checker's binder sets them on every file of the Program
            // (the walk reads them only afterwards), and skipping the parser's own pass cut Program time
            // about a third on rxjs (docs/cohorts.md).
            sf = t.createSourceFile(fileName, text, languageVersion, false);
            if (key) keepSourceFile(key, sf, version);
          }
        } else if (text !== undefined || indexed.has(p)) result.capped++; // capped, or not read
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
    fileExists: (f) => (f.startsWith(libDir) ? t.sys.fileExists(f) : texts.has(rel(f)) || indexed.has(rel(f))),
    // Only a file's import resolution reads texts through here (package.json, configs): those are all read.
    readFile: (f) => (f.startsWith(libDir) ? t.sys.readFile(f) : texts.get(rel(f))),
    directoryExists: (d) => {
      let end = d.length;
      while (end > 0 && d[end - 1] === '/') end--;
      const dir = d.slice(0, end);
      return dir === ROOT || dir.startsWith(libDir) || dirs.has(rel(dir));
    },
  };
  const program = t.createProgram([...job.roots, ...(job.ambient ?? [])].map((r) => `${ROOT}/${r}`), options, host);
  const checker = program.getTypeChecker();
  const programAt = performance.now();
  result.programMs = Math.round(programAt - started);

  let stopped: NotWalkedReason | undefined;
  for (const root of job.roots) {
    const sf = stopped ? undefined : program.getSourceFile(`${ROOT}/${root}`);
    if (!sf) {
      result.notWalked.push({ root, reason: stopped ?? (texts.has(root) ? 'program-size' : 'not-loaded') });
      continue;
    }
    const seen = new Set<string>();
    const found: StoredCheckerEdge[] = [];
    const visit = (node: TS.Node): void => {
      if (stopped) return;
      if (t.isImportDeclaration(node) || t.isExportDeclaration(node) || t.isImportEqualsDeclaration(node)) return;
      if (t.isIdentifier(node) && !isDeclarationName(t, node) && (!targetNames || targetNames.has(node.text) || !isPropertyName(t, node))) {
        // Checked before each question, so a file is either walked whole or not at all.
        if (result.queries >= caps.maxQueries) stopped = 'queries';
        else if ((result.typeWork = typeWorkOf(program)) >= caps.maxTypeWork) stopped = 'type-work';
        if (stopped) return;
        result.queries++;
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
          // Only a definition that is the declaration or one of its named owners: a definition whose range
          // spans the line only because it merges declarations far apart (`interface Env` on line 11 and
          // again on line 7688 of an ambient file) must not take the declarations in between.
          const to = definitionAt(toFile, declLine, declarationNames(t, decl));
          if (to) {
            // A declaration that is not a definition of its own (a field, a property of an object literal)
            // lands on its owner, marked as a member read: formation does not follow those (an edge to the
            // whole class for every field read would make each widely used type a hub).
            const member = to.name === sym!.name ? undefined : sym!.name;
            const from = definitionAt(root, line)?.id ?? root;
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
    if (stopped) result.notWalked.push({ root, reason: stopped });
    else result.walked.push({ root, edges: found });
  }
  result.typeWork = typeWorkOf(program);
  result.walkMs = Math.round(performance.now() - programAt);
  return result;
}
