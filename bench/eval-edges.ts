import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { FactsCache } from '../src/codegraph/facts-cache';
import { CodeGraph } from '../src/codegraph/graph';
import { indexCommit } from '../src/codegraph/indexer';
import { addCheckerEdges } from '../src/codegraph/checker/type-edges';
import { GitRepo } from '../src/git/repo';
import { exportTree } from '../src/git/export-tree';
import { buildRxjsRepo, RXJS_HEAD } from './rxjs-fixture';
import { argValue } from './support/report';
// The TypeScript 5.9 compiler API (an npm alias), used only by this evaluation.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const ts = require('typescript-compiler-api') as typeof import('typescript-compiler-api');

type Ts = typeof import('typescript-compiler-api');

/** Top-level declaration name owning a declaration node (a class for its members), or undefined. */
function topLevelName(t: Ts, decl: import('typescript-compiler-api').Node): string | undefined {
  let n: import('typescript-compiler-api').Node | undefined = decl;
  while (n && n.parent && !t.isSourceFile(n.parent)) {
    if (t.isModuleBlock(n.parent)) return undefined;
    n = n.parent;
  }
  if (!n) return undefined;
  if (t.isVariableStatement(n)) {
    const d = n.declarationList.declarations[0];
    return d && t.isIdentifier(d.name) ? d.name.text : undefined;
  }
  const name = (n as { name?: import('typescript-compiler-api').Node }).name;
  return name && t.isIdentifier(name) ? name.text : undefined;
}

/**
 * Cross-file references the TypeScript compiler resolves: every identifier outside import/export
 * declarations whose symbol (aliases followed) is declared at top level of another project file.
 * Edge granularity: (referencing file, target file#top-level name). Object shorthand (`{ useState }`)
 * is a use of the value it names, not a property declaration. Compiler options come from the root
 * tsconfig.json when there is one (its `extends` chain followed by TypeScript itself); JS files are included.
 */
