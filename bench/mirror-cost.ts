import { detectMirrors, mirrorCandidates } from '../src/cohorts/evidence/mirrors';
import { indexCommit } from '../src/codegraph/indexer';
import { GitRepo } from '../src/git/repo';
import { FactsCache } from '../src/codegraph/facts-cache';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { execFileSync } from 'node:child_process';
/**
 * `node bench/run.js mirror-cost <git dir> <base> <head>`: the `mirror` signal's own cost on one change —
 * candidates, the index's definitions map, candidates' texts and their comparison (`detectMirrors`),
 * seven times on a warm index; prints the median. docs/cohorts.md cites it on zod.
 */
export async function main(args: string[]) {
  const [dir, base, head] = args;
  if (!dir || !base || !head) throw new Error('usage: node bench/run.js mirror-cost <git dir> <base> <head>');
  const repo = await GitRepo.open(dir);
  const cache = FactsCache.open(fs.mkdtempSync(path.join(os.tmpdir(), 'rl-mirror-cost-')));
  const idx = await indexCommit(repo, head, { cache } as any);
  const changed = execFileSync('git', ['-C', dir, 'diff', '--name-only', base, head]).toString().trim().split('\n').filter((p) => idx.files.has(p));
  const times: number[] = [];
  let found = 0;
  for (let i = 0; i < 7; i++) {
    const t0 = performance.now();
    const c = mirrorCandidates(changed);
    const defs = new Map([...idx.files.values()].map((x) => [x.path, x.facts.defs.map((d) => d.qname)]));
    const m = await detectMirrors(c, defs, async (p) => (await repo.readFileAt(head, p))?.toString('utf8'));
    times.push(performance.now() - t0);
    found = m.length;
  }
  times.sort((a, b) => a - b);
  console.log(`${changed.length} changed indexed files, ${idx.files.size} indexed, ${found} mirrors; detect median ${times[3].toFixed(1)} ms (min ${times[0].toFixed(1)}, max ${times[6].toFixed(1)})`);
}
