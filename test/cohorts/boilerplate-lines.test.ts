// pixelmatch (visual axis, reached through the compute pipeline) is ESM-only: load the real source as CommonJS under jest.
import '../axes/visual/support/esm';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { FormationSignal } from '../../src/cohorts';
import { BOILERPLATE_FILE, boilerplateLines, boilerplateSet, BoilerplateLines } from '../../src/cohorts/boilerplate';
import { editKey } from '../../src/cohorts/evidence/similar-edits';
import { computeReview } from '../../src/compute/review';
import { GitRepo } from '../../src/git/repo';
import { corpusHalves, learnBoilerplate, MAX_LINES, MIN_STORED_REPOS, renderBoilerplate } from '../../bench/learn-boilerplate';
import { GitFixture } from '../support/git-fixture';
import { cohortOf, groups } from '../compute/support';

jest.setTimeout(60_000);

const fixtures: GitFixture[] = [];
const dirs: string[] = [];
afterAll(() => {
  for (const f of fixtures) f.cleanup();
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});
const fixture = () => {
  const f = new GitFixture('rl-boiler-');
  fixtures.push(f);
  return f;
};
async function compute(f: GitFixture, base: string, head: string, signals: FormationSignal[], boilerplateThreshold?: number) {
  const workspaceDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-ws-'));
  dirs.push(workspaceDir);
  const repo = await GitRepo.open(f.dir);
  try {
    return await computeReview({ repo, baseSha: base, headSha: head, workspaceDir, signals, ...(boilerplateThreshold !== undefined ? { boilerplateThreshold } : {}) });
  } finally {
    repo.close();
  }
}

const SIGNALS: FormationSignal[] = ['changed-reference', 'new-symbol-import', 'changed-import', 'code-change', 'test-subject', 'similar-edit'];