function compilerEdges(root: string, files: string[]): Set<string> {
  const base: import('typescript-compiler-api').CompilerOptions = { target: ts.ScriptTarget.ES2020, module: ts.ModuleKind.CommonJS, moduleResolution: ts.ModuleResolutionKind.Node10, strict: false };
  const configPath = ts.findConfigFile(root, (f) => fs.existsSync(f) && path.dirname(f) === root);
  let options = base;
  if (configPath) {
    const parsed = ts.getParsedCommandLineOfConfigFile(configPath, {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined });
    if (parsed) options = { ...parsed.options };
  }
  options = { ...options, noEmit: true, skipLibCheck: true, types: [], allowJs: true, checkJs: false, composite: false, incremental: false };
  const program = ts.createProgram(files, options);
  const checker = program.getTypeChecker();
  const inProject = new Set(files.map((f) => path.resolve(f)));
  const edges = new Set<string>();
  for (const sf of program.getSourceFiles()) {
    if (!inProject.has(path.resolve(sf.fileName))) continue;
    const from = path.relative(root, sf.fileName).split(path.sep).join('/');
    const visit = (node: import('typescript-compiler-api').Node): void => {
      if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) return;
      if (ts.isIdentifier(node)) {
        const parent = node.parent;
        const shorthand = parent && ts.isShorthandPropertyAssignment(parent) && parent.name === node;
        const isDeclName = !shorthand && parent && (parent as { name?: unknown }).name === node && (ts.isDeclarationStatement(parent) || ts.isVariableDeclaration(parent) || ts.isParameter(parent) || ts.isPropertyDeclaration(parent) || ts.isMethodDeclaration(parent) || ts.isPropertySignature(parent) || ts.isMethodSignature(parent) || ts.isBindingElement(parent) || ts.isTypeParameterDeclaration(parent) || ts.isEnumMember(parent) || ts.isPropertyAssignment(parent));
        if (!isDeclName) {
          let sym = shorthand ? checker.getShorthandAssignmentValueSymbol(parent) : checker.getSymbolAtLocation(node);
          if (sym && sym.flags & ts.SymbolFlags.Alias) sym = checker.getAliasedSymbol(sym);
          const decl = sym?.declarations?.[0];
          const target = decl?.getSourceFile();
          if (decl && target && target !== sf && inProject.has(path.resolve(target.fileName))) {
            const name = topLevelName(ts, decl);
            if (name) edges.add(`${from}\0${path.relative(root, target.fileName).split(path.sep).join('/')}#${name}`);
          }
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return edges;
}

const TS_JS = /\.(ts|tsx|mts|cts|js|jsx|mjs|cjs)$/;

/**
 * `npm run eval:edges [-- --repo <git dir> --commit <sha>] [--syntax-only] [--lib]`: our resolved cross-file edges
 * against the TypeScript compiler's on the TS/JS files of one commit (default: the rxjs fixture of
 * bench:cohorts), syntax-only and with the checker path (type-edges.ts) over every file.
 */
export async function main(args: string[] = []): Promise<void> {
  const repoArg = argValue(args, '--repo');
  const noChecker = args.includes('--syntax-only');
  const fixture = repoArg ? undefined : buildRxjsRepo();
  const repo = await GitRepo.open(repoArg ?? fixture!.dir);
  const commit = await repo.revParse(argValue(args, '--commit') ?? (fixture ? fixture.head : 'HEAD'));
  const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-eval-'));
  // The compiler reads files from disk: the commit's tree written out (the fixture's checkout is already its head).
  const tree = repoArg ? path.join(cacheDir, 'tree') : fixture!.dir;
  const corpus = repoArg ? `${path.basename(path.resolve(repoArg))}@${commit.slice(0, 12)}` : `rxjs@${RXJS_HEAD}/src`;
  try {
    if (repoArg) {
      fs.mkdirSync(tree);
      await exportTree(repo, commit, tree);
    }
    const cache = FactsCache.open(cacheDir);
    const index = await indexCommit(repo, commit, { cache });
    cache.close();
    const graph = new CodeGraph(index);
    const edgeSet = () => {
      const out = new Set<string>();
      for (const e of graph.edges) {
        if (e.fromFile === e.toFile || !TS_JS.test(e.fromFile) || !TS_JS.test(e.toFile)) continue;
        const q = e.to.slice(e.to.indexOf('#') + 1);
        out.add(`${e.fromFile}\0${e.toFile}#${q.split('.')[0]}`);
      }
      return out;
    };
    const syntaxOnly = edgeSet();
    // Name-only matching, for comparison: every cross-file candidate of a name-matched reference.
    const nameOnly = new Set<string>();
    for (const m of graph.nameMatches) for (const c of m.candidates) nameOnly.add(`${m.fromFile}\0${c.split('#')[0]}#${c.slice(c.indexOf('#') + 1).split('.')[0]}`);
    const tsFiles = [...index.files.keys()].filter((p) => TS_JS.test(p));
    // The engine's type-resolved path over every TS/JS file of the commit (as a PR that touches them all),
    // with the work caps a computation has lifted: this measures the mapping, not the caps.
    const checkerStats = noChecker ? undefined : await addCheckerEdges(graph, repo, { files: tsFiles, maxFiles: Infinity, maxProgramFiles: 5000, maxProgramChars: Infinity, maxQueries: Infinity, maxTypeWork: Infinity, safetyMs: 600_000, lib: args.includes('--lib') });
    if (checkerStats?.skippedAll || checkerStats?.skipped?.length) throw new Error(`eval:edges: the checker did not walk every file (${checkerStats.skippedAll ?? checkerStats.skipped![0].reason})`);
    const ours = edgeSet();

    const files = tsFiles.map((p) => path.join(tree, p));
    const t0 = performance.now();
    const truth = compilerEdges(tree, files);
    const truthMs = performance.now() - t0;
    const score = (set: Set<string>) => {
      const tp = [...set].filter((e) => truth.has(e)).length;
      return { tp, precision: set.size ? tp / set.size : 0, recall: truth.size ? tp / truth.size : 0 };
    };
    const syn = score(syntaxOnly);
    const { tp, precision, recall } = score(ours);
    const nameTp = [...nameOnly].filter((e) => truth.has(e)).length;
    const namePrecision = nameOnly.size ? nameTp / nameOnly.size : 0;

    const show = (s: string) => s.replace('\0', ' → ');
    const falsePositives = [...ours].filter((e) => !truth.has(e)).slice(0, 5).map(show);
    const missed = [...truth].filter((e) => !ours.has(e)).slice(0, 5).map(show);
    console.log(`eval:edges — ${corpus} (${files.length} TypeScript/JavaScript files), edges = (file, target file#top-level symbol)`);
    console.log(`compiler-resolved cross-file edges   ${truth.size}  (reference program ${Math.round(truthMs)} ms)`);
    console.log(`syntax-only resolved edges           ${syntaxOnly.size}  precision ${syn.precision.toFixed(3)}  recall ${syn.recall.toFixed(3)}`);
    if (checkerStats) console.log(`+ checker (type-edges.ts)            ${checkerStats.added} edges added, ${checkerStats.confirmed} confirmed, ${checkerStats.programFiles} program files, ${checkerStats.ms} ms${checkerStats.truncated ? ' (truncated)' : ''}`);
    console.log(`our resolved cross-file edges        ${ours.size}  (true positives ${tp})`);
    console.log(`precision                            ${precision.toFixed(3)}  (target ≥ 0.99)`);
    console.log(`recall                               ${recall.toFixed(3)}  (target ≥ 0.90)`);
    console.log(`name-match-only edges (not used)     ${nameOnly.size}  precision ${namePrecision.toFixed(3)}`);
    // Per target file: which files the false positives and the misses land in (the anatomy, exact).
    const byTarget = new Map<string, { tp: number; fp: number; missed: number }>();
    const row = (e: string) => {
      const file = e.slice(e.indexOf('\0') + 1).split('#')[0];
      let r = byTarget.get(file);
      if (!r) byTarget.set(file, (r = { tp: 0, fp: 0, missed: 0 }));
      return r;
    };
    for (const e of ours) row(e)[truth.has(e) ? 'tp' : 'fp']++;
    for (const e of truth) if (!ours.has(e)) row(e).missed++;
    const worst = [...byTarget].filter(([, r]) => r.fp || r.missed).sort((a, b) => b[1].fp + b[1].missed - (a[1].fp + a[1].missed) || (a[0] < b[0] ? -1 : 1));
    const fpTotal = ours.size - tp;
    const missTotal = truth.size - tp;
    if (worst.length) {
      console.log(`per target file (false positives ${fpTotal}, misses ${missTotal}; top ${Math.min(15, worst.length)} of ${worst.length} files with either):`);
      console.log(`  ${'fp'.padStart(5)} ${'miss'.padStart(5)} ${'tp'.padStart(5)}  target file`);
      for (const [file, r] of worst.slice(0, 15)) console.log(`  ${String(r.fp).padStart(5)} ${String(r.missed).padStart(5)} ${String(r.tp).padStart(5)}  ${file}`);
      // Per target symbol within the worst files: which names.
      const bySym = new Map<string, { fp: number; missed: number }>();
      for (const e of ours) if (!truth.has(e)) { const k = e.slice(e.indexOf('\0') + 1); const r = bySym.get(k) ?? { fp: 0, missed: 0 }; r.fp++; bySym.set(k, r); }
      for (const e of truth) if (!ours.has(e)) { const k = e.slice(e.indexOf('\0') + 1); const r = bySym.get(k) ?? { fp: 0, missed: 0 }; r.missed++; bySym.set(k, r); }
      const worstSyms = [...bySym].sort((a, b) => b[1].fp + b[1].missed - (a[1].fp + a[1].missed) || (a[0] < b[0] ? -1 : 1)).slice(0, 15);
      console.log(`per target symbol (top ${worstSyms.length} of ${bySym.size}): ${worstSyms.map(([k, r]) => `${k} ${r.fp}fp/${r.missed}miss`).join(' | ')}`);
    }
    if (falsePositives.length) console.log(`sample false positives: ${falsePositives.join(' | ')}`);
    if (missed.length) console.log(`sample misses: ${missed.join(' | ')}`);
    console.log(JSON.stringify({ bench: 'eval-edges', corpus, files: files.length, compilerEdges: truth.size, syntaxOnly: { edges: syntaxOnly.size, precision: +syn.precision.toFixed(4), recall: +syn.recall.toFixed(4) }, checker: checkerStats ?? null, ourEdges: ours.size, truePositives: tp, precision: +precision.toFixed(4), recall: +recall.toFixed(4), nameMatchEdges: nameOnly.size, nameMatchPrecision: +namePrecision.toFixed(4), byTarget: Object.fromEntries(worst.slice(0, 15)) }));
  } finally {
    repo.close();
    fixture?.cleanup();
    fs.rmSync(cacheDir, { recursive: true, force: true });
  }
}
