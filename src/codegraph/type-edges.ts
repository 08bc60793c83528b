import * as path from 'node:path';
import type * as TS from 'typescript-compiler-api';
import type { GitRepo } from '../git/repo';
import type { ReferenceKind } from './facts';
import type { CodeGraph } from './graph';

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
 * syntactic edges alone.
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
}

export interface CheckerEdgeStats {
  /** Files whose references were walked. */
  walked: number;
  /** Project files the Program loaded. */
  programFiles: number;
  /** Edges the checker added that the syntactic resolver did not have. */
  added: number;
  /** Cross-file edges the checker confirmed that were already there. */
  confirmed: number;
  /** True when the budget or the file cap stopped the work early. */
  truncated: boolean;
  ms: number;
}

let loaded: typeof TS | undefined;
function ts(): typeof TS {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  loaded ??= require('typescript-compiler-api') as typeof TS;
  return loaded;
}

const TS_LANGUAGES = new Set(['typescript', 'tsx', 'javascript']);
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
  const roots = opts.files.filter((f) => TS_LANGUAGES.has(index.files.get(f)?.language ?? ''));
  if (!roots.length) return stats;
  const t = ts();

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
  const tree = await repo.lsTree(index.commit);
  const configs = tree.filter((e) => e.type === 'blob' && /(^|\/)(package\.json|tsconfig(\.[\w-]+)?\.json|jsconfig\.json)$/.test(e.path) && !VENDORED.test(e.path));
  const toRead = [...[...wanted].map((p) => ({ path: p, sha: index.files.get(p)!.blob })), ...configs.map((e) => ({ path: e.path, sha: e.sha }))];
  const blobs = await Promise.all(toRead.map((f) => repo.readBlob(f.sha)));
  toRead.forEach((f, i) => {
    const b = blobs[i];
    if (b) texts.set(f.path, b.toString('utf8'));
  });

  const dirs = new Set<string>();
  for (const p of [...index.files.keys(), ...texts.keys()]) for (let d = path.posix.dirname(p); d !== '.' && !dirs.has(d); d = path.posix.dirname(d)) dirs.add(d);
  const options = compilerOptions(t, texts);
  if (opts.lib !== true) options.noLib = true;
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
        const text = texts.get(rel(fileName));
        if (text !== undefined && (loadedFiles < cap || roots.includes(rel(fileName)))) {
          loadedFiles++;
          sf = t.createSourceFile(fileName, text, languageVersion, true);
        } else if (text !== undefined || index.files.has(rel(fileName))) stats.truncated = true; // capped, or not read
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
    readFile: (f) => (f.startsWith(libDir) ? t.sys.readFile(f) : texts.get(rel(f))),
    directoryExists: (d) => {
      const dir = d.replace(/\/+$/, '');
      return dir === ROOT || dir.startsWith(libDir) || dirs.has(rel(dir));
    },
  };
  const program = t.createProgram(roots.map((r) => `${ROOT}/${r}`), options, host);
  const checker = program.getTypeChecker();
  stats.programFiles = loadedFiles;

  for (const root of roots) {
    if (performance.now() - started > budget) {
      stats.truncated = true;
      break;
    }
    const sf = program.getSourceFile(`${ROOT}/${root}`);
    if (!sf) continue;
    stats.walked++;
    const seen = new Set<string>();
    const visit = (node: TS.Node): void => {
      if (t.isImportDeclaration(node) || t.isExportDeclaration(node) || t.isImportEqualsDeclaration(node)) return;
      if (t.isIdentifier(node) && !isDeclarationName(t, node)) {
        const parent = node.parent;
        let sym = parent && t.isShorthandPropertyAssignment(parent) && parent.name === node ? checker.getShorthandAssignmentValueSymbol(parent) : checker.getSymbolAtLocation(node);
        if (sym && sym.flags & t.SymbolFlags.Alias) sym = checker.getAliasedSymbol(sym);
        const decl = sym?.declarations?.[0];
        const target = decl?.getSourceFile();
        // A module's own symbol (`commander` in `import * as commander from '..'` or `require('../')`) is
        // declared by the whole source file, not by a definition in it: its members are resolved one by
        // one (`commander.program` → `program`), so the namespace itself is no edge. (Its declaration's
        // start skips the leading comments and would land on whatever definition comes first.)
        if (decl && target && target !== sf && !t.isSourceFile(decl) && target.fileName.startsWith(`${ROOT}/`)) {
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
              if (graph.addCheckerEdge({ from, fromFile: root, to: to.id, toFile, kind: referenceKind(t, node), line, provenance: 'checker', ...(member ? { member } : {}) })) stats.added++;
              else stats.confirmed++;
            }
          }
        }
      }
      t.forEachChild(node, visit);
    };
    visit(sf);
  }
  stats.ms = Math.round(performance.now() - started);
  return stats;
}
