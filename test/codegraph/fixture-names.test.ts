import { fileNamings, fixtureNamings, MAX_NAME_LENGTH, MAX_NAMED_PER_FILE, MAX_SAME_NAME, nameLiteralsOf, removedNameLiteralsOf } from '../../src/cohorts/evidence/fixture-names';

describe('fixture-name: string literals that could name a file', () => {
  it('takes one-line literals of every quote kind, not import specifiers, escapes, interpolations or comments', () => {
    const text = [
      "import { execa } from '../index.js';",
      "const m = require('./helpers/stdio.js');",
      "const lazy = await import('./lazy.js');",
      "await execa('verbose-script.js', {all: true});",
      'await execa("noop-fail.js");',
      'const f = `fixtures/x.js`;',
      'const t = `${dir}/y.js`;',
      "const e = 'a\\'b.js';",
      "// execa('commented.js')",
      "it('runs', () => run('command with space.js'));",
    ].join('\n');
    expect([...nameLiteralsOf(text)].sort()).toEqual(['command with space.js', 'fixtures/x.js', 'noop-fail.js', 'runs', 'verbose-script.js']);
  });

  it('skips # comments only when asked (Python), and a literal past MAX_NAME_LENGTH', () => {
    expect([...nameLiteralsOf("# run('a.py')\nrun('b.py')\n", true)]).toEqual(['b.py']);
    expect([...nameLiteralsOf("# run('a.py')\n", false)]).toEqual(['a.py']);
    expect([...nameLiteralsOf(`'${'x'.repeat(MAX_NAME_LENGTH + 1)}.js' 'ok.js'`)]).toEqual(['ok.js']);
  });

  it('an unclosed quote ends with its line (a backtick with the text) and the scan goes on after it', () => {
    expect([...nameLiteralsOf("don't\nrun('next.js')\n")]).toEqual(['next.js']);
    expect([...nameLiteralsOf("run('ok.js') `never closed\n'inside.js'")]).toEqual(['ok.js']);
  });

  it('is linear: a 200,000-character unclosed string, and 100,000 unclosed quotes, each scan about as fast as ordinary code of the same length', () => {
    // Compared in this test against a scan of ordinary code as long (2–6 ms each when quiet): a loaded machine
    // slows both alike, while a scan that restarted at every quote would be thousands of times slower.
    const timed = (text: string) => {
      const started = performance.now();
      nameLiteralsOf(text);
      return performance.now() - started;
    };
    const ordinary = "run('fixture.js');\n".repeat(200_000 / 19);
    const baseline = Math.min(...[0, 1, 2].map(() => timed(ordinary)));
    for (const text of [`'${'x'.repeat(200_000)}`, `"${'x'.repeat(200_000)}`, `'${'a\\'.repeat(100_000)}`, `\`${'x'.repeat(200_000)}`, "'\n".repeat(100_000), `'${'\\'.repeat(200_000)}`, "'".repeat(200_000)]) {
      expect(timed(text)).toBeLessThan(20 * baseline + 50);
    }
  });
});

