import * as path from 'node:path';
import type { Node } from 'web-tree-sitter';
import { extractFacts } from '../src/codegraph/extract';
import { loadGrammar } from '../src/codegraph/languages/grammar-runtime';
import { languageOf } from '../src/codegraph/languages/languages';
import { GitRepo } from '../src/git/repo';
import { argValue } from './support/report';

const VENDORED = /(^|\/)(node_modules|vendor|third_party|bower_components|\.yarn|dist|build|Pods|\.build)\//;

/**
 * `npm run eval:grammars -- --repo <git dir> [--commit SHA] [--languages dart,kotlin,swift]`: how many files
 * of each language the grammar parses with ERROR/MISSING nodes — the raw parse, and what the index records
 * (after the language's repairSource, where it has one) — with the first error of each failing file and
 * the raw parse time and the index's (extractFacts: prepareSource, parse, repair, queries). Ends with one JSON line.
 */
export async function main(args: string[]): Promise<void> {
  const repoDir = argValue(args, '--repo');
  if (!repoDir) throw new Error('usage: npm run eval:grammars -- --repo <git dir> [--commit SHA] [--languages dart,kotlin,swift]');
  const wanted = (argValue(args, '--languages') ?? 'dart,kotlin,swift').split(',');
  const repo = await GitRepo.open(repoDir);
  try {
    const commit = await repo.revParse(argValue(args, '--commit') ?? 'HEAD');
    const entries = (await repo.lsTree(commit)).filter((e) => e.type === 'blob' && !VENDORED.test(e.path) && wanted.includes(languageOf(e.path) ?? ''));
    const per: Record<string, { files: number; bytes: number; rawErrors: number; indexErrors: number; parseMs: number; indexMs: number; failing: string[] }> = {};
    for (const e of entries) {
      const text = (await repo.readBlob(e.sha))?.toString('utf8');
      if (text === undefined || text.length > 1024 * 1024) continue;
      const language = languageOf(e.path)!;
      const s = (per[language] ??= { files: 0, bytes: 0, rawErrors: 0, indexErrors: 0, parseMs: 0, indexMs: 0, failing: [] });
      s.files++;
      s.bytes += Buffer.byteLength(text);
      const grammar = await loadGrammar(language);
      const t0 = performance.now();
      const tree = grammar.parser.parse(text)!;
      s.parseMs += performance.now() - t0;
      const t1 = performance.now();
      const facts = extractFacts(grammar, text);
      s.indexMs += performance.now() - t1;
      if (tree.rootNode.hasError) {
        s.rawErrors++;
        const first = firstError(tree.rootNode);
        if (facts.hasErrors) {
          s.indexErrors++;
          const line = first ? text.split('\n')[first.startPosition.row].trim().slice(0, 100) : '';
          s.failing.push(`${e.path}:${first ? first.startPosition.row + 1 : 0} ${first?.isMissing ? `MISSING ${first.type}` : 'ERROR'} ${JSON.stringify(line)}`);
        }
      }
      tree.delete();
    }
    const name = path.basename(path.resolve(repoDir));
    const summary: Record<string, unknown> = {};
    for (const [language, s] of Object.entries(per)) {
      console.log(`eval:grammars — ${name}@${commit.slice(0, 12)} ${language}: ${s.files} files, ${(s.bytes / 1e6).toFixed(2)} MB; raw parse ${s.rawErrors} with ERROR/MISSING nodes, index ${s.indexErrors} · raw parse ${s.parseMs.toFixed(0)} ms, index (extractFacts) ${s.indexMs.toFixed(0)} ms`);
      for (const f of s.failing) console.log(`  ${f}`);
      summary[language] = { files: s.files, bytes: s.bytes, rawErrorFiles: s.rawErrors, indexErrorFiles: s.indexErrors, parseMs: Math.round(s.parseMs), indexMs: Math.round(s.indexMs) };
    }
    console.log(JSON.stringify({ bench: 'eval-grammars', repo: name, commit, languages: summary }));
  } finally {
    repo.close();
  }
}

function firstError(n: Node): Node | undefined {
  if (n.isError || n.isMissing) return n;
  if (!n.hasError) return undefined;
  for (const c of n.children) {
    const found = firstError(c);
    if (found) return found;
  }
  return undefined;
}
