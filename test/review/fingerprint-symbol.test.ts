import { FactsCache } from '../../src/codegraph/facts-cache';
import { CODEGRAPH_ENGINE_VERSION } from '../../src/codegraph/indexer';
import type { Definition } from '../../src/codegraph/facts';
import { enclosingSymbolOf } from '../../src/review/enclosing-symbol';
import { anchoredLines, fingerprintOf } from '../../src/review/fingerprint';
import { GitFixture } from '../support/git-fixture';
import { ALICE, REPO, reviewFixture } from './support';

const def = (qname: string, start: number, end: number, parent = -1): Definition => ({ name: qname.split('.').pop()!, qname, kind: 'function', start, end, exported: true, parent });

describe('enclosingSymbolOf: the innermost definition holding the whole anchored range', () => {
  const defs = [def('Calc', 1, 20), def('Calc.add', 2, 6, 0), def('Calc.sub', 8, 12, 0), def('helper', 22, 25)];
  test('a range inside a method is the method', () => {
    expect(enclosingSymbolOf('src/calc.ts', defs, 3, 4)).toBe('src/calc.ts#Calc.add');
  });
  test('a range spanning two methods is their class', () => {
    expect(enclosingSymbolOf('src/calc.ts', defs, 5, 9)).toBe('src/calc.ts#Calc');
  });
  test('a range reaching outside every definition has none', () => {
    expect(enclosingSymbolOf('src/calc.ts', defs, 19, 22)).toBeUndefined();
    expect(enclosingSymbolOf('src/calc.ts', defs, 21, 21)).toBeUndefined();
  });
});