describe('fixture-name: which changed file a literal names', () => {
  const indexed = ['test/verbose.js', 'test/fixtures/verbose-script.js', 'test/fixtures/noop.js', 'lib/noop.js', 'a/index.js', 'b/index.js', 'test/helpers/index.js'];

  it('a basename names the one indexed file of that name; a relative path ending in it names it too', () => {
    const changed = new Set(['test/verbose.js', 'test/fixtures/verbose-script.js']);
    expect(fileNamings(new Map([['test/verbose.js', ['verbose-script.js']]]), changed, indexed)).toEqual([{ from: 'test/verbose.js', to: 'test/fixtures/verbose-script.js', literal: 'verbose-script.js' }]);
    expect(fileNamings(new Map([['test/verbose.js', ['./fixtures/verbose-script.js']]]), changed, indexed)).toHaveLength(1);
    expect(fileNamings(new Map([['test/verbose.js', ['other/verbose-script.js']]]), changed, indexed)).toEqual([]);
  });

  it('an unchanged file named, or the naming file itself, links nothing', () => {
    expect(fileNamings(new Map([['test/verbose.js', ['verbose-script.js', 'verbose.js']]]), new Set(['test/verbose.js']), indexed)).toEqual([]);
  });

  it('a name several indexed files share names the nearest to the naming file; a tie names none', () => {
    const changed = new Set(['test/verbose.js', 'test/fixtures/noop.js', 'lib/noop.js', 'a/index.js', 'b/index.js']);
    expect(fileNamings(new Map([['test/verbose.js', ['noop.js']]]), changed, indexed).map((n) => n.to)).toEqual(['test/fixtures/noop.js']);
    expect(fileNamings(new Map([['test/verbose.js', ['lib/noop.js']]]), changed, indexed).map((n) => n.to)).toEqual(['lib/noop.js']);
    expect(fileNamings(new Map([['c/x.js', ['index.js']]]), new Set([...changed, 'c/x.js']), indexed)).toEqual([]);
  });

  it('a name more than MAX_SAME_NAME indexed files share names nothing, and the work stays bounded', () => {
    const many = Array.from({ length: MAX_SAME_NAME + 1 }, (_, i) => `d${i}/util.js`);
    expect(fileNamings(new Map([['d0/x.js', ['util.js']]]), new Set(['d0/x.js', 'd0/util.js']), many)).toEqual([]);
    // n changed files each naming 50 others: at most MAX_NAMED_PER_FILE namings each, not a pair per name. The work
    // grows linearly: 10× the files costs about 10× the time (a pair per name would be 100×), compared in this test
    // against the same call on 1,000 files, so a loaded machine slows both sides alike.
    const run = (n: number) => {
      const wide = Array.from({ length: n }, (_, i) => `p${i}/f${i}.js`);
      const started = performance.now();
      const namings = fileNamings(new Map(wide.map((p) => [p, wide.slice(0, 50).map((q) => q.slice(q.indexOf('/') + 1))])), new Set(wide), wide);
      return { namings, ms: performance.now() - started };
    };
    const small = Math.min(...[0, 1, 2].map(() => run(1_000).ms));
    const large = run(10_000);
    expect(large.namings).toHaveLength(10_000 * MAX_NAMED_PER_FILE);
    expect(large.ms).toBeLessThan(40 * small + 100);
  });

  it('a bare name without its extension names nothing (measured: it costs execa 25 cases)', () => {
    const changed = new Set(['test/verbose.js', 'test/fixtures/verbose-script.js']);
    expect(fileNamings(new Map([['test/verbose.js', ['verbose-script', 'verbose']]]), changed, indexed)).toEqual([]);
  });

  it('joins a test\'s added-line names, its removed-line names in the base, and its unchanged-line name only when it is a fixture and the one changed file named so; a source names nothing', () => {
    const files = [
      { path: 'test/a.js', status: 'modified', role: 'test' },
      { path: 'test/b.js', status: 'modified', role: 'test' },
      { path: 'test/conftest.py', status: 'modified', role: 'test' },
      { path: 'test/fixtures/one.js', status: 'modified', role: 'test' },
      { path: 'test/fixtures/two.js', status: 'modified', role: 'test' },
      { path: 'test/fixtures/three.js', status: 'modified', role: 'test' },
      { path: 'test/fixtures/gone.js', status: 'deleted', role: 'test' },
      { path: 'build.config.ts', status: 'modified', role: 'source' },
      { path: 'src/server.ts', status: 'modified', role: 'source' },
    ];
    const head = files.filter((f) => f.status !== 'deleted').map((f) => f.path);
    const base = files.map((f) => f.path);
    const none = new Set<string>();
    const literals = new Map([
      ['test/a.js', { added: new Set(['one.js']), unchanged: new Set(['two.js']), removed: new Set(['gone.js']) }],
      ['test/b.js', { added: none, unchanged: new Set(['two.js', 'three.js']), removed: none }],
      // On an unchanged line only a fixture counts: a conftest writing a file called `server.ts` names no source.
      ['test/conftest.py', { added: none, unchanged: new Set(['server.ts']), removed: none }],
      // A source naming a file (a build config's entry list) joins nothing.
      ['build.config.ts', { added: new Set(['src/server.ts']), unchanged: none, removed: none }],
    ]);
    expect(fixtureNamings(literals, files, head, base).map((n) => `${n.from} → ${n.to}`)).toEqual(['test/a.js → test/fixtures/one.js', 'test/a.js → test/fixtures/gone.js', 'test/a.js → test/fixtures/two.js']);
  });

  it('removed lines: the literals of a diff\'s removed lines, per path', () => {
    const patch = "diff --git a/test/a.js b/test/a.js\n--- a/test/a.js\n+++ b/test/a.js\n@@ -1,2 +1,2 @@\n-run('old.js');\n+run('new.js');\n";
    expect([...(removedNameLiteralsOf(patch, new Set(['test/a.js'])).get('test/a.js') ?? [])]).toEqual(['old.js']);
  });
});
