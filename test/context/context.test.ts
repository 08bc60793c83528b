// pixelmatch (visual axis, reached through the compute pipeline) is ESM-only: load the real source as CommonJS under jest.
import '../axes/visual/support/esm';
import type { ContextPack } from '../../src/context/pack-types';
import { execFile } from 'node:child_process';
import * as path from 'node:path';
import { headMaterials } from '../../src/context/materials';
import { methodTable } from '../../src/rpc/methods';
import { cohortContextQuery } from '../../src/readmodels/queries/cohort-context';
import { reviewMetricsQuery } from '../../src/readmodels/queries/review-metrics';
import { foldQuery } from '../../src/readmodels/queries/run-query';
import { answerFromReadModel, readModelHost } from '../../src/readmodels/stored/registry';
import { canonicalJson } from '../../src/events/canonical-json';
import type { QueryDefinition } from '../../src/readmodels/queries/query';
import { WatchHub, type WatchUpdate } from '../../src/rpc/watch';
import { AGENT, contextFixture, REPO } from './support';

jest.setTimeout(120_000);

const BIN = path.join(__dirname, '..', '..', 'bin', 'review-ledger.js');

type Cohort = { key: string; files: string[] };

describe('context packs on a real repository', () => {
  let f: Awaited<ReturnType<typeof contextFixture>>;
  let cohort: Cohort;
  const pack = (budgetBytes?: number) => f.query<ContextPack>('cohortContext', { repoId: REPO, prNumber: 2, cohortKey: cohort.key, ...(budgetBytes ? { budgetBytes } : {}) });

  beforeAll(async () => {
    f = await contextFixture();
    // PR 1: a reviewer files a node on scale (anchored to its symbol id); a human dismisses it.
    await f.run('requestReview', { repoId: REPO, prNumber: 1, baseSha: f.base, headSha: f.head1 }, AGENT);
    await f.run('computeReview', { repoId: REPO, prNumber: 1 }, AGENT);
    const filed = await f.run(
      'addReviewNode',
      {
        repoId: REPO,
        prNumber: 1,
        node: {
          kind: 'bug',
          priority: 'P2',
          triage: { category: 'correctness', severity: 'medium', effort: 'small' },
          anchor: { path: 'src/math.ts', startLine: 3, endLine: 5, symbolId: 'src/math.ts#scale' },
          confidence: 0.6,
          title: 'scale may overflow the clamp range',
          body: 'Tripling before clamping loses the sign of large negatives.',
          brief: 'engineer',
        },
      },
      AGENT,
    );
    const nodeId = (filed.response.result as { nodeId: string }).nodeId;
    await f.run('dismissNode', { repoId: REPO, prNumber: 1, nodeId, reason: 'clamp bounds are checked upstream' });
    // Anchored by lines only: inside scale's recorded fragment at PR 1's head, so it is history of scale too;
    // one on the import line (no definition there) attaches to nothing.
    const byLines = { kind: 'question', priority: 'P3', triage: { category: 'maintainability', severity: 'low', effort: 'trivial' }, confidence: 0.5, body: '', brief: 'engineer' };
    const second = await f.run('addReviewNode', { repoId: REPO, prNumber: 1, node: { ...byLines, title: 'why triple?', anchor: { path: 'src/math.ts', startLine: 4, endLine: 4 } } }, AGENT);
    await f.run('resolveNode', { repoId: REPO, prNumber: 1, nodeId: (second.response.result as { nodeId: string }).nodeId, reason: 'explained in the PR description' });
    await f.run('addReviewNode', { repoId: REPO, prNumber: 1, node: { ...byLines, title: 'import order', anchor: { path: 'src/math.ts', startLine: 1, endLine: 1 } } }, AGENT);
    // PR 2 changes scale again.
    await f.run('requestReview', { repoId: REPO, prNumber: 2, baseSha: f.base, headSha: f.head2 }, AGENT);
    await f.run('computeReview', { repoId: REPO, prNumber: 2 }, AGENT);
    const computed = (await f.lf.events()).filter((e) => e.type === 'ReviewComputed' && e.streamId === `pr-${REPO}-2`).pop()!;
    cohort = (computed.data as { cohorts: Cohort[] }).cohorts.find((c) => c.files.includes('src/math.ts'))!;
    expect(cohort).toBeDefined();
  });
  afterAll(() => f.cleanup());

  it("holds the cohort's own diff with symbol ids, its caller's definition and the test that exercises it", async () => {
    const p = await pack();
    const frag = p.fragments.find((x) => x.symbolId === 'src/math.ts#scale')!;
    expect(frag.diff).toContain('+  const step0 = x * 2;');
    const caller = p.clues.find((c) => c.relation === 'caller' && c.kind === 'link' && c.ref === 'src/report.ts#buildReport')!;
    expect(caller.form).toBe('whole');
    expect(caller.content).toContain('const scaled = values.map((v) => scale(v));');
    const test = p.clues.find((c) => c.relation === 'caller' && c.kind === 'case' && c.ref === 'test/math.test.ts')!;
    expect(test.content).toContain('expect(scale(2)).toBe(4);');
    const callee = p.clues.find((c) => c.relation === 'callee' && c.ref === 'src/clamp.ts#clamp')!;
    expect(callee.form).toBe('whole');
    expect(callee.content).toContain('return Math.min(upper, Math.max(lower, value));');
    const dep = p.clues.find((c) => c.relation === 'project' && c.kind === 'project' && c.ref === 'package.json')!;
    expect(dep.content).toContain('left-pad: upgraded 1.0.0 → 2.0.0 (major)');
    const spec = p.clues.find((c) => c.kind === 'spec')!;
    expect(spec).toMatchObject({ relation: 'project', ref: 'openapi.yaml', form: 'whole' });
    expect(spec.content).toMatch(/^breaking .*\/report/m);
    const doc = p.clues.find((c) => c.kind === 'doc')!;
    expect(doc).toMatchObject({ relation: 'self', ref: 'docs/math.md:L3' });
    expect(p.truncated).toEqual([]);
    expect(p.usedBytes).toBeLessThanOrEqual(p.budgetBytes);
  });

  it('never attaches a same-name function elsewhere as a caller, and leaves name-only identities unknown', async () => {
    const p = await pack();
    // The graph does see those sites: one resolved to the other `scale`, one matched by name only.
    const m = await headMaterials(await f.lf.ledger.workspace(f.ws), REPO, f.base, f.head2);
    expect(m.graph.outgoingOf('src/legacy-user.ts#useLegacy').map((e) => e.to)).toContain('src/legacy.ts#scale');
    expect(m.nameMatchesByFrom.get('src/global-user.js#guessCaller')).toContainEqual({ name: 'scale', candidates: 2 });
    const refs = p.clues.map((c) => c.ref);
    expect(refs.some((r) => r.includes('legacy'))).toBe(false);
    expect(refs.some((r) => r.includes('global-user'))).toBe(false);
    // roundHalf is called without an import: only its name matches src/other.ts, so no callee clue.
    expect(refs).not.toContain('src/other.ts#roundHalf');
    expect(p.unresolved).toContainEqual({ from: 'src/math.ts#scale', name: 'roundHalf', candidates: 1 });
  });

  it('shows the node dismissed in an earlier PR on the same symbol as a history clue with its outcome', async () => {
    const p = await pack();
    const history = p.clues.filter((c) => c.kind === 'history');
    expect(history.map((c) => c.ref)).toEqual([`pr-${REPO}-1/n1`, `pr-${REPO}-1/n2`]);
    expect(history[1].content).toContain('resolved by user:owner: explained in the PR description');
    expect(history[1].content).toContain('why triple?');
    expect(history[0]).toMatchObject({ relation: 'self', ref: `pr-${REPO}-1/n1`, form: 'whole' });
    expect(history[0].content).toContain('dismissed by user:owner: clamp bounds are checked upstream');
    expect(history[0].content).toContain('scale may overflow the clamp range');
  });

  it('answers the pack and the metrics from the history read model exactly as the fold of the whole log, as-of included', async () => {
    const ws = await f.lf.ledger.workspace(f.ws);
    const head = await ws.store.headPosition();
    const pr2Computed = (await f.lf.events()).filter((e) => e.type === 'ReviewComputed' && e.streamId === `pr-${REPO}-2`).pop()!;
    const inputs = [
      { q: cohortContextQuery, input: cohortContextQuery.input.parse({ repoId: REPO, prNumber: 2, cohortKey: cohort.key, budgetBytes: 4096 }) },
      { q: reviewMetricsQuery, input: reviewMetricsQuery.input.parse({ repoId: REPO, prNumber: 2 }) },
      { q: reviewMetricsQuery, input: reviewMetricsQuery.input.parse({ repoId: REPO, prNumber: 1 }) },
    ];
    // Until its first build is promoted the query is answered by the fold (never a half-built model);
    // this test is about the model's answers, so it waits for the model.
    await readModelHost(ws)!.settle();
    for (const { q, input } of inputs) {
      for (const until of [head, pr2Computed.globalPosition, pr2Computed.globalPosition - 1]) {
        const served = await answerFromReadModel(q as never, ws, input, until);
        expect(readModelHost(ws)!.slot('history')?.ready).toBe(true);
        expect(served).not.toBeNull();
        expect({ q: q.name, until, value: served!.value }).toEqual({ q: q.name, until, value: (await foldQuery(q as never, ws, input, until)).value });
      }
    }
    const p = (await answerFromReadModel(cohortContextQuery, ws, inputs[0].input, head))!.value as ContextPack;
    expect(p.clues.filter((c) => c.kind === 'history').map((c) => c.ref)).toEqual([`pr-${REPO}-1/n1`, `pr-${REPO}-1/n2`]);
  });

  it('degrades callees to pointers under a 2 KB budget and lists every degraded clue in truncated', async () => {
    const p = await pack(2048);
    const callee = p.clues.find((c) => c.relation === 'callee' && c.ref === 'src/clamp.ts#clamp')!;
    expect(callee.form).toBe('pointer');
    expect(callee.content).toBeUndefined();
    expect(p.truncated).toContainEqual(expect.objectContaining({ ref: 'src/clamp.ts#clamp', what: 'clue', relation: 'callee', form: 'pointer' }));
    // Nothing silently dropped: every clue of the full pack is still there, and each non-whole one is listed.
    const full = await pack();
    expect(p.clues.map((c) => c.ref).sort()).toEqual(full.clues.map((c) => c.ref).sort());
    for (const c of p.clues.filter((x) => x.form !== 'whole')) expect(p.truncated.map((t) => t.ref)).toContain(c.ref);
    // The more certain facts keep more: the own diff and the history stay whole.
    expect(p.fragments.find((x) => x.symbolId === 'src/math.ts#scale')!.diff).toBeDefined();
    expect(p.clues.filter((c) => c.kind === 'history').map((c) => c.form)).toEqual(['whole', 'whole']);
    expect(p.usedBytes).toBeLessThanOrEqual(2048);
  });

  it('at every budget: within budget, nothing dropped, and no degraded fact could have been given more from the unused budget', async () => {
    const full = await pack();
    const bytes = (x: string | undefined) => Buffer.byteLength(x ?? '');
    let previousUsed = 0;
    for (let budget = 256; budget <= 8192; budget += 128) {
      const p = await pack(budget);
      if (!p.overBudget) expect(p.usedBytes).toBeLessThanOrEqual(budget);
      expect(p.clues.map((c) => c.ref)).toEqual(full.clues.map((c) => c.ref));
      expect(p.truncated.filter((t) => t.what === 'clue')).toHaveLength(p.counts.signature + p.counts.pointer);
      const unused = budget - p.usedBytes;
      for (const t of p.truncated.filter((x) => x.what === 'clue')) {
        const clue = p.clues.find((c) => c.ref === t.ref && c.relation === t.relation && c.kind === t.kind)!;
        const held = bytes(clue.ref) + bytes(clue.content);
        expect(t.wholeBytes - held).toBeGreaterThan(unused);
      }
      // A larger budget never hands over less.
      expect(p.usedBytes).toBeGreaterThanOrEqual(previousUsed);
      previousUsed = p.usedBytes;
    }
  });

  it('prints the pack and the review metrics from the CLI', async () => {
    const cli = (...args: string[]) =>
      new Promise<{ stdout: string; stderr: string; code: number }>((resolve) =>
        execFile(process.execPath, [BIN, '--data-dir', f.lf.dataDir, ...args], { env: { ...process.env, REVIEW_LEDGER_FROM_SOURCE: '1' } }, (err, stdout, stderr) =>
          resolve({ stdout, stderr, code: err ? ((err as { code?: number }).code ?? 1) : 0 }),
        ),
      );
    const target = ['--workspace', f.ws, '--repo', REPO, '--pr', '2'];
    const ctx = await cli('context', ...target, '--cohort', cohort.key, '--budget', '2048');
    expect(ctx.code).toBe(0);
    expect(ctx.stdout).toContain('-- callee/link src/clamp.ts#clamp [pointer]');
    expect(ctx.stdout).toMatch(/truncated \(\d+\): .*src\/clamp\.ts#clamp → pointer/);
    const metrics = await cli('metrics', ...target);
    expect(metrics.code).toBe(0);
    expect(metrics.stdout).toMatch(/files: 3 changed · 0 filtered .* 3 under review · 2 target file/);
    expect(metrics.stdout).toMatch(/cohorts: 2 \(1 semantic, 1 by path\) · within one loop per target file \(1\)/);
    expect(metrics.stdout).toMatch(/progress: 0 clean · 0 partial · 2 unreviewed/);
  });

  it('is served over JSON-RPC as review_studio.cohortContext, with review_studio.reviewMetrics and markCohortReviewed', () => {
    const table = methodTable();
    expect(table.get('review_studio.cohortContext')).toMatchObject({ kind: 'query', access: { minRole: 'viewer' } });
    expect(table.get('review_studio.reviewMetrics')).toMatchObject({ kind: 'query' });
    expect(table.get('review_studio.cohortProgress')).toMatchObject({ kind: 'query' });
    expect(table.get('markCohortReviewed')).toMatchObject({ kind: 'command', access: { minRole: 'member' } });
  });

  it('refuses an unknown cohort key and a malformed budget, naming the field', async () => {
    await expect(f.query('cohortContext', { repoId: REPO, prNumber: 2, cohortKey: 'c-00000000deadbeef' })).rejects.toMatchObject({ code: 'cohort_not_found' });
    await expect(f.query('cohortContext', { repoId: REPO, prNumber: 2, cohortKey: cohort.key, budgetBytes: 10 })).rejects.toThrow(/budgetBytes/);
  });

  // Last: it adds a node on PR 1 and marks a cohort of PR 2 reviewed.
  it('watches the pack and the metrics from the history read model: the snapshot and every update equal the fold at their positions, and the log is never folded', async () => {
    const ws = await f.lf.ledger.workspace(f.ws);
    const hub = new WatchHub();
    // The queries themselves, except that folding them (the whole log) fails.
    const unfoldable = <Q extends QueryDefinition>(q: Q): Q => ({ ...q, fold: () => Promise.reject(new Error(`${q.name}: folded the log`)) });
    const watched = [
      { q: cohortContextQuery as QueryDefinition, input: cohortContextQuery.input.parse({ repoId: REPO, prNumber: 2, cohortKey: cohort.key, budgetBytes: 4096 }) },
      { q: reviewMetricsQuery as QueryDefinition, input: reviewMetricsQuery.input.parse({ repoId: REPO, prNumber: 2 }) },
    ].map(({ q, input }) => ({ q, input, updates: [] as WatchUpdate[] }));
    const failures: unknown[] = [];
    const started = [];
    try {
      for (const w of watched) {
        const start = await hub.watch(ws, unfoldable(w.q), w.input, undefined, { send: (u) => w.updates.push(u), congested: () => false, onDrain: (cb) => cb(), fail: (err) => failures.push(err) });
        start.watcher.start();
        started.push(start);
        expect(JSON.parse(start.snapshot!.valueJson)).toEqual((await foldQuery(w.q, ws, w.input, start.snapshot!.position)).value);
      }
      // A new node on scale in PR 1, dismissed: one more history clue in PR 2's pack (and its metrics).
      const filed = await f.run('addReviewNode', { repoId: REPO, prNumber: 1, node: { kind: 'bug', priority: 'P3', triage: { category: 'correctness', severity: 'low', effort: 'small' }, anchor: { path: 'src/math.ts', startLine: 3, endLine: 5, symbolId: 'src/math.ts#scale' }, confidence: 0.5, title: 'scale rounds twice', body: 'b', brief: 'engineer' } }, AGENT);
      await f.run('dismissNode', { repoId: REPO, prNumber: 1, nodeId: (filed.response.result as { nodeId: string }).nodeId, reason: 'rounding is intended' });
      // PR 2's cohort reviewed: its progress, part of the metrics.
      await f.run('markCohortReviewed', { repoId: REPO, prNumber: 2, cohortKey: cohort.key, brief: 'engineer', status: 'complete' });
      const head = await ws.store.headPosition();
      for (const w of watched) {
        const final = canonicalJson((await foldQuery(w.q, ws, w.input, head)).value);
        for (let t = 0; !(w.updates.length && w.updates[w.updates.length - 1].valueJson === final); t++) {
          if (t > 500 || failures.length) throw new Error(`${w.q.name}: no update to the current answer (${failures.map(String).join('; ')}; ${w.updates.length} updates)`);
          await new Promise((r) => setTimeout(r, 20));
        }
        for (const u of w.updates) expect({ q: w.q.name, position: u.position, value: JSON.parse(u.valueJson) }).toEqual({ q: w.q.name, position: u.position, value: (await foldQuery(w.q, ws, w.input, u.position)).value });
      }
      expect(JSON.parse(watched[0].updates[watched[0].updates.length - 1].valueJson).clues.filter((c: { kind: string }) => c.kind === 'history')).toHaveLength(3);
      expect(failures).toEqual([]);
    } finally {
      for (const s of started) s.watcher.close();
      hub.close();
    }
  });
});
