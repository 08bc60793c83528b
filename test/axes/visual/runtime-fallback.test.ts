// Deliberately without ./support/esm: this suite runs under jest's module system as-is, where the
// ESM-only pixelmatch does not load in-process on Node 20. The engine does not need it (match.ts is
// pixelmatch's comparison, with pixelmatch as the oracle of the other suites), so a serially requested
// pair is compared right here.
import { runDiffJobs, closeSharedDiffPools } from '../../../src/axes/visual/pool';
import { blank, setPixel, toPng } from './support/images';

afterAll(() => closeSharedDiffPools());

describe('diffing where pixelmatch itself cannot load in-process', () => {
  it('still compares a single pair, serially requested', async () => {
    const base = blank(30, 20);
    const head = setPixel(blank(30, 20), 4, 5, [0, 0, 0, 255]);
    const [r] = await runDiffJobs([{ kind: 'compare', base: toPng(base), head: toPng(head) }], { parallelism: 1 });
    expect(r).toMatchObject({ ok: true, comparison: { state: 'changed', changedPixels: 1 } });
  });
});