describe('addReviewNode fingerprints by the code graph\'s enclosing definition (SPEC §5)', () => {
  const calc = (body: string[], above = 0) =>
    [
      ...Array.from({ length: above }, (_, i) => `// line ${i + 1} added above`),
      '// calc',
      'export function total(items: number[]): number {',
      ...body,
      '}',
      '',
      'export function average(items: number[]): number {',
      '  return total(items) / items.length;',
      '}',
      '',
    ].join('\n');
  // Lines 2-8 are `total`; line 5 (`sum += items[i] + 1;`) is the bug.
  const v1 = calc(['  let sum = 0;', '  for (let i = 0; i < items.length; i++) {', '    sum += items[i] + 1;', '  }', '  return sum;']);

  let git: GitFixture;
  let f: Awaited<ReturnType<typeof reviewFixture>>;
  beforeEach(async () => {
    git = new GitFixture();
    f = await reviewFixture();
    await f.append(`repo-${REPO}`, 'RepoRegistered', { repoId: REPO, path: git.dir, forge: { kind: 'github', owner: 'acme', name: 'web-app', url: 'https://github.com/acme/web-app' } });
  });
  afterEach(async () => {
    await f.cleanup();
    git.cleanup();
  });

  // The base must be a commit of the registered repo (SPEC §10); the fingerprint reads only the head.
  async function fileAt(head: string, anchor: Record<string, unknown>, base = head) {
    await f.run('requestReview', ALICE, { ...f.pr(), baseSha: base, headSha: head });
    const out = await f.run('addReviewNode', ALICE, { ...f.pr(), node: { ...nodeBody(), anchor: { path: 'src/calc.ts', ...anchor } } });
    return (out.response.result as { fingerprint: string }).fingerprint;
  }

  async function filedAnchors(): Promise<Array<Record<string, unknown>>> {
    const anchors: Array<Record<string, unknown>> = [];
    for await (const e of f.ws.store.readStream(`pr-${REPO}-7`)) if (e.type === 'ReviewNodeFiled') anchors.push((e.data as any).node.anchor);
    return anchors;
  }

  const textFingerprint = (text: string) => fingerprintOf({ path: 'src/calc.ts', anchoredText: text, ...fingerprintBase() });

  test('the fingerprint is the enclosing symbol\'s, and the symbol id is recorded on the node', async () => {
    git.write('src/calc.ts', v1);
    const fp = await fileAt(git.commit('v1'), { startLine: 5, endLine: 5 });
    expect(fp).toBe(fingerprintOf({ path: 'src/calc.ts', symbolId: 'src/calc.ts#total', ...fingerprintBase() }));
    expect((await filedAnchors())[0]).toEqual({ path: 'src/calc.ts', startLine: 5, endLine: 5, symbolId: 'src/calc.ts#total' });
  });

  test('the function moving down 40 lines keeps it', async () => {
    git.write('src/calc.ts', v1);
    const fp1 = await fileAt(git.commit('v1'), { startLine: 5, endLine: 5 });
    git.write('src/calc.ts', calc(['  let sum = 0;', '  for (let i = 0; i < items.length; i++) {', '    sum += items[i] + 1;', '  }', '  return sum;'], 40));
    expect(await fileAt(git.commit('shift'), { startLine: 45, endLine: 45 })).toBe(fp1);
  });

  test('reformatting the function body keeps it', async () => {
    git.write('src/calc.ts', v1);
    const fp1 = await fileAt(git.commit('v1'), { startLine: 4, endLine: 6 });
    git.write('src/calc.ts', calc(['  let sum = 0;', '  for (let i = 0; i < items.length; i++) sum += items[i] + 1;', '  return sum;']));
    expect(await fileAt(git.commit('prettier'), { startLine: 4, endLine: 4 })).toBe(fp1);
  });

  test('other lines inside the function changing keep it, where the anchored text (the fallback) changes', async () => {
    git.write('src/calc.ts', v1);
    const h1 = git.commit('v1');
    const fp1 = await fileAt(h1, { startLine: 3, endLine: 5 });
    // The accumulator is renamed and a guard added: the anchored range's text changes, the function does not.
    const v2 = calc(['  if (items.length === 0) return 0;', '  let acc = 0;', '  for (let i = 0; i < items.length; i++) {', '    acc += items[i] + 1;', '  }', '  return acc;']);
    git.write('src/calc.ts', v2);
    const h2 = git.commit('rename accumulator');
    const fp2 = await fileAt(h2, { startLine: 4, endLine: 6 });
    expect(fp2).toBe(fp1);
    expect(textFingerprint(anchoredLines(v2, 4, 6)!)).not.toBe(textFingerprint(anchoredLines(v1, 3, 5)!));
  });

  test('anchoring to a different function changes it', async () => {
    git.write('src/calc.ts', v1);
    const head = git.commit('v1');
    const inTotal = await fileAt(head, { startLine: 5, endLine: 5 });
    const inAverage = await fileAt(head, { startLine: 12, endLine: 12 });
    expect(inAverage).not.toBe(inTotal);
    expect((await filedAnchors()).map((a) => a.symbolId)).toEqual(['src/calc.ts#total', 'src/calc.ts#average']);
  });

  test('a range reaching outside the function (top-level lines) falls back to the anchored text', async () => {
    git.write('src/calc.ts', v1);
    const fp = await fileAt(git.commit('v1'), { startLine: 1, endLine: 3 });
    expect(fp).toBe(textFingerprint(anchoredLines(v1, 1, 3)!));
    expect((await filedAnchors())[0].symbolId).toBeUndefined();
  });

  test('the symbol id the reviewer gives still wins over the code graph\'s', async () => {
    git.write('src/calc.ts', v1);
    const fp = await fileAt(git.commit('v1'), { startLine: 5, endLine: 5, symbolId: 'src/calc.ts#total.loop' });
    expect(fp).toBe(fingerprintOf({ path: 'src/calc.ts', symbolId: 'src/calc.ts#total.loop', ...fingerprintBase() }));
  });

  test('a deleted line (side LEFT) is located among the base\'s definitions', async () => {
    git.write('src/calc.ts', v1 + 'export function legacy(x: number): number {\n  return x * 2;\n}\n');
    const base = git.commit('base with legacy()');
    git.write('src/calc.ts', v1);
    const head = git.commit('drop legacy()');
    const fp = await fileAt(head, { startLine: 15, endLine: 15, side: 'LEFT' }, base);
    expect(fp).toBe(fingerprintOf({ path: 'src/calc.ts', symbolId: 'src/calc.ts#legacy', ...fingerprintBase() }));
    expect((await filedAnchors())[0]).toMatchObject({ side: 'LEFT', symbolId: 'src/calc.ts#legacy' });
  });

  test('the head\'s facts come from the blob-SHA cache the indexer shares, filled on a miss', async () => {
    git.write('src/calc.ts', v1);
    const head = git.commit('v1');
    await fileAt(head, { startLine: 5, endLine: 5 });
    const blob = git.git('rev-parse', `${head}:src/calc.ts`);
    const cache = FactsCache.open(f.ws.dir);
    try {
      expect(cache.get(blob, 'typescript', CODEGRAPH_ENGINE_VERSION)?.defs.map((d) => d.qname)).toEqual(['total', 'average']);
    } finally {
      cache.close();
    }
  });

  describe('a file without a grammar', () => {
    const notes = ['# notes', 'function total {', '  sum=$((sum + 1))', '}', ''].join('\n');
    async function fileNotes(head: string, startLine: number, endLine: number) {
      await f.run('requestReview', ALICE, { ...f.pr(), baseSha: head, headSha: head });
      const out = await f.run('addReviewNode', ALICE, { ...f.pr(), node: { ...nodeBody(), anchor: { path: 'scripts/total.sh', startLine, endLine } } });
      return (out.response.result as { fingerprint: string }).fingerprint;
    }
    test('falls back to the anchored lines\' text: a shift keeps it, an edit of those lines changes it', async () => {
      git.write('scripts/total.sh', notes);
      const fp1 = await fileNotes(git.commit('v1'), 3, 3);
      expect(fp1).toBe(fingerprintOf({ path: 'scripts/total.sh', anchoredText: '  sum=$((sum + 1))', ...fingerprintBase() }));
      git.write('scripts/total.sh', '# header\n\n' + notes);
      expect(await fileNotes(git.commit('shift'), 5, 5)).toBe(fp1);
      git.write('scripts/total.sh', notes.replace('sum + 1', 'sum + 2'));
      expect(await fileNotes(git.commit('edit'), 3, 3)).not.toBe(fp1);
      expect((await filedAnchors()).every((a) => a.symbolId === undefined)).toBe(true);
    });
  });
});

function fingerprintBase() {
  return { kind: 'bug' as const, category: 'correctness', title: 'Off-by-one in total()' };
}

function nodeBody() {
  return { kind: 'bug', priority: 'P1', triage: { category: 'correctness', severity: 'high', effort: 'small' }, confidence: 0.8, title: 'Off-by-one in total()', body: 'adds one per item', brief: 'engineer' };
}
