/**
 * The side-by-side rounds of bench:store and bench:projections (bench/support/abab.ts): sides run in
 * A B A B order, every round runs every side once, spreads and ratios are computed from the rounds.
 */
import { alternate, costRatios, type SideStats } from '../../bench/support/abab';

const stats = (name: string, rounds: Array<{ events: number; wallMs: number; cpuMs: number }>): SideStats => {
  const per = (k: 'wallMs' | 'cpuMs') => rounds.map((r) => (r[k] * 1000) / r.events).sort((a, b) => a - b);
  const spread = (xs: number[]) => ({ min: xs[0], median: xs[xs.length >> 1], max: xs[xs.length - 1] });
  return { name, rounds, wallUs: spread(per('wallMs')), cpuUs: spread(per('cpuMs')), wallRate: spread(per('wallMs').map((x) => 1e6 / x).sort((a, b) => a - b)) };
};

describe('bench side-by-side rounds', () => {
  it('runs the sides A B A B …, each once per round, and reports each round', async () => {
    const order: string[] = [];
    const out = await alternate(5, [
      { name: 'A', run: () => (order.push('A'), 10) },
      { name: 'B', run: async () => (order.push('B'), 20) },
    ]);
    expect(order.join('')).toBe('ABABABABAB');
    expect(out.map((s) => s.name)).toEqual(['A', 'B']);
    expect(out[0].rounds).toHaveLength(5);
    expect(out[1].rounds.every((r) => r.events === 20)).toBe(true);
    for (const s of out) {
      expect(s.cpuUs.min).toBeLessThanOrEqual(s.cpuUs.median);
      expect(s.cpuUs.median).toBeLessThanOrEqual(s.cpuUs.max);
      expect(s.wallRate.min).toBeLessThanOrEqual(s.wallRate.max);
    }
  });

  it('states ours against the reference as a multiple of its cost per event, medians and per-round pairs', () => {
    const ref = stats('raw', [
      { events: 100, wallMs: 1, cpuMs: 1 },
      { events: 100, wallMs: 2, cpuMs: 1 },
      { events: 100, wallMs: 1, cpuMs: 2 },
    ]);
    const ours = stats('ours', [
      { events: 100, wallMs: 3, cpuMs: 2 },
      { events: 100, wallMs: 2, cpuMs: 2 },
      { events: 100, wallMs: 3, cpuMs: 3 },
    ]);
    const r = costRatios(ours, ref);
    expect(r.cpu).toBe(2); // median 20 µs/event over median 10
    expect(r.wall).toBe(3); // 30 over 10
    expect(r.cpuPaired).toBe(2); // per round 2, 2, 1.5
    expect(r.wallPaired).toBe(3); // per round 3, 1, 3
  });
});
