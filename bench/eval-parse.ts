import * as path from 'node:path';
import { extractFacts } from '../src/codegraph/extract';
import { loadGrammar } from '../src/codegraph/languages/grammar-runtime';
import { languageOf } from '../src/codegraph/languages/languages';
import { GitRepo } from '../src/git/repo';
import { argValue } from './support/report';
// The TypeScript 5.9 compiler API (an npm alias, a devDependency): the reference parser here.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const ts = require('typescript-compiler-api') as typeof import('typescript-compiler-api');

const VENDORED = /(^|\/)(node_modules|vendor|third_party|bower_components|\.yarn|dist|build)\//;

/**
 * `npm run eval:parse -- --repo <git dir> [--commit SHA]`: does web-tree-sitter parse what TypeScript's own
 * parser accepts? For every TS/JS file of the commit: tree-sitter ERROR/MISSING nodes vs TypeScript's
 * syntactic diagnostics, and the raw parse time of each. Ends with one JSON line.
 */
export async function main(args: string[]): Promise<void> {
  const repoDir = argValue(args, '--repo');
  if (!repoDir) throw new Error('usage: npm run eval:parse -- --repo <git dir> [--commit SHA]');
  const repo = await GitRepo.open(repoDir);
  try {
    const commit = await repo.revParse(argValue(args, '--commit') ?? 'HEAD');
    const entries = (await repo.lsTree(commit)).filter((e) => e.type === 'blob' && !VENDORED.test(e.path) && ['typescript', 'tsx', 'javascript'].includes(languageOf(e.path) ?? ''));
    let tsClean = 0;
    let tsErrors = 0;
    let treeErrors = 0;
    let treeErrorsOnTsClean = 0;
    let tsMs = 0;
    let treeMs = 0;
    let bytes = 0;
    const failing: string[] = [];
    let indexErrorsOnTsClean = 0;
    let fallbackFiles = 0;
    for (const e of entries) {
      const text = (await repo.readBlob(e.sha))?.toString('utf8');
      if (text === undefined || text.length > 1024 * 1024) continue;
      bytes += Buffer.byteLength(text);
      const language = languageOf(e.path)!;
      const grammar = await loadGrammar(language);
      let t0 = performance.now();
      const tree = grammar.parser.parse(text)!;
      treeMs += performance.now() - t0;
      const broken = tree.rootNode.hasError;
      tree.delete();
      t0 = performance.now();
      const kind = /\.tsx$/.test(e.path) ? ts.ScriptKind.TSX : /\.ts$/.test(e.path) ? ts.ScriptKind.TS : /\.jsx$/.test(e.path) ? ts.ScriptKind.JSX : ts.ScriptKind.JS;
      const sf = ts.createSourceFile(e.path, text, ts.ScriptTarget.Latest, false, kind);
      tsMs += performance.now() - t0;
      const diagnostics = (sf as unknown as { parseDiagnostics: unknown[] }).parseDiagnostics.length;
      if (diagnostics === 0) tsClean++;
      else tsErrors++;
      if (broken) treeErrors++;
      if (broken && diagnostics === 0) {
        treeErrorsOnTsClean++;
        failing.push(e.path);
      }
      // What the index records: the tree-sitter facts, or TypeScript's parser where tree-sitter fails.
      const facts = extractFacts(grammar, text);
      if (facts.parser === 'typescript') fallbackFiles++;
      if (facts.hasErrors && diagnostics === 0) indexErrorsOnTsClean++;
    }
    const name = path.basename(path.resolve(repoDir));
    console.log(`eval:parse — ${name}@${commit.slice(0, 12)}: ${entries.length} TS/JS files, ${(bytes / 1e6).toFixed(2)} MB`);
    console.log(`TypeScript parser: ${tsClean} clean, ${tsErrors} with syntax errors · ${tsMs.toFixed(0)} ms`);
    console.log(`web-tree-sitter:   ${treeErrors} with ERROR/MISSING nodes, ${treeErrorsOnTsClean} of them TypeScript-clean · ${treeMs.toFixed(0)} ms`);
    console.log(`index (tree-sitter, TypeScript's parser as the fallback): ${fallbackFiles} file(s) through the fallback, ${indexErrorsOnTsClean} TypeScript-clean file(s) still with parse errors`);
    for (const f of failing.slice(0, 20)) console.log(`  tree-sitter error, TypeScript clean: ${f}`);
    console.log(JSON.stringify({ bench: 'eval-parse', repo: name, commit, files: entries.length, bytes, tsClean, tsErrors, treeSitterErrors: treeErrors, treeSitterErrorsOnTsClean: treeErrorsOnTsClean, fallbackFiles, indexErrorsOnTsClean, tsParseMs: Math.round(tsMs), treeSitterParseMs: Math.round(treeMs) }));
  } finally {
    repo.close();
  }
}
