import { canonicalJson } from '../../src/events/canonical-json';
import type { RecordedEvent } from '../../src/events/envelope';
import { leanReviewViewFold, reviewViewFold } from '../../src/readmodels/queries/review-fold';
import { verdictView } from '../../src/readmodels/queries/verdict';
import { verdictOfPr } from '../../src/review/pr-verdict';
import { verdictStanding, withStanding } from '../../src/review/provisional';
import { RULES_V1 } from '../../src/rules/rules';

function mulberry32(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const V2 = { ...RULES_V1, rulesVersion: 'v2', verdict: { blockThreshold: 0.4, priorities: { ...RULES_V1.verdict.priorities, P2: { atOrAboveThreshold: 'Hold' as const, belowThreshold: 'Ship' as const } } } };

/** Random PR histories: nodes (with shared fingerprints), closes, forged double closes, new rounds, rules changes. */
function history(rnd: () => number, length: number, fingerprints = 8, newRounds = true, p0Share = 0.25): RecordedEvent[] {
  const out: RecordedEvent[] = [];
  let pos = 0;
  let nodes = 0;
  let round = 1;
  const push = (streamId: string, type: string, data: unknown) => out.push({ eventId: `e${pos}`, type, schemaVersion: 1, data, metadata: {} as any, streamId, streamRevision: pos, globalPosition: ++pos });
  push('pr-r-1', 'ReviewRequested', { repoId: 'r', prNumber: 1, baseSha: 'b'.repeat(40), headSha: '1'.repeat(40), level: 'balanced', roster: ['engineer'], rulesVersion: 'v1', requestedBy: 'user:u', role: 'member' });
  for (let i = 0; i < length; i++) {
    const r = rnd();
    if (r < 0.55 || nodes === 0 || (!newRounds && r >= 0.9)) {
      nodes++;
      push('pr-r-1', 'ReviewNodeFiled', {
        nodeId: `n${nodes}`,
        round,
        headSha: String(round).repeat(40).slice(0, 40),
        fingerprint: `f${Math.floor(rnd() * fingerprints)}`,
        role: 'member',
        node: { kind: 'bug', priority: rnd() < p0Share ? 'P0' : ['P1', 'P2', 'P3'][Math.floor(rnd() * 3)], triage: {}, confidence: Math.round(rnd() * 100) / 100, title: 't', body: 'b', reviewer: { principal: `agent:a${Math.floor(rnd() * 3)}`, brief: 'engineer' } },
      });
    } else if (r < 0.85) {
      push('pr-r-1', rnd() < 0.5 ? 'ReviewNodeDismissed' : 'ReviewNodeResolved', { nodeId: `n${1 + Math.floor(rnd() * nodes)}`, by: 'user:u', role: 'member', reason: 'x', fingerprint: 'f' });
    } else if (r < 0.9) {
      push('pr-r-1', 'ReviewNodeConfirmed', { nodeId: `n${1 + Math.floor(rnd() * nodes)}`, by: 'agent:a1', role: 'member' });
    } else if (r < 0.94) {
      round++;
      push('pr-r-1', 'ReviewRoundStarted', { round, baseSha: 'b'.repeat(40), headSha: String(round % 10).repeat(40), requestedBy: 'user:u', role: 'member' });
    } else if (r < 0.97) {
      push('workspace', 'RulesVersionActivated', { rulesVersion: rnd() < 0.5 ? 'v2' : 'v1', document: rnd() < 0.5 ? V2 : RULES_V1 });
    } else {
      push('pr-r-1', 'ReviewComputed', { baseSha: 'b'.repeat(40), headSha: String(round % 10).repeat(40), apiContract: { status: rnd() < 0.5 ? 'pass' : 'partial', specs: [], changes: [] }, visual: { status: 'pass', snapshots: [] } });
    }
  }
  return out;
}

describe('the incremental verdict equals the verdict folded from scratch', () => {
  test('after every event of 300 random histories, under changing rules', () => {
    const rnd = mulberry32(11);
    let compared = 0;
    for (let h = 0; h < 300; h++) {
      const fold = reviewViewFold();
      let s = fold.initialState();
      for (const e of history(rnd, 60)) {
        s = fold.evolve(s, e);
        const incremental = verdictView(s);
        if (!incremental.exists) continue;
        const { exists: _e, status: _s, finalized: _f, ...v } = incremental;
        expect(canonicalJson(v)).toBe(canonicalJson(withStanding(verdictOfPr(s.pr, s.rules), verdictStanding(s.pr))));
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(10_000);
  });

  test('with hundreds of deciding defects (the listing scans the round instead of enumerating defects)', () => {
    const rnd = mulberry32(12);
    let manyDeciding = 0;
    for (let h = 0; h < 2; h++) {
      const fold = reviewViewFold();
      let s = fold.initialState();
      let i = 0;
      for (const e of history(rnd, 3600, 5000, false, 0.6)) {
        s = fold.evolve(s, e);
        // Every 3rd event: each comparison refolds ~1,000 nodes from scratch.
        if (i++ % 3 !== 0) continue;
        const incremental = verdictView(s);
        if (!incremental.exists) continue;
        const { exists: _e, status: _s, finalized: _f, ...v } = incremental;
        expect(canonicalJson(v)).toBe(canonicalJson(withStanding(verdictOfPr(s.pr, s.rules), verdictStanding(s.pr))));
        if (v.decidingCount > 160 && v.findingsVerdict !== 'Ship') manyDeciding++;
      }
    }
    expect(manyDeciding).toBeGreaterThan(100);
  }, 120_000);
});

describe('the verdict index built on first read equals the one maintained from the first event', () => {
  test('300 random histories, read late and at random points, under changing rules and rounds', () => {
    const rnd = mulberry32(13);
    let compared = 0;
    for (let h = 0; h < 300; h++) {
      const fold = reviewViewFold();
      // Read after every event: the index exists from the first read on and is maintained event by event.
      let eager = fold.initialState();
      // Read at a few random points only: the index is built from the PR state at each first read.
      let late = fold.initialState();
      const events = history(rnd, 80);
      events.forEach((e, i) => {
        eager = fold.evolve(eager, e);
        const expected = canonicalJson(verdictView(eager));
        late = fold.evolve(late, e);
        if (i === events.length - 1 || rnd() < 0.05) {
          expect(canonicalJson(verdictView(late))).toBe(expected);
          compared++;
          // Sometimes folded on from a snapshot taken with its index built (the index is not in it: built again at the next read).
          if (rnd() < 0.5) late = JSON.parse(canonicalJson(late));
        }
      });
      expect(canonicalJson(late.pr)).toBe(canonicalJson(eager.pr));
    }
    expect(compared).toBeGreaterThan(1_000);
  });

  test('the lean fold read once at the end agrees with the full fold read after every event', () => {
    const rnd = mulberry32(14);
    for (let h = 0; h < 100; h++) {
      const full = reviewViewFold();
      const lean = leanReviewViewFold();
      let f = full.initialState();
      let l = lean.initialState();
      for (const e of history(rnd, 120)) {
        f = full.evolve(f, e);
        verdictView(f);
        l = lean.evolve(l, e);
      }
      expect(canonicalJson(verdictView(l))).toBe(canonicalJson(verdictView(f)));
    }
  });
});

describe('suppression facts flag nodes filed after them (previouslyDismissed)', () => {
  test('random facts and nodes: each node gets the first fact with its fingerprint recorded before it', () => {
    const rnd = mulberry32(15);
    let flagged = 0;
    for (let h = 0; h < 50; h++) {
      const fold = reviewViewFold();
      let s = fold.initialState();
      const firstFact = new Map<string, { nodeId: string; repoId?: string; prNumber?: number; at: number }>();
      const expected: Record<string, unknown> = {};
      let pos = 0;
      const at = (streamId: string, type: string, data: unknown): RecordedEvent => ({ eventId: `e${pos}`, type, schemaVersion: 1, data, metadata: {} as any, streamId, streamRevision: pos, globalPosition: ++pos });
      s = fold.evolve(s, at('pr-r-1', 'ReviewRequested', { repoId: 'r', prNumber: 1, baseSha: 'b'.repeat(40), headSha: '1'.repeat(40), level: 'balanced', roster: ['engineer'], rulesVersion: 'v1', requestedBy: 'user:u', role: 'member' }));
      for (let i = 0; i < 60; i++) {
        const fingerprint = `${'f'.repeat(60)}${Math.floor(rnd() * 6)}`;
        if (rnd() < 0.3) {
          const fact = { fingerprint, nodeId: `old${i}`, repoId: 'r', prNumber: 7, reason: 'noise', confidence: 'low' };
          s = fold.evolve(s, at('workspace', 'SuppressionFactRecorded', fact));
          if (!firstFact.has(fingerprint)) firstFact.set(fingerprint, { nodeId: fact.nodeId, repoId: 'r', prNumber: 7, at: pos });
        } else {
          const nodeId = `n${i}`;
          s = fold.evolve(s, at('pr-r-1', 'ReviewNodeFiled', { nodeId, round: 1, headSha: '1'.repeat(40), fingerprint, role: 'member', node: { kind: 'bug', priority: 'P2', triage: {}, confidence: 0.5, title: 't', body: 'b', reviewer: { principal: 'agent:a', brief: 'engineer' } } }));
          const fact = firstFact.get(fingerprint);
          if (fact) {
            expected[nodeId] = { ...fact };
            flagged++;
          }
        }
      }
      expect(canonicalJson(s.previouslyDismissed)).toBe(canonicalJson(expected));
    }
    expect(flagged).toBeGreaterThan(500);
  });
});
