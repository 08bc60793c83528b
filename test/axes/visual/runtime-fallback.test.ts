// Deliberately without ./support/esm: this suite runs under jest's module system as-is, where the
// ESM-only pixelmatch may not load in-process (it does not on Node 20 without the shim).
import { runDiffJobs, closeSharedDiffPools } from '../../../src/axes/visual/pool';
import { blank, setPixel, toPng } from './support/images';

afterAll(() => closeSharedDiffPools());

describe('diffing where pixelmatch cannot load in-process', () => {
  it('still compares a single pair, serially requested, with the real pixelmatch (in a worker thread if need be)', async () => {
    const base = blank(30, 20);
    const head = setPixel(blank(30, 20), 4, 5, [0, 0, 0, 255]);
    const [r] = await runDiffJobs([{ kind: 'compare', base: toPng(base), head: toPng(head) }], { parallelism: 1 });
    expect(r).toMatchObject({ ok: true, comparison: { state: 'changed', changedPixels: 1 } });
  });
});