describe('boilerplate-lines: lines learned across repositories join nothing', () => {
  it('the committed list loads, is in its stored order, learned from the training half only, and is rendered byte for byte as the script writes it', () => {
    const b = boilerplateLines();
    expect(b.version).toBe('boilerplate-1');
    expect(b.sourceRepos).toEqual(corpusHalves().training);
    for (const v of corpusHalves().validation) expect(b.sourceRepos).not.toContain(v);
    expect(b.lines.length).toBeLessThanOrEqual(MAX_LINES);
    for (const [text, repos, commits] of b.lines) {
      expect(repos).toBeGreaterThanOrEqual(MIN_STORED_REPOS);
      expect(commits).toBeGreaterThanOrEqual(repos);
      expect(editKey('+', text)).toBe(`+${text}`);
    }
    const order = [...b.lines].sort((x, y) => y[1] - x[1] || y[2] - x[2] || (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
    expect(b.lines).toEqual(order);
    expect(renderBoilerplate(JSON.parse(fs.readFileSync(BOILERPLATE_FILE, 'utf8')) as BoilerplateLines)).toBe(fs.readFileSync(BOILERPLATE_FILE, 'utf8'));
    // The set at a threshold: the lines found in at least that many repositories; 0 is none.
    expect(boilerplateSet(0).size).toBe(0);
    expect([...boilerplateSet(5)].sort()).toEqual(b.lines.filter(([, r]) => r >= 5).map(([t]) => t).sort());
    expect(boilerplateSet(5).has('} catch (error) {')).toBe(true);
  });

  it('learning is deterministic: a line changed in two repositories counts once per commit, a line of one repository or a comment is left out', async () => {
    const repos = ['one', 'two', 'three'].map((name) => ({ name, f: fixture() }));
    const body = (extra: string) => `export function run(x) {\n${extra}  return x;\n}\n`;
    for (const { name, f } of repos) {
      f.write('src/a.js', body(''));
      f.commit('base');
      f.write('src/a.js', body('  } catch (error) {\n  // a comment that is long enough\n'));
      f.commit('add');
      f.write('src/a.js', body(`  const onlyIn${name} = configure(x)\n`));
      f.commit('change');
      f.write('README.md', '} catch (error) {\n');
      f.commit('not code');
    }
    repos[2].f.write('src/b.js', body('  } catch (error) {\n'));
    repos[2].f.commit('again');
    const input = repos.map(({ name, f }) => ({ name, dir: f.dir }));
    const a = await learnBoilerplate(input);
    // Added then removed in each: one commit each way; the third repository adds it once more elsewhere. The
    // function's first line: each root commit and the third's new file (`git log -p` shows root commits' diffs).
    expect(a.lines).toEqual([
      ['} catch (error) {', 3, 7],
      ['export function run(x) {', 3, 4],
    ]);
    expect(a.date).toBe('2026-01-01');
    expect(await learnBoilerplate(input)).toEqual(a);
  });

  it('two files adding a learned boilerplate line stay apart; the same line is the same edit without the signal or below the threshold', async () => {
    const f = fixture();
    const guarded = (name: string, extra: string) => `export function ${name}(input) {\n  try {\n    return parse${name}(input);\n${extra}  } finally {\n    done${name}();\n  }\n}\n`;
    f.write('src/readers/alpha.js', guarded('alpha', ''));
    f.write('lib/writers/beta.js', guarded('beta', ''));
    const base = f.commit('base');
    f.write('src/readers/alpha.js', guarded('alpha', '  } catch (error) {\n    reportAlpha(error);\n'));
    f.write('lib/writers/beta.js', guarded('beta', '  } catch (error) {\n    logBeta(error);\n'));
    const head = f.commit('two unrelated handlers');
    const joined = await compute(f, base, head, SIGNALS);
    expect(groups(joined)).toEqual(['lib/writers/beta.js,src/readers/alpha.js']);
    expect(cohortOf(joined, 'src/readers/alpha.js').groupingReason).toBe('the same edit: beta.js and alpha.js both add `} catch (error) {`');
    expect(groups(await compute(f, base, head, [...SIGNALS, 'boilerplate-lines'], 5))).toEqual(['lib/writers/beta.js', 'src/readers/alpha.js']);
    // Above the line's repository count (it is in fewer): not boilerplate at that threshold.
    const repos = boilerplateLines().lines.find(([t]) => t === '} catch (error) {')![1];
    expect(groups(await compute(f, base, head, [...SIGNALS, 'boilerplate-lines'], repos + 1))).toEqual(['lib/writers/beta.js,src/readers/alpha.js']);
  });

  it('edit-rare-id: the same substitution joins two files that also name a common rare identifier, not two whose changed names are common in the commit', async () => {
    const SUB: FormationSignal[] = ['changed-reference', 'new-symbol-import', 'changed-import', 'code-change', 'test-subject', 'same-substitution'];
    const reader = (name: string, prop: string) => `export function ${name}Read(url) {\n  const value = url.${prop}.get('${name}')\n  return value\n}\n`;
    const f = fixture();
    f.write('src/readers/alpha.js', reader('alpha', 'searchParameters'));
    f.write('lib/writers/beta.js', reader('beta', 'searchParameters'));
    const base = f.commit('base');
    f.write('src/readers/alpha.js', reader('alpha', 'searchParams'));
    f.write('lib/writers/beta.js', reader('beta', 'searchParams'));
    const head = f.commit('one rename at each call');
    const rare = await compute(f, base, head, [...SUB, 'edit-rare-id']);
    expect(groups(rare)).toEqual(['lib/writers/beta.js,src/readers/alpha.js']);
    expect(cohortOf(rare, 'src/readers/alpha.js').groupingReason).toBe('the same substitution: beta.js and alpha.js both change `searchParameters` to `searchParams`');

    // Every name of the changed lines is in three more unchanged files: no rare name in common, no join.
    const g = fixture();
    g.write('src/readers/alpha.js', reader('alpha', 'searchParameters'));
    g.write('lib/writers/beta.js', reader('beta', 'searchParameters'));
    for (const n of ['one', 'two', 'three']) g.write(`src/config/${n}.js`, `export const ${n} = (url) => {\n  const value = [url.searchParams.get('alpha'), url.searchParameters.get('beta')]\n  return value\n}\n`);
    const base2 = g.commit('base');
    g.write('src/readers/alpha.js', reader('alpha', 'searchParams'));
    g.write('lib/writers/beta.js', reader('beta', 'searchParams'));
    const head2 = g.commit('one rename at each call');
    expect(groups(await compute(g, base2, head2, [...SUB, 'edit-rare-id']))).toEqual(['lib/writers/beta.js', 'src/readers/alpha.js']);
    expect(groups(await compute(g, base2, head2, SUB))).toEqual(['lib/writers/beta.js,src/readers/alpha.js']);
  });

  it('join-attach: a join-stage signal attaches a file to a cohort but does not merge two cohorts of two files each', async () => {
    const SIG: FormationSignal[] = ['changed-reference', 'new-symbol-import', 'changed-import', 'code-change', 'test-subject', 'similar-edit'];
    const callee = (name: string, v: number) => `export function ${name}(x: number): number {\n  return x + ${v};\n}\n`;
    const caller = (name: string, callee_: string, arg: string, extra: string) => `import { ${callee_} } from './${callee_}';\n\nexport function ${name}(x: number): number {\n  const y = x * 2;\n${extra}  return ${callee_}(${arg});\n}\n`;
    const shared = '  const limit = readLimitFromEnvironment();\n';
    const f = fixture();
    f.write('src/one/g.ts', callee('g', 1));
    f.write('src/one/f.ts', caller('f', 'g', 'y', ''));
    f.write('src/two/h.ts', callee('h', 1));
    f.write('src/two/k.ts', caller('k', 'h', 'y', ''));
    f.write('src/three/e.ts', 'export function e(x: number): number {\n  return x;\n}\n');
    const base = f.commit('base');
    f.write('src/one/g.ts', callee('g', 2));
    f.write('src/one/f.ts', caller('f', 'g', 'y + 1', shared));
    f.write('src/two/h.ts', callee('h', 2));
    f.write('src/two/k.ts', caller('k', 'h', 'y + 1', shared));
    f.write('src/three/e.ts', `export function e(x: number): number {\n${shared}  return x;\n}\n`);
    const head = f.commit('two changed calls and one shared line');
    expect(groups(await compute(f, base, head, SIG))).toEqual(['src/one/f.ts,src/one/g.ts,src/three/e.ts,src/two/h.ts,src/two/k.ts']);
    const attached = await compute(f, base, head, [...SIG, 'join-attach']);
    expect(groups(attached)).toEqual(['src/one/f.ts,src/one/g.ts,src/three/e.ts', 'src/two/h.ts,src/two/k.ts']);
    expect(cohortOf(attached, 'src/three/e.ts').groupingReason).toBe('changed references: f → g · the same edit: f.ts and e.ts both add `const limit = readLimitFromEnvironment()`');
  });
});
