import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { closeSharedExtractPool } from '../src/codegraph/extract-pool';
import { REVIEW_COMPUTED_BYTE_BUDGET } from '../src/compute/fit-output';
import { computeReview } from '../src/compute/review';
import { validateEventData } from '../src/events/catalogue';
import { GitRepo } from '../src/git/repo';
import { argValue } from './support/report';

/**
 * `npm run sweep:compute -- --repo <git dir> [--max N]`: every commit of the repository (first parent as the
 * base; root commits have no base and are skipped) computed as a PR, each result checked the way the
 * command kernel checks it before appending (event schema, byte budget). With more commits than --max,
 * an evenly spaced sample of --max commits, said so in the output. Ends with one JSON line.
 * `--commits a,b,…`: only those commits (each against its first parent), with each one's time and checker
 * metrics printed; `--syntax-only`: without TypeScript's checker (`typeEdges: false`); `--checker k=v,…`: its caps.
 */
export async function main(args: string[]): Promise<void> {
  const repoDir = argValue(args, '--repo');
  if (!repoDir) throw new Error('usage: npm run sweep:compute -- --repo <git dir> [--max N]');
  const max = Number(argValue(args, '--max') ?? Infinity);
  const only = argValue(args, '--commits')?.split(',').filter(Boolean);
  const typeEdges = !args.includes('--syntax-only');
  // `--checker maxFiles=200,safetyMs=60000`: the checker's caps (type-edges.ts CHECKER_LIMITS) for this sweep.
  const checkerLimits = Object.fromEntries((argValue(args, '--checker') ?? '').split(',').filter(Boolean).map((kv) => [kv.split('=')[0], Number(kv.split('=')[1])]));
  const repo = await GitRepo.open(repoDir);
  const workspaceDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-sweep-'));
  try {
    const lines = (await repo.git(['rev-list', '--parents', 'HEAD'])).split('\n').filter(Boolean);
    const every = lines.map((l) => l.split(' ')).filter((p) => p.length >= 2).map(([c, parent]) => ({ commit: c, parent }));
    const all = only ? every.filter((c) => only.some((o) => c.commit.startsWith(o))) : every;
    const roots = lines.length - all.length;
    const step = all.length > max ? all.length / max : 1;
    const picked = step === 1 ? all : Array.from({ length: max }, (_, i) => all[Math.floor(i * step)]);
    const failures: Array<{ commit: string; error: string }> = [];
    const missingObjects: string[] = [];
    const ms: number[] = [];
    let trimmed = 0;
    let clipped = 0;
    let maxBytes = 0;
    let maxBytesCommit = '';
    // What the checker's deterministic caps see (type-edges.ts): the largest work of one commit, and the commits they stopped.
    let maxQueries = 0;
    let maxTypeWork = 0;
    const typeEdgeStatus: Record<string, number> = {};
    const started = performance.now();
    for (const [i, { commit, parent }] of picked.entries()) {
      const t0 = performance.now();
      try {
        const { data } = await computeReview({ repo, baseSha: parent, headSha: commit, workspaceDir, typeEdges, checkerLimits });
        const m = data.metrics;
        if (only) console.log(`  ${commit.slice(0, 8)}: ${(performance.now() - t0).toFixed(0)} ms · ${m.changedFiles} changed files · checker ${m.checkerMs ?? 0} ms (program ${m.checkerProgramMs ?? 0}, walk ${m.checkerWalkMs ?? 0}), ${m.checkerEdges ?? 0} checker edges, ${m.checkerQueries ?? 0} checker queries, type work ${m.checkerTypeWork ?? 0}${m.checkerSkippedFiles ? `, ${m.checkerSkippedFiles} files skipped` : ''}${data.typeEdges?.reason ? ` · type edges: ${data.typeEdges.reason}` : ''}`);
        validateEventData('ReviewComputed', data);
        const bytes = Buffer.byteLength(JSON.stringify(data));
        if (bytes > maxBytes) [maxBytes, maxBytesCommit] = [bytes, commit];
        if (bytes > REVIEW_COMPUTED_BYTE_BUDGET) throw new Error(`payload_too_large: ${bytes} bytes`);
        if (data.metrics.trimStage) trimmed++;
        maxQueries = Math.max(maxQueries, m.checkerQueries ?? 0);
        maxTypeWork = Math.max(maxTypeWork, m.checkerTypeWork ?? 0);
        if (data.typeEdges) typeEdgeStatus[data.typeEdges.status] = (typeEdgeStatus[data.typeEdges.status] ?? 0) + 1;
        if (data.metrics.clippedFields) clipped++;
      } catch (e) {
        const message = (e as Error).message;
        // The evaluation mirrors leave out their largest blobs; a commit touching one cannot be diffed by git
        // itself. That is a gap of the copy, not of the engine: counted apart, never hidden.
        if (/unable to read [0-9a-f]{40}|could not get object info|bad object/.test(message)) missingObjects.push(commit);
        else {
          failures.push({ commit, error: message.slice(0, 500) });
          console.error(`  FAIL ${commit.slice(0, 12)}: ${message.slice(0, 300)}`);
        }
      }
      ms.push(performance.now() - t0);
      if ((i + 1) % 100 === 0) console.error(`  ${i + 1}/${picked.length} commits, ${failures.length} failures`);
    }
    const sorted = [...ms].sort((a, b) => a - b);
    const name = path.basename(path.resolve(repoDir));
    console.log(`sweep:compute — ${name}: ${picked.length} of ${all.length} non-root commits computed as PRs${step === 1 ? ' (all)' : ` (evenly spaced sample, every ${step.toFixed(2)}th)`}; ${roots} root commit(s) skipped`);
    console.log(`failures ${failures.length} · commits whose blobs are absent from this copy (git cannot diff them) ${missingObjects.length}${missingObjects.length ? ` (${missingObjects.slice(0, 5).map((c) => c.slice(0, 12)).join(', ')})` : ''} · lists capped to fit one event ${trimmed} · fields clipped by the last line ${clipped} · largest event ${maxBytes} bytes${maxBytesCommit ? ` (${maxBytesCommit.slice(0, 12)})` : ''}`);
    console.log(`per commit: median ${sorted[Math.floor(sorted.length / 2)]?.toFixed(0)} ms, max ${sorted[sorted.length - 1]?.toFixed(0)} ms; total ${((performance.now() - started) / 1000).toFixed(1)} s`);
    console.log(`checker: largest work of one commit ${maxQueries} queries, type work ${maxTypeWork}; type edges ${Object.entries(typeEdgeStatus).map(([k, v]) => `${k} ${v}`).join(', ') || 'none'}`);
    for (const f of failures.slice(0, 20)) console.log(`  FAIL ${f.commit.slice(0, 12)}: ${f.error}`);
    console.log(JSON.stringify({ bench: 'sweep-compute', repo: name, commits: all.length, computed: picked.length, sampled: step !== 1, failures: failures.length, missingObjects: missingObjects.length, trimmed, clipped, maxEventBytes: maxBytes, maxEventCommit: maxBytesCommit, maxCheckerQueries: maxQueries, maxCheckerTypeWork: maxTypeWork, typeEdgeStatus, medianMs: Math.round(sorted[Math.floor(sorted.length / 2)] ?? 0) }));
  } finally {
    await closeSharedExtractPool();
    repo.close();
    fs.rmSync(workspaceDir, { recursive: true, force: true });
  }
}
