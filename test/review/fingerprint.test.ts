import { runQuery } from '../../src/readmodels/queries/run-query';
import { reReviewDeltaQuery } from '../../src/readmodels/queries/re-review-delta';
import { fingerprintOf, normalizeTitle } from '../../src/review/fingerprint';
import { GitFixture } from '../support/git-fixture';
import { ALICE, BOB, REPO, reviewFixture } from './support';

const base = { path: 'src/calc.ts', kind: 'bug' as const, category: 'correctness', title: 'Off-by-one in add()' };

describe('fingerprintOf (SPEC §5)', () => {
  test('no line numbers enter it: the same symbol keeps its fingerprint wherever it moves', () => {
    expect(fingerprintOf({ ...base, symbolId: 'src/calc.ts#add' })).toBe(fingerprintOf({ ...base, symbolId: 'src/calc.ts#add' }));
  });
  test('changing the anchored symbol, the kind, the category or the path changes it', () => {
    const fp = fingerprintOf({ ...base, symbolId: 'src/calc.ts#add' });
    expect(fingerprintOf({ ...base, symbolId: 'src/calc.ts#sub' })).not.toBe(fp);
    expect(fingerprintOf({ ...base, symbolId: 'src/calc.ts#add', kind: 'suggestion' })).not.toBe(fp);
    expect(fingerprintOf({ ...base, symbolId: 'src/calc.ts#add', category: 'performance' })).not.toBe(fp);
    expect(fingerprintOf({ ...base, symbolId: 'src/calc.ts#add', path: 'src/other.ts' })).not.toBe(fp);
  });
  test('titles are compared by their words: case, punctuation and spacing do not matter', () => {
    expect(normalizeTitle('Off-by-one  in ADD()!')).toBe(normalizeTitle('off by one in add'));
    expect(fingerprintOf({ ...base, title: 'OFF BY ONE in add' })).toBe(fingerprintOf(base));
  });
  test('without a symbol, the anchored text decides, whitespace ignored', () => {
    const a = fingerprintOf({ ...base, anchoredText: 'return a + b;' });
    expect(fingerprintOf({ ...base, anchoredText: '    return a+b;\n' })).toBe(a);
    expect(fingerprintOf({ ...base, anchoredText: 'return a - b;' })).not.toBe(a);
  });
});

describe('fingerprints computed by addReviewNode from the registered repo at the round head', () => {
  const v1 = ['// calc', '', 'export function add(a: number, b: number): number {', '  return a + b + 1;', '}', ''].join('\n');
  const filler = Array.from({ length: 40 }, (_, i) => `// line ${i + 1} added above`).join('\n') + '\n';
  const reformatted = ['// calc', '', 'export function add(', '    a: number,', '    b: number', '): number { return a + b + 1; }', ''].join('\n');
  // Inside a known definition the code graph's symbol id decides (fingerprint-symbol.test.ts): only a
  // different enclosing symbol changes the fingerprint there.
  const changed = ['// calc', '', 'export function plus(a: number, b: number): number {', '  return a - b;', '}', ''].join('\n');

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

  async function fileAt(head: string, startLine: number, endLine: number, over: Record<string, unknown> = {}) {
    // The base must be a commit of the registered repo (SPEC §10); the fingerprint reads only the head.
    await f.run('requestReview', ALICE, { ...f.pr(), baseSha: head, headSha: head });
    const out = await f.run('addReviewNode', ALICE, { ...f.pr(), node: { ...nodeBody(), anchor: { path: 'src/calc.ts', startLine, endLine }, ...over } });
    return (out.response.result as { fingerprint: string }).fingerprint;
  }

  test('moving the anchored code down 40 lines keeps the fingerprint (and the delta says carried: the code did not change)', async () => {
    git.write('src/calc.ts', v1);
    const h1 = git.commit('v1');
    const fp1 = await fileAt(h1, 3, 5);
    git.write('src/calc.ts', filler + v1);
    const h2 = git.commit('shift');
    const fp2 = await fileAt(h2, 43, 45);
    expect(fp2).toBe(fp1);
    const delta = (await runQuery(reReviewDeltaQuery, f.ws, f.pr())).value;
    expect(delta).toMatchObject({ round: 2, previousRound: 1, entries: [{ fingerprint: fp1, state: 'carried', nodeIds: ['n1', 'n2'] }] });
  });

  test('a rebase onto a new base (same anchored code, new commit ids) keeps the fingerprint', async () => {
    git.write('README.md', 'one\n');
    git.write('src/calc.ts', v1);
    const h1 = git.commit('v1');
    git.write('README.md', 'two\n');
    const h2 = git.commit('rebased onto a newer main');
    expect(h2).not.toBe(h1);
    expect(await fileAt(h2, 3, 5)).toBe(await fileAt(h1, 3, 5));
  });

  test('reformatting the anchored code keeps the fingerprint', async () => {
    git.write('src/calc.ts', v1);
    const fp1 = await fileAt(git.commit('v1'), 3, 5);
    git.write('src/calc.ts', reformatted);
    expect(await fileAt(git.commit('prettier'), 3, 6)).toBe(fp1);
  });

  test('changing the anchored symbol or the kind changes the fingerprint; the delta says new and gone', async () => {
    git.write('src/calc.ts', v1);
    const h1 = git.commit('v1');
    const fp1 = await fileAt(h1, 3, 5);
    git.write('src/calc.ts', changed);
    const h2 = git.commit('change');
    const fp2 = await fileAt(h2, 3, 5);
    expect(fp2).not.toBe(fp1);
    const delta = (await runQuery(reReviewDeltaQuery, f.ws, f.pr())).value;
    expect(delta.entries.map((e: any) => [e.fingerprint, e.state])).toEqual([
      [fp2, 'new'],
      [fp1, 'gone'],
    ]);
    const asSuggestion = (await f.run('addReviewNode', BOB, { ...f.pr(), node: { ...nodeBody(), kind: 'suggestion', brief: 'qa', anchor: { path: 'src/calc.ts', startLine: 3, endLine: 5 } } })).response.result as { fingerprint: string };
    expect(asSuggestion.fingerprint).not.toBe(fp2);
    const a = (await f.run('addReviewNode', BOB, { ...f.pr(), node: { ...nodeBody(), brief: 'qa', anchor: { path: 'src/calc.ts', startLine: 3, endLine: 5, symbolId: 'src/calc.ts#add' } } })).response.result as { fingerprint: string };
    const b = (await f.run('addReviewNode', BOB, { ...f.pr(), node: { ...nodeBody(), brief: 'qa', anchor: { path: 'src/calc.ts', startLine: 3, endLine: 5, symbolId: 'src/calc.ts#sub' } } })).response.result as { fingerprint: string };
    expect(a.fingerprint).not.toBe(b.fingerprint);
  });
});

function nodeBody() {
  return { kind: 'bug', priority: 'P1', triage: { category: 'correctness', severity: 'high', effort: 'small' }, confidence: 0.8, title: 'Off-by-one in add()', body: 'adds one too many', brief: 'engineer' };
}
