import * as fs from 'node:fs';
import { readReviewDiff, readReviewFileLines, reviewDiffInput, LARGE_FILE_LINES } from '../../src/readmodels/queries/review-diff';
import type { Ledger } from '../../src/ledger';
import { newUuidV7 } from '../../src/events/ids';
import { methodTable } from '../../src/rpc/methods';
import { GitFixture } from '../support/git-fixture';
import { requestedReview, type RequestedReview } from '../support/review-fixture';

const AGENT = { principal: 'agent:rev1' as const, role: 'member' as const };

/**
 * `review_studio.reviewDiff` over a real computation of a real git repository: the hunks of each cohort
 * in the computed reading order (callee first), bounded pages resumed by cursor, collapsed files.
 */
describe('reviewDiff: the code under review in reading order', () => {
  let review: RequestedReview;
  let ledger: Ledger;
  let repo: GitFixture;
  let baseSha: string;
  let headSha: string;
  const ws = 'diff';
  const target = { repoId: 'shop', prNumber: 5 };
  const run = (cmd: string, payload: Record<string, unknown>) => ledger.run(cmd, ws, { ...AGENT, idempotencyKey: newUuidV7() }, { ...target, ...payload });
  const diff = async (input: Record<string, unknown> = {}) => readReviewDiff(await ledger.workspace(ws), reviewDiffInput.parse({ ...target, ...input }));

  beforeAll(async () => {
    review = await requestedReview({
      workspaceId: ws,
      target,
      by: AGENT,
      prefix: 'rl-diff-',
      base: (r) => r.write('src/big.ts', Array.from({ length: 10 }, (_, i) => `export const v${i} = ${i};`).join('\n') + '\n'),
      head: (r) => r.write('src/big.ts', Array.from({ length: LARGE_FILE_LINES + 10 }, (_, i) => `export const v${i} = ${i * 2};`).join('\n') + '\n'),
    });
    ({ repo, baseSha, headSha } = review);
    ledger = review.fx.ledger;
  });
  afterAll(() => review.cleanup());

  it('is a viewer read registered as review_studio.reviewDiff and review_studio.reviewFileLines', () => {
    const t = methodTable();
    expect(t.get('review_studio.reviewDiff')).toMatchObject({ kind: 'read', access: { minRole: 'viewer' } });
    expect(t.get('review_studio.reviewFileLines')).toMatchObject({ kind: 'read', access: { minRole: 'viewer' } });
  });

  it('says "not computed" before the computation', async () => {
    expect(await diff()).toMatchObject({ computed: false, cohorts: [], nextCursor: null });
  });

  it('serves each cohort\'s hunks in reading order, callee (price) before caller (total), each hunk once', async () => {
    await run('computeReview', {});
    const page = await diff();
    expect(page).toMatchObject({ computed: true, baseSha, headSha, nextCursor: null });
    const entries = page.cohorts.flatMap((c) => c.entries);
    const priceAt = entries.findIndex((e) => e.path === 'src/price.ts' && e.hunks.length);
    const cartAt = entries.findIndex((e) => e.path === 'src/cart.ts' && e.hunks.length);
    expect(priceAt).toBeGreaterThanOrEqual(0);
    expect(cartAt).toBeGreaterThanOrEqual(0);
    const sameCohort = page.cohorts.find((c) => c.entries.some((e) => e.path === 'src/price.ts'))!.entries.some((e) => e.path === 'src/cart.ts');
    if (sameCohort) expect(priceAt).toBeLessThan(cartAt);
    const price = entries[priceAt];
    expect(price.symbolId).toBeDefined();
    expect(price.hunks[0].lines).toContain('+  return Math.round(qty * unit * 100) / 100;');
    expect(price.hunks[0].lines).toContain('-  return qty * unit;');
    expect(price.hunks[0].header).toMatch(/^@@ -1,3 \+1,3 @@/);
    // No hunk is shown twice within a cohort.
    for (const c of page.cohorts) {
      const seen = c.entries.flatMap((e) => e.hunks.map((h) => `${e.path}:${h.oldStart}:${h.newStart}`));
      expect(new Set(seen).size).toBe(seen.length);
    }
  });

  it('collapses a large file with the reason, sending no hunk for them', async () => {
    const entries = (await diff()).cohorts.flatMap((c) => c.entries);
    const big = entries.find((e) => e.path === 'src/big.ts');
    expect(big?.collapsed?.reason).toBe(`large diff: ${9 + LARGE_FILE_LINES + 9} changed lines (over ${LARGE_FILE_LINES})`);
    expect(big?.hunks).toEqual([]);
  });

  it('pages within maxBytes and resumes from the cursor to the same entries as one big page', async () => {
    const whole = (await diff()).cohorts.flatMap((c) => c.entries.map((e) => `${c.key}|${e.fragmentId ?? e.path}`));
    const paged: string[] = [];
    let cursor: string | null | undefined;
    let pages = 0;
    do {
      const p = await diff({ maxBytes: 4096, ...(cursor ? { cursor } : {}) });
      expect(p.computed).toBe(true);
      if (!p.computed) break;
      expect(p.bytes).toBeLessThanOrEqual(4096);
      for (const c of p.cohorts) for (const e of c.entries) paged.push(`${c.key}|${e.fragmentId ?? e.path}`);
      cursor = p.nextCursor;
      pages++;
    } while (cursor && pages < 50);
    expect(paged).toEqual(whole);
  });

  it('refuses a malformed cursor and one made for another head', async () => {
    await expect(diff({ cursor: 'nonsense' })).rejects.toMatchObject({ code: 'invalid_cursor' });
    await expect(diff({ cursor: 'v1.0000000000000000.0.1' })).rejects.toMatchObject({ code: 'cursor_stale' });
  });

  it('expands context from changed files only, at base or head', async () => {
    const w = await ledger.workspace(ws);
    const head = await readReviewFileLines(w, { ...target, path: 'src/cart.ts', side: 'head', startLine: 4, endLine: 6 });
    expect(head.lines).toEqual(['  let sum = 0;', '  for (const [q, u] of lines) sum += price(q, u) * 2;', '  return sum;']);
    const base = await readReviewFileLines(w, { ...target, path: 'src/cart.ts', side: 'base', startLine: 5, endLine: 5 });
    expect(base.lines).toEqual(['  for (const [q, u] of lines) sum += price(q, u);']);
    await expect(readReviewFileLines(w, { ...target, path: 'package.json', side: 'head', startLine: 1, endLine: 2 })).rejects.toMatchObject({ code: 'file_not_changed' });
  });

  it('serves a diff it has read again without git (base..head is immutable); another context width reads the clone', async () => {
    const before = await diff();
    const moved = `${repo.dir}-away`;
    fs.renameSync(repo.dir, moved);
    try {
      // The work tree is gone: the cached numstat and hunks answer, identical to the read that filled them.
      expect(await diff()).toEqual(before);
      await expect(diff({ context: 7 })).rejects.toThrow();
    } finally {
      fs.renameSync(moved, repo.dir);
    }
    const wider = await diff({ context: 7 });
    expect(wider.context).toBe(7);
    expect(wider.cohorts.flatMap((c) => c.entries).length).toBeGreaterThan(0);
  });
});
