// pixelmatch (visual axis, reached through the compute pipeline) is ESM-only: load the real source as CommonJS under jest.
import '../axes/visual/support/esm';
import { DEFAULT_SIGNALS } from '../../src/cohorts';
import { computeHarness, groups, cohortOf } from './support';

jest.setTimeout(60_000);

const { fixture, compute } = computeHarness('rl-fixture-name-');
const OFF = DEFAULT_SIGNALS.filter((s) => s !== 'fixture-name');

const RUNNER = "import { spawnSync } from 'node:child_process';\n\nexport function run(file, args = []) {\n  return spawnSync('node', [`test/fixtures/${file}`, ...args]);\n}\n";
const VERBOSE_TEST = (expected: string) => `import { run } from '../lib/run.js';\n\ntest('prints what the script logs', () => {\n  const { stdout } = run('verbose-script.js');\n  expect(String(stdout)).toBe('${expected}');\n});\n`;
const OTHER_TEST = (n: number) => `import { run } from '../lib/run.js';\n\ntest('exits', () => {\n  expect(run('exit.js', ['${n}']).status).toBe(${n});\n});\n`;

describe('fixture-name', () => {
  it('a test that runs a changed fixture by name joins it, the name on an unchanged line; without the signal they stay apart', async () => {
    const f = fixture();
    f.write('lib/run.js', RUNNER);
    f.write('test/fixtures/verbose-script.js', "console.log('one');\n");
    f.write('test/fixtures/exit.js', 'process.exitCode = Number(process.argv[2]);\n');
    f.write('test/verbose.js', VERBOSE_TEST('one\\n'));
    f.write('test/exit.js', OTHER_TEST(1));
    const base = f.commit('base');
    f.write('test/fixtures/verbose-script.js', "console.log('two');\n");
    f.write('test/verbose.js', VERBOSE_TEST('two\\n'));
    f.write('test/exit.js', OTHER_TEST(2));
    const head = f.commit('the script logs two; another test exits with 2');
    const r = await compute(f, base, head);
    expect(groups(r)).toEqual(['test/exit.js', 'test/fixtures/verbose-script.js,test/verbose.js']);
    expect(cohortOf(r, 'test/verbose.js').groupingReason).toBe("a file named by another: test/verbose.js names test/fixtures/verbose-script.js in `verbose-script.js`");
    expect(groups(await compute(f, base, head, OFF))).toEqual(['test/exit.js', 'test/fixtures/verbose-script.js', 'test/verbose.js']);
  });

  it('a relative path names the fixture; a test naming several changed files on lines it did not change joins none of them', async () => {
    const f = fixture();
    f.write('lib/run.js', RUNNER);
    f.write('test/fixtures/a-script.js', "console.log('a');\n");
    f.write('test/fixtures/b-script.js', "console.log('b');\n");
    f.write('test/fixtures/c-script.js', "console.log('c');\n");
    f.write('test/both.js', "import { run } from '../lib/run.js';\n\ntest('a', () => run('a-script.js'));\ntest('b', () => run('b-script.js'));\nconst n = 1;\n");
    f.write('test/path.js', "import { run } from '../lib/run.js';\n\nconst m = 1;\n");
    const base = f.commit('base');
    f.write('test/fixtures/a-script.js', "console.log('A');\n");
    f.write('test/fixtures/b-script.js', "console.log('B');\n");
    f.write('test/fixtures/c-script.js', "console.log('C');\n");
    f.write('test/both.js', "import { run } from '../lib/run.js';\n\ntest('a', () => run('a-script.js'));\ntest('b', () => run('b-script.js'));\nconst n = 2;\n");
    f.write('test/path.js', "import { run } from '../lib/run.js';\n\nconst m = run('./fixtures/c-script.js');\n");
    const head = f.commit('head');
    const r = await compute(f, base, head);
    expect(groups(r)).toEqual(['test/both.js', 'test/fixtures/a-script.js', 'test/fixtures/b-script.js', 'test/fixtures/c-script.js,test/path.js']);
    expect(cohortOf(r, 'test/path.js').groupingReason).toBe('a file named by another: test/path.js names test/fixtures/c-script.js in `./fixtures/c-script.js`');
  });

  it('a removed line names the fixture the change deletes', async () => {
    const f = fixture();
    f.write('lib/run.js', RUNNER);
    f.write('test/fixtures/old-script.js', "console.log('old');\n");
    f.write('test/old.js', "import { run } from '../lib/run.js';\n\ntest('old', () => run('old-script.js'));\ntest('kept', () => 1);\n");
    f.write('test/other.js', 'const x = 1;\n');
    const base = f.commit('base');
    f.remove('test/fixtures/old-script.js');
    f.write('test/old.js', "import { run } from '../lib/run.js';\n\ntest('kept', () => 1);\n");
    f.write('test/other.js', 'const x = 2;\n');
    const head = f.commit('head');
    expect(groups(await compute(f, base, head))).toEqual(['test/fixtures/old-script.js,test/old.js', 'test/other.js']);
    expect(groups(await compute(f, base, head, OFF))).toEqual(['test/fixtures/old-script.js', 'test/old.js', 'test/other.js']);
  });
});
