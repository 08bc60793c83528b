import { detectMirrors, mirrorCandidates, MIRROR_MAX_ROOT_PAIRS } from '../../src/cohorts/evidence/mirrors';

/** The index as detectMirrors reads it, counting whole walks (each tree examination is one). */
class CountingIndex extends Map<string, readonly string[]> {
  walks = 0;
  override [Symbol.iterator](): MapIterator<[string, readonly string[]]> {
    this.walks++;
    return super[Symbol.iterator]();
  }
}

describe('mirror detection is bounded on a hostile PR', () => {
  it(`examines at most ${MIRROR_MAX_ROOT_PAIRS} root pairs however many same-named files in distinct directories change, and still finds a real mirror`, async () => {
    const index = new CountingIndex();
    const changed: string[] = [];
    // A real mirror first in sorted order: a/lib/{x,y,z}.ts copies b/{x,y,z}.ts.
    for (const n of ['x', 'y', 'z']) {
      index.set(`a/lib/${n}.ts`, [n]);
      index.set(`b/${n}.ts`, [n]);
    }
    changed.push('a/lib/x.ts', 'b/x.ts');
    // 1,500 names, each changed in 8 directories of its own: 42,000 candidates, as many distinct root pairs.
    for (let k = 0; k < 1500; k++) {
      for (let d = 0; d < 8; d++) {
        const p = `z${String(k).padStart(4, '0')}/d${d}/f${k}.ts`;
        index.set(p, [`f${k}`]);
        changed.push(p);
      }
    }
    const candidates = mirrorCandidates(changed);
    expect(candidates.length).toBe(1 + 1500 * 28);
    const started = performance.now();
    const mirrors = await detectMirrors(candidates, index, async (p) => `export const v = 1; // ${p.endsWith('x.ts') ? 'x' : p}`);
    expect(mirrors).toEqual([{ mirror: 'a/lib/x.ts', source: 'b/x.ts' }]);
    expect(index.walks).toBeLessThanOrEqual(MIRROR_MAX_ROOT_PAIRS);
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});
