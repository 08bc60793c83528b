import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { closeSharedExtractPool } from '../src/codegraph/extract-pool';
import { loadConfig } from '../src/config';
import { cohortContextQuery } from '../src/readmodels/queries/cohort-context';
import { contextFoldFor, contextOf, prepareContext } from '../src/context/context-fold';
import type { ContextPack } from '../src/context/pack-types';
import type { CohortData } from '../src/events/catalogue/compute';
import { newUuidV7 } from '../src/events/ids';
import { Ledger, LOCAL_OPERATOR } from '../src/ledger';
import { runQuery } from '../src/readmodels/queries/run-query';
import { buildRxjsRepo, RXJS_BASE, RXJS_HEAD } from './rxjs-fixture';
import { execFileSync } from 'node:child_process';
import { loadAverage } from './support/abab';

const quantile = (xs: number[], q: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))];
};
const BUDGETS = [8 * 1024, 32 * 1024];
const AGENT = { principal: 'agent:bench' as const, role: 'member' as const };
const REPO = 'rxjs';
const E2E_SAMPLE = 30;

/**
 * Context packs for every cohort of the rxjs 7.5 → 7.8 release diff (the cohorts benchmark repository), at
 * 8 KB and 32 KB. An earlier PR on the same repo leaves review nodes on cohort anchors (half dismissed), so
 * the packs carry history clues. Build time is the pure pack build on warm materials (what each request
 * costs once the head is loaded); the cold materials load and the end-to-end query are reported apart.
 */
