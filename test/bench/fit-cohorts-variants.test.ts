/**
 * The gradient-boosted trees of bench/fit-cohorts-variants.ts: they must learn what the logistic model cannot — a
 * pair that belongs together when exactly one of two signals fires (an interaction) — and stay deterministic.
 */
import { fitGbdt } from '../../bench/fit-cohorts-variants';
import { fitLogistic } from '../../bench/support/affinity-fit';

/**
 * Pairs with two binary signals; same commit when exactly one fires (each signal right alone, wrong beside the
 * other). Uneven counts per combination — 40 with neither, 20 with the first alone, 10 with the second alone, 10
 * with both — so each signal also says something alone, as signals do; a perfectly balanced XOR gives a greedy
 * tree no first split (no gain), as it gives any boosted-tree library.
 */
function xorRows(): Array<{ x: number[]; y: number; w: number }> {
  const rows: Array<{ x: number[]; y: number; w: number }> = [];
  for (const [a, b, n] of [
    [0, 0, 40],
    [1, 0, 20],
    [0, 1, 10],
    [1, 1, 10],
  ])
    for (let k = 0; k < n; k++) rows.push({ x: [a, b], y: a !== b ? 1 : 0, w: 1 });
  return rows;
}

test('the trees separate an interaction the logistic model cannot', () => {
  const rows = xorRows();
  const p = fitGbdt(rows, 2);
  expect(p([0, 1])).toBeGreaterThan(0.9);
  expect(p([1, 0])).toBeGreaterThan(0.9);
  expect(p([0, 0])).toBeLessThan(0.1);
  expect(p([1, 1])).toBeLessThan(0.1);
  // The logistic model, on the same rows, cannot say "not both": it calls the pair with both signals likelier
  // together than the pair with the second alone, which is together every time.
  const m = fitLogistic(rows, 2);
  const q = (x: number[]) => 1 / (1 + Math.exp(-(m.bias + m.weights[0] * x[0] + m.weights[1] * x[1])));
  expect(q([1, 1])).toBeGreaterThan(q([0, 1]));
});

test('the same rows give the same model, probability for probability', () => {
  const a = fitGbdt(xorRows(), 2);
  const b = fitGbdt(xorRows(), 2);
  for (const x of [
    [0, 0],
    [0, 1],
    [1, 0],
    [1, 1],
    [0.5, 0.5],
  ])
    expect(a(x)).toBe(b(x));
});
