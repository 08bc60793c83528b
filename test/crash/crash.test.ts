import { crashRun } from './harness';

describe('crash safety (kill -9 during writes)', () => {
  test('after SIGKILL mid-append the reopened store holds every acknowledged event, no partial one, contiguous positions, and a hash chain that verifies', async () => {
    for (let run = 0; run < 3; run++) {
      const r = await crashRun();
      expect(r.problems).toEqual([]);
      expect(r.acknowledged).toBeGreaterThan(0);
      expect(r.stored).toBeGreaterThanOrEqual(r.acknowledged);
    }
  }, 60_000);
});