export async function main(args: string[]): Promise<void> {
  const rounds = Number(args.find((a) => a.startsWith('--rounds='))?.slice(9) ?? 5);
  const loadAtStart = loadAverage();
  const fixture = buildRxjsRepo();
  execFileSync('git', ['remote', 'add', 'origin', 'https://github.com/ReactiveX/rxjs.git'], { cwd: fixture.dir });
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-bench-context-'));
  const ledger = new Ledger(loadConfig({ dataDir }, {}));
  const ws = 'bench';
  const run = (cmd: string, payload: unknown, who: typeof AGENT | typeof LOCAL_OPERATOR = AGENT) => ledger.run(cmd, ws, { ...who, idempotencyKey: newUuidV7() }, payload);
  try {
    await ledger.createWorkspace({ ...LOCAL_OPERATOR, idempotencyKey: newUuidV7() }, { workspaceId: ws });
    await run('registerRepo', { repoId: REPO, path: fixture.dir }, LOCAL_OPERATOR);
    const t0 = performance.now();
    for (const prNumber of [1, 2]) {
      await run('requestReview', { repoId: REPO, prNumber, baseSha: fixture.base, headSha: fixture.head });
      await run('computeReview', { repoId: REPO, prNumber });
    }
    const computeMs = performance.now() - t0;
    const handle = await ledger.workspace(ws);
    const events = [];
    for await (const e of handle.store.readAll()) events.push(e);
    const cohorts = (events.filter((e) => e.type === 'ReviewComputed').pop()!.data as { cohorts: CohortData[] }).cohorts;

    // History: PR 1's reviewers leave a node on the first anchor of every other cohort; half are dismissed.
    let filed = 0;
    for (const [i, c] of cohorts.entries()) {
      const anchor = c.fragments.find((f) => f.symbolId && f.side === 'head');
      if (i % 2 || !anchor) continue;
      const node = {
        kind: 'bug', priority: 'P2', triage: { category: 'correctness', severity: 'medium', effort: 'small' },
        anchor: { path: anchor.path, startLine: anchor.startLine, endLine: anchor.endLine, symbolId: anchor.symbolId },
        confidence: 0.6, title: `possible regression in ${anchor.symbolId}`, body: 'Earlier review note.', brief: 'engineer',
      };
      const out = await run('addReviewNode', { repoId: REPO, prNumber: 1, node });
      const nodeId = (out.response.result as { nodeId: string }).nodeId;
      if (filed++ % 2 === 0) await run('dismissNode', { repoId: REPO, prNumber: 1, nodeId, reason: 'intended behaviour' }, LOCAL_OPERATOR);
    }

    const target = { repoId: REPO, prNumber: 2 };
    const c0 = performance.now();
    const materials = await prepareContext(handle, target, 'all');
    const materialsMs = performance.now() - c0;
    const fold = contextFoldFor(REPO, `pr-${REPO}-2`, materials);
    let state = fold.initialState();
    for await (const e of handle.store.readAll()) if (cohortContextQuery.affects({ ...target, cohortKey: cohorts[0].key, budgetBytes: 0 }, e)) state = fold.evolve(state, e);

    const byBudget = new Map<number, { ms: number[]; cpuUs: number[]; whole: number; signature: number; pointer: number; fragmentsDegraded: number; used: number[]; history: number }>();
    for (const budget of BUDGETS) byBudget.set(budget, { ms: [], cpuUs: [], whole: 0, signature: 0, pointer: 0, fragmentsDegraded: 0, used: [], history: 0 });
    const slowest = new Map<number, { ms: number; key: string; round: number }>();
    // Round 0 warms the JIT and is not counted; budgets interleave per cohort so noise hits both alike.
    for (let r = 0; r <= rounds; r++) {
      for (const c of cohorts) {
        for (const budget of BUDGETS) {
          const c0 = process.cpuUsage();
          const t = performance.now();
          const pack = contextOf(state, c.key, budget) as ContextPack;
          const ms = performance.now() - t;
          const cpu = process.cpuUsage(c0);
          if ('stale' in pack) throw new Error(`stale pack for ${c.key}`);
          if (r === 0) continue;
          const s = byBudget.get(budget)!;
          s.ms.push(ms);
          s.cpuUs.push(cpu.user + cpu.system);
          if (ms > (slowest.get(budget)?.ms ?? -1)) slowest.set(budget, { ms, key: c.key, round: r });
          if (r === 1) {
            s.whole += pack.counts.whole;
            s.signature += pack.counts.signature;
            s.pointer += pack.counts.pointer;
            s.fragmentsDegraded += pack.truncated.filter((x) => x.what === 'fragment').length;
            s.used.push(pack.usedBytes);
            s.history += pack.clues.filter((x) => x.kind === 'history').length;
          }
        }
      }
    }

    // End to end through the query (reads the workspace log, warm materials), a sample of cohorts.
    let logEvents = 0;
    for await (const _e of handle.store.readAll()) logEvents++;
    const e2e: number[] = [];
    for (const c of cohorts.slice(0, E2E_SAMPLE)) {
      const t = performance.now();
      await runQuery(cohortContextQuery, handle, { ...target, cohortKey: c.key, budgetBytes: 32 * 1024 });
      e2e.push(performance.now() - t);
    }

    const figures: Record<string, number> = {};
    const rows: Array<[string, string]> = [
      ['repository', `rxjs ${RXJS_BASE} → ${RXJS_HEAD}: ${cohorts.length} cohorts, ${cohorts.reduce((n, c) => n + c.fragments.length, 0)} fragments; ${filed} earlier-PR nodes (compute + setup ${(computeMs / 1000).toFixed(1)} s)`],
      ['materials load (cold, once per head)', `${materialsMs.toFixed(0)} ms · ${materials!.texts.size} files read, ${materials!.docs.length} docs, ${materials!.graph.symbols.size} symbols`],
    ];
    for (const budget of BUDGETS) {
      const s = byBudget.get(budget)!;
      const total = s.whole + s.signature + s.pointer;
      const kb = budget / 1024;
      const p50 = quantile(s.ms, 0.5);
      const p99 = quantile(s.ms, 0.99);
      rows.push([
        `${kb} KB budget`,
        `build p50 ${p50.toFixed(2)} ms · p99 ${p99.toFixed(2)} ms (target ≤ 50) · clues ${total}: whole ${((s.whole / total) * 100).toFixed(1)}%, signature ${((s.signature / total) * 100).toFixed(1)}%, pointer ${((s.pointer / total) * 100).toFixed(1)}% · fragments degraded ${s.fragmentsDegraded} · bytes/pack p50 ${quantile(s.used, 0.5)} · history clues ${s.history}`,
      ]);
      Object.assign(figures, {
        [`p50Ms_${kb}k`]: +p50.toFixed(3),
        [`p99Ms_${kb}k`]: +p99.toFixed(3),
        [`minMs_${kb}k`]: +Math.min(...s.ms).toFixed(3),
        [`maxMs_${kb}k`]: +Math.max(...s.ms).toFixed(3),
        [`cpuUsPerBuild_${kb}k`]: { min: Math.min(...s.cpuUs), median: quantile(s.cpuUs, 0.5), max: Math.max(...s.cpuUs) },
        [`clues_${kb}k`]: total,
        [`wholeShare_${kb}k`]: +(s.whole / total).toFixed(4),
        [`degradedShare_${kb}k`]: +((s.signature + s.pointer) / total).toFixed(4),
        [`signatureShare_${kb}k`]: +(s.signature / total).toFixed(4),
        [`pointerShare_${kb}k`]: +(s.pointer / total).toFixed(4),
        [`fragmentsDegraded_${kb}k`]: s.fragmentsDegraded,
        [`bytesPerPackP50_${kb}k`]: quantile(s.used, 0.5),
      });
      const slow = slowest.get(budget)!;
      const sameCohort = s.ms.filter((_, i) => cohorts[Math.floor(i) % cohorts.length].key === slow.key);
      rows.push([`  slowest build at ${kb} KB`, `${slow.ms.toFixed(2)} ms in round ${slow.round} (${slow.key}; that cohort's median ${quantile(sameCohort, 0.5).toFixed(2)} ms)`]);
    }
    rows.push([`end-to-end query (warm, ${Math.min(E2E_SAMPLE, cohorts.length)} cohorts)`, `p50 ${quantile(e2e, 0.5).toFixed(1)} ms · p99 ${quantile(e2e, 0.99).toFixed(1)} ms (each reads the whole workspace log: ${logEvents} events)`]);
    const w = Math.max(...rows.map((r) => r[0].length));
    console.log(`bench:context — ${rounds} rounds over every cohort`);
    for (const [k, v] of rows) console.log(`${k.padEnd(w)}  ${v}`);
    console.log(
      JSON.stringify({
        bench: 'context',
        rounds,
        cohorts: cohorts.length,
        historyNodes: filed,
        materialsColdMs: Math.round(materialsMs),
        ...figures,
        e2eQueryP50Ms: +quantile(e2e, 0.5).toFixed(2),
        e2eQueryP99Ms: +quantile(e2e, 0.99).toFixed(2),
        load: { start: loadAtStart, end: loadAverage() },
      }),
    );
  } finally {
    await ledger.close();
    await closeSharedExtractPool();
    fixture.cleanup();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
