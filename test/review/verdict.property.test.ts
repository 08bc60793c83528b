import type { AxisName, AxisStatus } from '../../src/axes/types';
import { AXIS_ORDER, AxisReport } from '../../src/review/axes';
import { computeVerdict, VerdictNode } from '../../src/review/verdict';
import { RULES_V1 } from '../../src/rules/rules';

/** A small seeded PRNG: property runs are random but reproducible (the seed is in the test name). */
function mulberry32(seed: number) {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const STATUSES: AxisStatus[] = ['pass', 'warn', 'fail', 'partial', 'unavailable', 'not_applicable'];
const PRIORITIES = ['P0', 'P1', 'P2', 'P3'] as const;
const RANK = { Ship: 0, Hold: 1, Block: 2 } as const;
const gated = new Set<string>(RULES_V1.axes.gated);

function randomNodes(rnd: () => number): VerdictNode[] {
  const n = Math.floor(rnd() * 12);
  const out: VerdictNode[] = [];
  for (let i = 0; i < n; i++) {
    const dup = out.length > 0 && rnd() < 0.15 ? out[Math.floor(rnd() * out.length)] : undefined;
    out.push({
      nodeId: `n${i + 1}`,
      priority: dup ? PRIORITIES[Math.max(PRIORITIES.indexOf(dup.priority), Math.floor(rnd() * 4))] : PRIORITIES[Math.floor(rnd() * 4)],
      confidence: Math.round(rnd() * 1000) / 1000,
      duplicateOf: dup ? (dup.duplicateOf ?? dup.nodeId) : undefined,
    });
  }
  return out;
}

function randomAxes(rnd: () => number, statuses: AxisStatus[] = STATUSES): AxisReport[] {
  return AXIS_ORDER.map((axis: AxisName) => ({ axis, status: statuses[Math.floor(rnd() * statuses.length)], gated: gated.has(axis), source: 'compute' as const }));
}

const passing = (): AxisReport[] => AXIS_ORDER.map((axis) => ({ axis, status: 'pass' as const, gated: gated.has(axis), source: 'compute' as const }));
const RUNS = 2000;

describe('verdict properties (SPEC §7, rules v1)', () => {
  test('an axis never lowers the verdict: with any axes it is at least the findings verdict', () => {
    const rnd = mulberry32(1);
    for (let i = 0; i < RUNS; i++) {
      const nodes = randomNodes(rnd);
      const alone = computeVerdict(nodes, passing(), RULES_V1).verdict;
      const withAxes = computeVerdict(nodes, randomAxes(rnd), RULES_V1);
      expect(RANK[withAxes.verdict]).toBeGreaterThanOrEqual(RANK[alone]);
      expect(withAxes.findingsVerdict).toBe(alone);
    }
  });

  test('a live P0 with confidence ≥ 0.7 always blocks (canonical or duplicate)', () => {
    const rnd = mulberry32(2);
    for (let i = 0; i < RUNS; i++) {
      const nodes = randomNodes(rnd);
      const dupOf = nodes.length > 0 && rnd() < 0.5 ? nodes[Math.floor(rnd() * nodes.length)] : undefined;
      nodes.push({ nodeId: 'p0', priority: 'P0', confidence: 0.7 + rnd() * 0.3, duplicateOf: dupOf ? (dupOf.duplicateOf ?? dupOf.nodeId) : undefined });
      expect(computeVerdict(nodes, randomAxes(rnd), RULES_V1).verdict).toBe('Block');
    }
  });

  test('a failed gated axis always blocks, whatever the findings', () => {
    const rnd = mulberry32(3);
    for (let i = 0; i < RUNS; i++) {
      const axes = randomAxes(rnd);
      const name = rnd() < 0.5 ? 'apiContract' : 'visual';
      axes.find((a) => a.axis === name)!.status = 'fail';
      expect(computeVerdict(randomNodes(rnd), axes, RULES_V1).verdict).toBe('Block');
    }
  });

  test('a partial or unavailable gated axis never yields Ship', () => {
    const rnd = mulberry32(4);
    for (let i = 0; i < RUNS; i++) {
      const axes = randomAxes(rnd);
      const name = rnd() < 0.5 ? 'apiContract' : 'visual';
      axes.find((a) => a.axis === name)!.status = rnd() < 0.5 ? 'partial' : 'unavailable';
      expect(computeVerdict(randomNodes(rnd), axes, RULES_V1).verdict).not.toBe('Ship');
    }
  });

  test('a failed advisory (ungated) axis alone does not change a Ship', () => {
    const axes = passing();
    axes.find((a) => a.axis === 'security')!.status = 'fail';
    axes.find((a) => a.axis === 'performance')!.status = 'unavailable';
    expect(computeVerdict([{ nodeId: 'n1', priority: 'P3', confidence: 0.9 }], axes, RULES_V1).verdict).toBe('Ship');
  });

  test('removing the P0/P1 nodes of a Hold with all axes passing yields Ship', () => {
    const rnd = mulberry32(5);
    let holds = 0;
    for (let i = 0; i < RUNS; i++) {
      const nodes = randomNodes(rnd);
      const v = computeVerdict(nodes, passing(), RULES_V1);
      if (v.verdict !== 'Hold') continue;
      holds++;
      const removed = new Set(nodes.filter((n) => n.priority === 'P0' || n.priority === 'P1').map((n) => n.nodeId));
      const rest = nodes.filter((n) => !removed.has(n.nodeId) && !(n.duplicateOf && removed.has(n.duplicateOf)));
      expect(computeVerdict(rest, passing(), RULES_V1).verdict).toBe('Ship');
    }
    expect(holds).toBeGreaterThan(100);
  });

  test('the confidence is always in [0, 1] with 3 decimals', () => {
    const rnd = mulberry32(6);
    for (let i = 0; i < RUNS; i++) {
      const c = computeVerdict(randomNodes(rnd), randomAxes(rnd), RULES_V1).confidence;
      expect(c).toBeGreaterThanOrEqual(0);
      expect(c).toBeLessThanOrEqual(1);
      expect(Math.round(c * 1000) / 1000).toBe(c);
    }
  });

  test('the confidence falls when the contributing confidences diverge (same mean, wider spread)', () => {
    const rnd = mulberry32(7);
    for (let i = 0; i < RUNS; i++) {
      const priority = PRIORITIES[Math.floor(rnd() * 4)];
      const mean = 0.3 + rnd() * 0.4;
      const narrow = rnd() * 0.1;
      const wide = narrow + 0.05 + rnd() * 0.2;
      // Keep every confidence on the same side of the 0.7 threshold so the deciding set stays the same.
      const sameSide = (x: number) => (mean >= 0.7) === (x >= 0.7);
      const a = [mean - narrow, mean + narrow];
      const b = [mean - wide, mean + wide];
      if (![...a, ...b].every(sameSide)) continue;
      const mk = (cs: number[]) => cs.map((confidence, k) => ({ nodeId: `n${k}`, priority, confidence }));
      const agree = computeVerdict(mk(a), passing(), RULES_V1).confidence;
      const diverge = computeVerdict(mk(b), passing(), RULES_V1).confidence;
      expect(diverge).toBeLessThan(agree);
    }
  });

  test('rules v1 formula on a worked example: mean × (1 − population stddev), minus 0.25 per incomplete gated axis', () => {
    const nodes: VerdictNode[] = [
      { nodeId: 'n1', priority: 'P1', confidence: 0.9 },
      { nodeId: 'n2', priority: 'P1', confidence: 0.5 },
      { nodeId: 'n3', priority: 'P3', confidence: 0.1 }, // not deciding: Hold comes from the P1s
    ];
    const v = computeVerdict(nodes, passing(), RULES_V1);
    expect(v).toMatchObject({ verdict: 'Hold', decidingNodeIds: ['n1', 'n2'], confidence: 0.56 }); // 0.7 × (1 − 0.2)
    const axes = passing();
    axes.find((a) => a.axis === 'visual')!.status = 'unavailable';
    expect(computeVerdict(nodes, axes, RULES_V1).confidence).toBe(0.31);
    expect(computeVerdict([], passing(), RULES_V1)).toMatchObject({ verdict: 'Ship', confidence: 1 });
    axes.find((a) => a.axis === 'apiContract')!.status = 'partial';
    expect(computeVerdict([], axes, RULES_V1)).toMatchObject({ verdict: 'Hold', confidence: 0.5 });
  });

  test('agreeing duplicates raise the confidence; the defect still counts once', () => {
    const base: VerdictNode[] = [
      { nodeId: 'n1', priority: 'P1', confidence: 0.9 },
      { nodeId: 'n2', priority: 'P1', confidence: 0.5 },
    ];
    const withDup = [...base, { nodeId: 'n3', priority: 'P1' as const, confidence: 0.9, duplicateOf: 'n1' }];
    const a = computeVerdict(base, passing(), RULES_V1);
    const b = computeVerdict(withDup, passing(), RULES_V1);
    expect(b.decidingNodeIds).toEqual(['n1', 'n2']);
    expect(b.confidence).toBeGreaterThan(a.confidence);
  });

  test('a confident duplicate is not outvoted by a hesitant canonical: the defect asks for its strictest report', () => {
    const nodes: VerdictNode[] = [
      { nodeId: 'n1', priority: 'P0', confidence: 0.5 },
      { nodeId: 'n2', priority: 'P0', confidence: 0.95, duplicateOf: 'n1' },
    ];
    expect(computeVerdict(nodes, passing(), RULES_V1)).toMatchObject({ verdict: 'Block', decidingNodeIds: ['n1'], contributing: 2 });
  });
});

describe('verdict reasons cite only the deciding clause (rules v1)', () => {
  const node = (nodeId: string, priority: VerdictNode['priority'], confidence: number, duplicateOf?: string): VerdictNode => ({ nodeId, priority, confidence, duplicateOf });
  test('a P1 Hold cites "P1 → Hold", not the P0 clause that also maps to Hold', () => {
    expect(computeVerdict([node('n1', 'P1', 0.9), node('n2', 'P3', 0.9)], passing(), RULES_V1).reasons[0]).toBe('Hold from findings: n1 (rules v1: P1 → Hold)');
  });
  test('a hesitant P0 Hold cites "P0 below 0.7 → Hold"; with a P1 beside it, both', () => {
    expect(computeVerdict([node('n1', 'P0', 0.5)], passing(), RULES_V1).reasons[0]).toBe('Hold from findings: n1 (rules v1: P0 below 0.7 → Hold)');
    expect(computeVerdict([node('n1', 'P0', 0.5), node('n2', 'P1', 0.8)], passing(), RULES_V1).reasons[0]).toBe('Hold from findings: n1, n2 (rules v1: P0 below 0.7 → Hold; P1 → Hold)');
  });
  test('a Block cites only the confident-P0 clause, even with Hold reports beside it', () => {
    expect(computeVerdict([node('n1', 'P1', 0.9), node('n2', 'P0', 0.8), node('n3', 'P0', 0.2)], passing(), RULES_V1).reasons[0]).toBe('Block from findings: n2 (rules v1: P0 at confidence ≥ 0.7 → Block)');
  });
  test('a duplicate that asks for the verdict brings its clause', () => {
    expect(computeVerdict([node('n1', 'P1', 0.9), node('n2', 'P0', 0.3, 'n1')], passing(), RULES_V1).reasons[0]).toBe('Hold from findings: n1 (rules v1: P0 below 0.7 → Hold; P1 → Hold)');
  });
});
