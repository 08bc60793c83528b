import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { FactsCache } from '../src/codegraph/facts-cache';
import { CodeGraph } from '../src/codegraph/graph';
import { indexCommit } from '../src/codegraph/indexer';
import { addCheckerEdges } from '../src/codegraph/type-edges';
import { GitRepo } from '../src/git/repo';
export async function main(args: string[]) {
  const repo = await GitRepo.open(args[0]);
  const commit = await repo.revParse('HEAD');
  const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-probe-'));
  const cache = FactsCache.open(cacheDir);
  const index = await indexCommit(repo, commit, { cache });
  const graph = new CodeGraph(index);
  const target = args[1];
  const defs = graph.defsByFile.get(target) ?? [];
  console.log('defs', defs.length, defs.filter(d => /^(Env|console|crypto|caches|Cloudflare)$/.test(d.def.name)).map(d => `${d.id} ${d.def.start}-${d.def.end}`));
  const f = index.files.get(target)!; console.log('parseErrors?', (f as any).facts.parseErrors ?? (f as any).parseErrors, Object.keys(f.facts));
  const files = [...index.files.keys()].filter(p => /\.(ts|tsx|js|mjs|cjs)$/.test(p) && (!args[2] || p.startsWith(args[2])));
  await addCheckerEdges(graph, repo, { files, maxFiles: Infinity, maxProgramFiles: 5000, maxProgramChars: Infinity, maxQueries: Infinity, maxTypeWork: Infinity, safetyMs: 600000 });
  for (const e of graph.edges) if (e.toFile === target && e.fromFile !== target) console.log(JSON.stringify(e));
  cache.close(); fs.rmSync(cacheDir, { recursive: true, force: true }); repo.close();
}
