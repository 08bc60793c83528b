import { extractFacts } from '../codegraph/extract';
import type { Definition, FileFacts } from '../codegraph/facts';
import type { FactsCache } from '../codegraph/facts-cache';
import { symbolId } from '../codegraph/graph';
import { loadGrammar } from '../codegraph/languages/grammar-runtime';
import { CODEGRAPH_ENGINE_VERSION } from '../codegraph/indexer';
import { languageOf } from '../codegraph/languages/languages';
import type { GitRepo } from '../git/repo';

/** Same bound as the indexer: larger files are generated code the code graph never parses either. */
const MAX_PARSE_BYTES = 1024 * 1024;

/**
 * Symbol id (`path#Qualified.name`) of the innermost definition whose span holds the whole line range,
 * or undefined when the range lies (even partly) outside every definition. Pure: the caller gathers
 * the definitions.
 */
export function enclosingSymbolOf(filePath: string, defs: readonly Definition[], startLine: number, endLine: number): string | undefined {
  let best: Definition | undefined;
  for (const d of defs) {
    if (d.start > startLine || d.end < endLine) continue;
    // Ties (same span, e.g. a decorated declaration captured twice) go to the nested one: it comes later.
    if (!best || d.end - d.start <= best.end - best.start) best = d;
  }
  return best ? symbolId(filePath, best.qname) : undefined;
}

/**
 * The code graph's definitions of one file at `commit`, through the blob-SHA facts cache the indexer
 * fills (a head the computation indexed costs one cache read); a miss parses only this blob and stores
 * it for the indexer. Undefined when the file is absent, a symlink, binary, too large, or has no grammar.
 */
export async function definitionsAt(repo: GitRepo, cache: FactsCache, commit: string, filePath: string): Promise<Definition[] | undefined> {
  const language = languageOf(filePath);
  if (!language) return undefined;
  const entry = await treeEntryOf(repo, commit, filePath);
  if (!entry || entry.type !== 'blob' || entry.mode === '120000') return undefined;
  const cached = cache.get(entry.sha, language, CODEGRAPH_ENGINE_VERSION);
  if (cached) return cached.defs;
  const content = await repo.readBlob(entry.sha);
  if (!content || content.length > MAX_PARSE_BYTES || content.includes(0)) return undefined;
  const facts: FileFacts = extractFacts(await loadGrammar(language), content.toString('utf8'));
  cache.putMany([{ blob: entry.sha, grammar: language, engine: CODEGRAPH_ENGINE_VERSION, facts }]);
  return facts.defs;
}

async function treeEntryOf(repo: GitRepo, commit: string, filePath: string): Promise<{ mode: string; type: string; sha: string } | undefined> {
  const out = await repo.git(['--literal-pathspecs', 'ls-tree', '-z', '--full-tree', commit, '--', filePath]);
  const rec = out.split('\0').find((r) => r.slice(r.indexOf('\t') + 1) === filePath);
  if (!rec) return undefined;
  const [mode, type, sha] = rec.slice(0, rec.indexOf('\t')).split(' ');
  return { mode, type, sha };
}
