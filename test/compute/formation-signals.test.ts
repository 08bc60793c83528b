// pixelmatch (visual axis, reached through the compute pipeline) is ESM-only: load the real source as CommonJS under jest.
import '../axes/visual/support/esm';
import { DEFAULT_SIGNALS, FormationSignal } from '../../src/cohorts';
import { stemParts, subjectOf, typeTestSubject } from '../../src/cohorts/evidence/pairing';
import { mirrorCandidates, mirrorSimilarity, orientMirror } from '../../src/cohorts/evidence/mirrors';
import { substitutionOf } from '../../src/cohorts/evidence/similar-edits';
import { accessedMembersOf, declaredNamesOf, implementationOf, memberDeclarationOf, touchedNamesOf } from '../../src/cohorts/evidence/declared-members';
import { changedIdentifiersOf, changedKeysOf, changedLiteralsOf, identifierCacheHits, identifierFrequency, newIdentifierGroups, testNameCandidates, testNamesSubject } from '../../src/cohorts/evidence/shared-identifiers';
import type { ComputedReview } from '../../src/compute/review';
import { changedTitleWordsOf, testTitleCandidates, testTitlesSubject, titleWordsOf } from '../../src/cohorts/evidence/test-titles';
import { affinityWordsOf, changedAffinityWordsOf, stem, testAffinityJoins, wordFrequency } from '../../src/cohorts/evidence/test-affinity';
import { coChangePairs } from '../../src/git/co-change';
import { GitRepo } from '../../src/git/repo';
import { BOUNDS, clipText } from '../../src/events/catalogue/bounds';
import { computeHarness, groups, cohortOf } from './support';

jest.setTimeout(60_000);

const { fixture, compute } = computeHarness('rl-signals-');


const CALLER = (v: number, arg: string) => `import { g } from './b';\n\nexport function f(x: number): number {\n  const y = x * ${v};\n  return g(${arg});\n}\n`;
const CALLEE = (v: number) => `export function g(x: number): number {\n  return x + ${v};\n}\n`;

describe('formation signals', () => {
  it('changed-reference: a caller changed elsewhere than at its call stays apart from the changed callee; a changed call joins it, and the reason names the reference', async () => {
    const f = fixture();
    f.write('src/b.ts', CALLEE(1));
    f.write('src/a.ts', CALLER(2, 'y'));
    const base = f.commit('base');
    f.write('src/b.ts', CALLEE(2));
    f.write('src/a.ts', CALLER(3, 'y'));
    const unrelatedEdits = f.commit('edits around an unchanged call');
    expect(groups(await compute(f, base, unrelatedEdits))).toEqual(['src/a.ts', 'src/b.ts']);
    // The older rule (any edge from a changed fragment) joins them: the signal is what keeps them apart.
    expect(groups(await compute(f, base, unrelatedEdits, []))).toEqual(['src/a.ts,src/b.ts']);

    f.write('src/a.ts', CALLER(3, 'y + 1'));
    const changedCall = f.commit('the call changes');
    const r = await compute(f, base, changedCall);
    expect(groups(r)).toEqual(['src/a.ts,src/b.ts']);
    expect(cohortOf(r, 'src/a.ts').groupingReason).toBe('changed references: f → g');
  });

  it('new-symbol-import: a package __init__.py that starts re-exporting a function the change adds joins it; without the signal they stay apart', async () => {
    const f = fixture();
    f.write('pkg/__init__.py', 'from .utils import echo\n');
    f.write('pkg/utils.py', 'def echo(s):\n    return s\n');
    const base = f.commit('base');
    f.write('pkg/__init__.py', 'from .utils import echo\nfrom .utils import shout\n');
    f.write('pkg/utils.py', 'def echo(s):\n    return s\n\n\ndef shout(s):\n    return s.upper()\n');
    const head = f.commit('head');
    const r = await compute(f, base, head);
    expect(groups(r)).toEqual(['pkg/__init__.py,pkg/utils.py']);
    expect(cohortOf(r, 'pkg/utils.py').groupingReason).toBe('changed references: pkg/__init__.py → shout');
    expect(groups(await compute(f, base, head, ['changed-reference', 'test-subject']))).toEqual(['pkg/__init__.py', 'pkg/utils.py']);
  });

  it('new-symbol-import: a barrel that starts re-exporting a whole module the change adds (export *) joins it; a new example importing a changed module whole does not', async () => {
    const f = fixture();
    f.write('src/utils/index.ts', "export * from './body';\n");
    f.write('src/utils/body.ts', 'export function readBody(s: string): string {\n  return s;\n}\n');
    f.write('src/app.ts', "import { readBody } from './utils';\n\nexport function handle(s: string): string {\n  return readBody(s);\n}\n");
    f.write('click.py', 'def echo(s):\n    return s\n');
    const base = f.commit('base');
    f.write('src/utils/index.ts', "export * from './body';\nexport * from './cache';\n");
    f.write('src/utils/cache.ts', 'export function handleCacheHeaders(maxAge: number): string {\n  return `max-age=${maxAge}`;\n}\n');
    // A new example that imports a changed module whole: it starts importing it, but names nothing the change adds.
    f.write('click.py', 'def echo(s):\n    return str(s)\n');
    f.write('examples/inout.py', 'import click\n\n\ndef main():\n    return 1\n');
    const head = f.commit('a new utility re-exported by the barrel; a fix and a new example');
    const r = await compute(f, base, head);
    expect(groups(r)).toContain('src/utils/cache.ts,src/utils/index.ts');
    expect(cohortOf(r, 'src/utils/cache.ts').groupingReason).toBe('changed references: src/utils/index.ts → src/utils/cache.ts');
    expect(groups(r)).toContain('click.py');
    expect(groups(r)).toContain('examples/inout.py');
    const off = await compute(f, base, head, DEFAULT_SIGNALS.filter((x) => x !== 'new-symbol-import' && x !== 'test-affinity'));
    expect(groups(off)).toContain('src/utils/index.ts');
    expect(groups(off)).toContain('src/utils/cache.ts');
  });

  it('changed-import: a package __init__.py that starts re-exporting a function the change modifies joins it; an edited import line whose binding was there before does not', async () => {
    const SIGNALS: FormationSignal[] = ['changed-reference', 'new-symbol-import', 'test-subject', 'changed-import'];
    const f = fixture();
    f.write('pkg/__init__.py', 'from .utils import echo\n');
    f.write('pkg/utils.py', 'def echo(s):\n    return s\n\n\ndef get_args():\n    return []\n');
    f.write('src/event.ts', 'export class H3Event {\n  path = "/";\n}\n\nexport const other = 1;\n');
    f.write('src/plain.ts', "import { H3Event } from './event';\n\nexport function plain(e: H3Event): string {\n  return e.path;\n}\n");
    const base = f.commit('base');
    // get_args is modified (not new) and newly exported by __init__.py; H3Event is modified and plain.ts's
    // import line changes, but it imported H3Event before.
    f.write('pkg/__init__.py', 'from .utils import echo, get_args\n');
    f.write('pkg/utils.py', 'def echo(s):\n    return s\n\n\ndef get_args():\n    return list(range(3))\n');
    f.write('src/event.ts', 'export class H3Event {\n  path = "/index";\n}\n\nexport const other = 1;\n');
    f.write('src/plain.ts', "import { H3Event, other } from './event';\n\nexport function plain(e: H3Event): string {\n  return e.path + other;\n}\n");
    const head = f.commit('head');
    const r = await compute(f, base, head, SIGNALS);
    expect(groups(r)).toEqual(['pkg/__init__.py,pkg/utils.py', 'src/event.ts', 'src/plain.ts']);
    expect(cohortOf(r, 'pkg/utils.py').groupingReason).toBe('changed references: pkg/__init__.py → get_args');
    expect(groups(await compute(f, base, head, SIGNALS.filter((x) => x !== 'changed-import')))).toEqual(['pkg/__init__.py', 'pkg/utils.py', 'src/event.ts', 'src/plain.ts']);
  });

  it('code-change: a definition whose change is only its docstring or comments is no link target; a code change is', async () => {
    const SIGNALS: FormationSignal[] = ['changed-reference', 'new-symbol-import', 'test-subject', 'code-change'];
    const utils = (doc: string, body: string) => `def echo(message):\n    \"\"\"Print a message.\n\n    ${doc}\n    \"\"\"\n    # write it out\n    return ${body}\n`;
    // n functions, each calling echo: a new function is a new (changed-line) reference to it.
    const app = (n: number) => `from .utils import echo\n${Array.from({ length: n }, (_, i) => `\n\ndef main${i}():\n    echo("line ${i}")\n`).join('')}`;
    const f = fixture();
    f.write('pkg/__init__.py', '');
    f.write('pkg/utils.py', utils('It never fails.', 'print(message)'));
    f.write('pkg/app.py', app(1));
    const base = f.commit('base');
    f.write('pkg/utils.py', utils('It never fails, and writes bytes too.', 'print(message)'));
    f.write('pkg/app.py', app(2));
    const docOnly = f.commit('docstring only; a new call');
    expect(groups(await compute(f, base, docOnly, SIGNALS))).toEqual(['pkg/app.py', 'pkg/utils.py']);
    // Without the signal the new call joins the docstring edit.
    expect(groups(await compute(f, base, docOnly, SIGNALS.filter((x) => x !== 'code-change')))).toEqual(['pkg/app.py,pkg/utils.py']);
    f.write('pkg/utils.py', utils('It never fails, and writes bytes too.', 'print(message, flush=True)'));
    const code = f.commit('and a code change');
    const r = await compute(f, base, code, SIGNALS);
    expect(groups(r)).toEqual(['pkg/app.py,pkg/utils.py']);
    expect(cohortOf(r, 'pkg/app.py').groupingReason).toBe('changed references: main1 → echo');
  });

  it('test-subject: a changed test named for a changed source joins it without a reference to a changed symbol', async () => {
    const f = fixture();
    f.write('src/parse.ts', 'export function parse(s: string): number {\n  return Number(s);\n}\n\nexport function other(): number {\n  return 1;\n}\n');
    f.write('src/format.ts', 'export function format(n: number): string {\n  return String(n);\n}\n');
    f.write('test/parse.test.ts', "import { other } from '../src/parse';\n\ntest('other', () => {\n  expect(other()).toBe(1);\n});\n");
    const base = f.commit('base');
    // Edits naming only what the base already names (a name new to the code would join them under `new-identifier`).
    f.write('src/parse.ts', 'export function parse(s: string): number {\n  return Number(String(s));\n}\n\nexport function other(): number {\n  return 1;\n}\n');
    f.write('src/format.ts', 'export function format(n: number): string {\n  return String(Number(n));\n}\n');
    f.write('test/parse.test.ts', "import { other } from '../src/parse';\n\ntest('other is one', () => {\n  expect(other()).toBe(1);\n});\n");
    const head = f.commit('head');
    const r = await compute(f, base, head);
    expect(groups(r)).toEqual(['src/format.ts', 'src/parse.ts,test/parse.test.ts']);
    expect(cohortOf(r, 'src/parse.ts').groupingReason).toBe('test ↔ subject: parse.test.ts tests parse.ts');
    expect(groups(await compute(f, base, head, ['changed-reference']))).toEqual(['src/format.ts', 'src/parse.ts', 'test/parse.test.ts']);
  });

  it('similar-edit: the same signature line added to two unrelated files joins them and says so; an idiom repeated in the file, a comment or a docstring does not', async () => {
    const DEFAULTS: FormationSignal[] = ['changed-reference', 'new-symbol-import', 'changed-import', 'code-change', 'test-subject', 'similar-edit'];
    // Two drivers with no reference between them; one commit adds the same option line to both.
    const driver = (name: string, extra: string) => `export function ${name}Driver(opts: { base: string }) {\n  const url = opts.base;\n${extra}  return { url };\n}\n`;
    const f = fixture();
    f.write('src/drivers/redis.ts', driver('redis', ''));
    f.write('src/drivers/http.ts', driver('http', ''));
    f.write('src/other/log.ts', 'export function log(s: string) {\n  console.log(s);\n}\n');
    const base = f.commit('base');
    f.write('src/drivers/redis.ts', driver('redis', '  const timeout = opts.timeout ?? 3000;\n'));
    f.write('src/drivers/http.ts', driver('http', '  const timeout = opts.timeout ?? 3000;\n'));
    f.write('src/other/log.ts', 'export function log(s: string) {\n  console.log(s.trim());\n}\n');
    const head = f.commit('one option in every driver');
    const r = await compute(f, base, head, DEFAULTS);
    expect(groups(r)).toEqual(['src/drivers/http.ts,src/drivers/redis.ts', 'src/other/log.ts']);
    expect(cohortOf(r, 'src/drivers/http.ts').groupingReason).toBe('the same edit: http.ts and redis.ts both add `const timeout = opts.timeout ?? 3000`');
    expect(groups(await compute(f, base, head, DEFAULTS.filter((x) => x !== 'similar-edit')))).toEqual(['src/drivers/http.ts', 'src/drivers/redis.ts', 'src/other/log.ts']);

    // The same line, but an idiom of each file (already there once more), or a comment or a docstring: no join.
    const g = fixture();
    const idiom = '  expect(result.exception).toBeUndefined();\n';
    g.write('test/a.test.ts', `test('a1', () => {\n${idiom}});\n`);
    g.write('test/b.test.ts', `test('b1', () => {\n${idiom}});\n`);
    g.write('pkg/one.py', 'def one():\n    """One."""\n    return 1\n');
    g.write('pkg/two.py', 'def two():\n    """Two."""\n    return 2\n');
    const base2 = g.commit('base');
    g.write('test/a.test.ts', `test('a1', () => {\n${idiom}});\n\ntest('a2', () => {\n  const result = 1;\n${idiom}});\n`);
    g.write('test/b.test.ts', `test('b1', () => {\n${idiom}});\n\ntest('b2', () => {\n  const result = 2;\n${idiom}});\n`);
    g.write('pkg/one.py', 'def one():\n    """One.\n\n    .. versionadded:: 6.0 of the package\n    """\n    # TODO: optimize this one later\n    return 1\n');
    g.write('pkg/two.py', 'def two():\n    """Two.\n\n    .. versionadded:: 6.0 of the package\n    """\n    # TODO: optimize this one later\n    return 2\n');
    const head2 = g.commit('idioms, comments, docstrings');
    expect(groups(await compute(g, base2, head2, DEFAULTS))).toEqual(['pkg/one.py', 'pkg/two.py', 'test/a.test.ts', 'test/b.test.ts']);
  });

  it('same-substitution: the same part of two different lines changed the same way joins their files and says so; a substitution unchanged files already hold does not', async () => {
    const OFF = DEFAULT_SIGNALS.filter((x) => x !== 'same-substitution');
    // Two tests of different features; one commit moves both off a public echo server. The lines around the URL
    // differ, so no whole line is shared (`similar-edit`), and a string's words are no identifiers (`shared-identifiers`).
    const cookies = (url: string) => `import got from '../src/index';\n\ntest('cookies are cleared on redirect', async () => {\n  const r = await got('/redirect', { headers: { location: ${url} } });\n  expect(r.headers.cookie).toBeUndefined();\n});\n`;
    const redirects = (url: string) => `import got from '../src/index';\n\ntest('follows a redirect', async () => {\n  const { body } = await got(${url}, { followRedirect: true });\n  expect(body).toBe('ok');\n});\n`;
    const f = fixture();
    f.write('src/index.ts', 'export default function got(url: string, options?: object) {\n  return fetch(url, options as RequestInit);\n}\n');
    f.write('src/util.ts', 'export function trim(s: string) {\n  return s.trim();\n}\n');
    f.write('test/cookies.test.ts', cookies("'https://httpbin.org/anything'"));
    f.write('test/redirects.test.ts', redirects("'https://httpbin.org/anything'"));
    const base = f.commit('base');
    f.write('test/cookies.test.ts', cookies("'https://example.com/'"));
    f.write('test/redirects.test.ts', redirects("'https://example.com/'"));
    f.write('src/util.ts', 'export function trim(s: string) {\n  return s.trimEnd();\n}\n');
    const head = f.commit('tests: no public echo server');
    const r = await compute(f, base, head);
    expect(groups(r)).toEqual(['src/util.ts', 'test/cookies.test.ts,test/redirects.test.ts']);
    expect(cohortOf(r, 'test/cookies.test.ts').groupingReason).toBe("the same substitution: cookies.test.ts and redirects.test.ts both change `'https://httpbin.org/anything'` to `'https://example.com/'`");
    expect(groups(await compute(f, base, head, OFF))).toEqual(['src/util.ts', 'test/cookies.test.ts', 'test/redirects.test.ts']);

    // The new text is already in two unchanged files: a migration spread file by file (`edit-idiom`), no join.
    const g = fixture();
    g.write('src/index.ts', 'export default function got(url: string, options?: object) {\n  return fetch(url, options as RequestInit);\n}\n');
    g.write('test/cookies.test.ts', cookies("'https://httpbin.org/anything'"));
    g.write('test/redirects.test.ts', redirects("'https://httpbin.org/anything'"));
    g.write('test/done1.test.ts', "import got from '../src/index';\n\ntest('one', async () => {\n  await got('https://example.com/');\n});\n");
    g.write('test/done2.test.ts', "import got from '../src/index';\n\ntest('two', async () => {\n  await got('https://example.com/', {});\n});\n");
    const base2 = g.commit('base');
    g.write('test/cookies.test.ts', cookies("'https://example.com/'"));
    g.write('test/redirects.test.ts', redirects("'https://example.com/'"));
    const head2 = g.commit('two more tests migrated');
    expect(groups(await compute(g, base2, head2))).toEqual(['test/cookies.test.ts', 'test/redirects.test.ts']);
    expect(groups(await compute(g, base2, head2, DEFAULT_SIGNALS.filter((x) => x !== 'edit-idiom')))).toEqual(['test/cookies.test.ts,test/redirects.test.ts']);
  });

  it('same-substitution reads a substitution from a removed line and the added line in its place: common ends dropped, short, saying something', () => {
    expect(substitutionOf("  const u = searchParameters.get('a');", "  const u = searchParams.get('a');")).toEqual({ key: '~searchParameters→searchParams', text: 'searchParams' });
    expect(substitutionOf('  return fn(value);', '  return parseArg(value, previous);')).toEqual({ key: '~fn ( value→parseArg ( value , previous', text: 'parseArg(value, previous' });
    // A pure removal stands for the removed text; a pure insertion for the inserted one.
    expect(substitutionOf('type A = string[] | number;', 'type A = number;')).toEqual({ key: '~string [ ] |→', text: 'string[] |' });
    expect(substitutionOf('def f(x):', 'def f(x) -> None:')).toEqual({ key: '~→- > None', text: '-> None' });
    expect(substitutionOf('x = 1;', 'x = 2;')).toBeUndefined(); // no word
    expect(substitutionOf('a(b, c, d, e, f, g, h);', 'z(y, x, w, v, u, t, s);')).toBeUndefined(); // a rewritten line
    // Inside a comment too: the same words replaced in two different comments are one edit (a moved project's URL).
    expect(substitutionOf('// see https://github.com/pressly/lg for more', '// see https://github.com/go-chi/httplog for more')).toEqual({ key: '~pressly / lg→go - chi / httplog', text: 'go-chi/httplog' });
    expect(substitutionOf('same(line);', 'same(line);')).toBeUndefined();
    // A literal the rewrite carries over is its argument: one rewrite applied with different values is one key.
    const one = substitutionOf('process.exit(1);', 'process.exitCode = 1;');
    expect(one).toEqual({ key: '~exit ( #1 )→exitCode = #1', text: 'exitCode = 1' });
    expect(substitutionOf('process.exit(2);', 'process.exitCode = 2;')!.key).toBe(one!.key);
    expect(substitutionOf("  exit('a')", "  exitCode = 'a'")!.key).toBe(one!.key);
    // A literal that changes is part of the edit.
    expect(substitutionOf('process.exit(1);', 'process.exitCode = 2;')!.key).toBe('~exit ( 1 )→exitCode = 2');
    // Unclosed quotes and long runs of backslashes tokenize in linear time (PR text is a tenant's input).
    const hostile = `x = "${'\\'.repeat(400)}${"'".repeat(300)}`;
    const t0 = performance.now();
    substitutionOf(hostile, hostile + ' y');
    expect(performance.now() - t0).toBeLessThan(200);
  });

  it('edit-idiom: a line two changed tests add that unchanged tests already hold is an idiom being spread, not one edit; a line new to the code still joins', async () => {
    const OFF = DEFAULT_SIGNALS.filter((x) => x !== 'edit-idiom');
    const spec = (name: string, setup: string) => `${setup}test('${name}', () => {\n  expect(${name}Value()).toBe(1);\n});\n`;
    const IDIOM = 'const client = makeClient({ retries: 2 });\n';
    const f = fixture();
    // Two tests migrated earlier hold the line unchanged; this change migrates two more (one commit each in the history it came from).
    f.write('test/done1.test.ts', spec('doneOne', IDIOM));
    f.write('test/done2.test.ts', spec('doneTwo', IDIOM));
    f.write('test/next1.test.ts', spec('nextOne', ''));
    f.write('test/next2.test.ts', spec('nextTwo', ''));
    const base = f.commit('base');
    f.write('test/next1.test.ts', spec('nextOne', IDIOM));
    f.write('test/next2.test.ts', spec('nextTwo', IDIOM));
    const head = f.commit('migrate two more tests');
    expect(groups(await compute(f, base, head))).toEqual(['test/next1.test.ts', 'test/next2.test.ts']);
    // Without the rule, `similar-edit` joins them on the spread line.
    const off = await compute(f, base, head, OFF);
    expect(groups(off)).toEqual(['test/next1.test.ts,test/next2.test.ts']);
    expect(cohortOf(off, 'test/next1.test.ts').groupingReason).toBe('the same edit: next1.test.ts and next2.test.ts both add `const client = makeClient({ retries: 2 })`');

    // A line no unchanged file holds (one edit in several places) still joins with the rule on.
    f.write('test/next1.test.ts', spec('nextOne', IDIOM + 'const token = issueToken({ scope: "all" });\n'));
    f.write('test/next2.test.ts', spec('nextTwo', IDIOM + 'const token = issueToken({ scope: "all" });\n'));
    const head2 = f.commit('a new line in both');
    expect(groups(await compute(f, head, head2))).toEqual(['test/next1.test.ts,test/next2.test.ts']);
  });

  it('tooling-config: the build and test tools\' configs of one directory join each other, not a source or another directory\'s config', async () => {
    const f = fixture();
    f.write('build.config.ts', "export default { entries: ['src/index'] };\n");
    f.write('vitest.config.ts', "export default { test: { environment: 'node' } };\n");
    f.write('demo/vite.config.ts', 'export default { root: "." };\n');
    f.write('src/index.ts', 'export const one = 1;\n');
    const base = f.commit('base');
    f.write('build.config.ts', "export default { entries: ['src/index'], declaration: true };\n");
    f.write('vitest.config.ts', "export default { test: { environment: 'node', coverage: {} } };\n");
    f.write('demo/vite.config.ts', 'export default { root: "./demo" };\n');
    f.write('src/index.ts', 'export const one = 2;\n');
    const head = f.commit('toolchain update');
    const r = await compute(f, base, head);
    expect(groups(r)).toEqual(['build.config.ts,vitest.config.ts', 'demo/vite.config.ts', 'src/index.ts']);
    expect(cohortOf(r, 'build.config.ts').groupingReason).toBe('tooling configuration of one directory: build.config.ts and vitest.config.ts');
    const without = DEFAULT_SIGNALS.filter((x) => x !== 'tooling-config');
    expect(groups(await compute(f, base, head, without))).toEqual(['build.config.ts', 'demo/vite.config.ts', 'src/index.ts', 'vitest.config.ts']);
  });

  it('shared-identifiers: two files whose changed lines name the same three rare identifiers join and say which; two of them, or one a third changed file also names, do not', async () => {
    const f = fixture();
    // 60 other indexed files: 5 % of 64 files is 3.2, so a name defined or used in three files is rare, `options` (in every file) is not.
    for (let i = 0; i < 60; i++) f.write(`src/misc/m${i}.ts`, `export function m${i}(options: number): number {\n  return options + ${i};\n}\n`);
    f.write('src/form.ts', 'export function knownLength(n: number): number {\n  return n;\n}\n\nexport function boundaryOf(n: number): number {\n  return n;\n}\n\nexport function chunkHeader(n: number): number {\n  return n;\n}\n');
    f.write('src/body.ts', 'export function size(x: number): number {\n  return x;\n}\n');
    f.write('test/upload.test.ts', "test('upload', () => {\n  expect(1).toBe(1);\n});\n");
    f.write('src/log.ts', 'export function log(x: number): number {\n  return x;\n}\n');
    const base = f.commit('base');
    f.write('src/body.ts', "import { knownLength, boundaryOf, chunkHeader } from './form';\n\nexport function size(x: number): number {\n  return knownLength(x) + boundaryOf(x) + chunkHeader(x);\n}\n");
    f.write('test/upload.test.ts', "import { knownLength, boundaryOf, chunkHeader } from '../src/form';\n\ntest('upload', () => {\n  expect(chunkHeader(2) - boundaryOf(1)).toBe(knownLength(1));\n});\n");
    f.write('src/log.ts', 'export function log(x: number): number {\n  return x + 1;\n}\n');
    const head = f.commit('thread the form helpers through the body and its test');
    const SIGNALS: FormationSignal[] = [...DEFAULT_SIGNALS];
    expect(SIGNALS).toContain('shared-identifiers');
    const r = await compute(f, base, head);
    expect(groups(r)).toEqual(['src/body.ts,test/upload.test.ts', 'src/log.ts']);
    expect(cohortOf(r, 'src/body.ts').groupingReason).toBe('rare identifiers both change: body.ts and upload.test.ts both change lines naming `boundaryOf`, `chunkHeader`, `knownLength`');
    // A test and a source: `test-names` would join this pair too (three names, none elsewhere), and `test-affinity` (their
    // words, the two lone cohorts beside a third file), so all three are off here.
    expect(groups(await compute(f, base, head, DEFAULT_SIGNALS.filter((x) => x !== 'shared-identifiers' && x !== 'test-names' && x !== 'test-affinity')))).toEqual(['src/body.ts', 'src/log.ts', 'test/upload.test.ts']);

    // Only two shared names; or a third changed file naming one of them; or names every file uses: apart (without
    // `test-affinity`, the looser fallback on the words of a lone test and a lone source, which joins the two-name pair).
    SIGNALS.splice(SIGNALS.indexOf('test-affinity'), 1);
    f.write('src/body.ts', "import { knownLength, boundaryOf } from './form';\n\nexport function size(x: number): number {\n  return knownLength(x) + boundaryOf(x);\n}\n");
    f.write('test/upload.test.ts', "import { knownLength, boundaryOf } from '../src/form';\n\ntest('upload', () => {\n  expect(boundaryOf(1)).toBe(knownLength(1));\n});\n");
    const two = f.commit('two names only');
    expect(groups(await compute(f, base, two, SIGNALS))).toEqual(['src/body.ts', 'src/log.ts', 'test/upload.test.ts']);
    f.write('src/body.ts', "import { knownLength, boundaryOf, chunkHeader } from './form';\n\nexport function size(x: number): number {\n  return knownLength(x) + boundaryOf(x) + chunkHeader(x);\n}\n");
    f.write('test/upload.test.ts', "import { knownLength, boundaryOf, chunkHeader } from '../src/form';\n\ntest('upload', () => {\n  expect(chunkHeader(2) - boundaryOf(1)).toBe(knownLength(1));\n});\n");
    f.write('src/log.ts', "import { chunkHeader } from './form';\n\nexport function log(x: number): number {\n  return chunkHeader(x);\n}\n");
    const third = f.commit('a third file names one of them');
    expect(groups(await compute(f, base, third, SIGNALS))).toEqual(['src/body.ts', 'src/log.ts', 'test/upload.test.ts']);
  });

  it('shared-identifiers counts files per identifier (once per file, three characters or more) and reads changed lines without comments, string literals or reserved words', async () => {
    const texts = new Map([['b1', 'const knownLength = knownLength2(knownLength); // ab'], ['b2', 'knownLength; ab']]);
    const f = await identifierFrequency([{ blob: 'b1' }, { blob: 'b2' }, { blob: 'b1' }], async (sha) => Buffer.from(texts.get(sha) ?? ''), 'ws-a');
    expect(f.files).toBe(3);
    expect(f.counts.get('knownLength')).toBe(3);
    expect(f.counts.get('knownLength2')).toBe(2);
    expect(f.counts.has('ab')).toBe(false);
    const patch = ['diff --git a/x.ts b/x.ts', '--- a/x.ts', '+++ b/x.ts', '@@ -1,2 +1,2 @@', "-const header = chunkHeader('charset=utf-8');", '+// boundaryOf in a comment', "+return await formBoundary(\"knownLength\");", ''].join('\n');
    expect([...(changedIdentifiersOf(patch, new Set(['x.ts'])).get('x.ts') ?? [])].sort()).toEqual(['chunkHeader', 'formBoundary', 'header']);
  });

  it('shared-identifiers reuses a blob\'s identifiers only within one workspace (no cross-tenant timing oracle)', async () => {
    const reads: string[] = [];
    const read = (who: string) => async (sha: string) => {
      reads.push(`${who}:${sha}`);
      return Buffer.from('const secretHelper = otherHelper();');
    };
    const blob = 'c0ffee-scope-test';
    const hits0 = identifierCacheHits();
    await identifierFrequency([{ blob }], read('a'), '/data/workspaces/tenant-a');
    await identifierFrequency([{ blob }], read('b'), '/data/workspaces/tenant-b');
    // Tenant b's computation read the blob itself: nothing tenant a did made it faster.
    expect(reads).toEqual(['a:c0ffee-scope-test', 'b:c0ffee-scope-test']);
    expect(identifierCacheHits()).toBe(hits0);
    // Within one workspace the cache answers.
    await identifierFrequency([{ blob }], read('a'), '/data/workspaces/tenant-a');
    expect(reads).toHaveLength(2);
    expect(identifierCacheHits()).toBe(hits0 + 1);
  });

  it('test-names: a feature-named test that reaches the code only through the entry point joins the changed source whose changed lines name its rare names and string literals; two of them join nothing', async () => {
    const f = fixture();
    // 24 other indexed files name `options`, `response` and `timeout`: never rare. 15 % of 30 files is 4.5, so a name in two or three files is rare.
    for (let i = 0; i < 24; i++) f.write(`src/misc/m${i}.ts`, `export function m${i}(options: number, response: number, timeout: number): number {\n  return options + response + timeout + ${i};\n}\n`);
    const core = (body: string) => `export class Request {\n  private onResponse(response: { timings: { phases: { dns: number }; lookup?: number; socket: number } }): void {\n${body}  }\n}\n`;
    f.write('src/core.ts', core('    void response;\n'));
    f.write('src/retry.ts', 'export function retryDelay(attempt: number): number {\n  return attempt * 100;\n}\n');
    f.write('src/index.ts', "import { Request } from './core';\n\nexport default function got(url: string): Request {\n  void url;\n  return new Request();\n}\n");
    const test = (body: string) => `import got from '../src/index';\n\ntest('basic', () => {\n  got('/');\n});\n${body}`;
    f.write('test/timings.ts', test(''));
    f.write('test/timeout.ts', test(''));
    const base = f.commit('base');
    const fix = "    const { timings } = response;\n    if (timings.lookup === undefined) throw new Error('No DNS lookup for IP addresses');\n    timings.phases.dns = timings.socket - timings.lookup;\n";
    f.write('src/core.ts', core(fix));
    f.write('src/retry.ts', 'export function retryDelay(attempt: number): number {\n  return attempt * 200;\n}\n');
    f.write('test/timings.ts', test("\ntest('dns phase of an IP address', async () => {\n  const { timings } = await got('http://127.0.0.1/');\n  expect(timings.lookup).toBeUndefined();\n  expect(() => got('')).toThrow('No DNS lookup for IP addresses');\n});\n"));
    f.write('test/timeout.ts', test("\ntest('slow server', async () => {\n  const startedAt = Date.now();\n  got('/slow');\n  expect(Date.now() - startedAt).toBeLessThan(500);\n});\n"));
    const head = f.commit('fix the DNS phase with its regression test, and a timeout test');
    expect(DEFAULT_SIGNALS).toContain('test-names');
    const r = await compute(f, base, head);
    expect(groups(r)).toEqual(['src/core.ts,test/timings.ts', 'src/retry.ts', 'test/timeout.ts']);
    expect(cohortOf(r, 'test/timings.ts').groupingReason).toBe("a test and the source it names: timings.ts and core.ts both change lines naming `lookup`, `timings`, `'No DNS lookup for IP addresses'`");
    // Off, nothing else joins them (but `test-affinity`, the fallback on the same words, off too): the test names only `got`,
    // which is unchanged; the names are too common for shared-identifiers.
    expect(groups(await compute(f, base, head, DEFAULT_SIGNALS.filter((x) => x !== 'test-names' && x !== 'test-affinity')))).toEqual(['src/core.ts', 'src/retry.ts', 'test/timeout.ts', 'test/timings.ts']);

    // Without the message only two names are shared: apart.
    f.write('test/timings.ts', test("\ntest('dns phase of an IP address', async () => {\n  const { timings } = await got('http://127.0.0.1/');\n  expect(timings.lookup).toBeUndefined();\n});\n"));
    const two = f.commit('the message assertion dropped');
    // (`test-affinity`, the looser fallback on their words, joins the two-name pair: off here.)
    expect(groups(await compute(f, base, two, DEFAULT_SIGNALS.filter((x) => x !== 'test-affinity')))).toEqual(['src/core.ts', 'src/retry.ts', 'test/timeout.ts', 'test/timings.ts']);
  });

  it('test-names reads whole one-line string literals of eight characters or more from changed lines, not from comments, templates with substitutions or escapes', () => {
    const patch = ['diff --git a/x.ts b/x.ts', '--- a/x.ts', '+++ b/x.ts', '@@ -1,2 +1,4 @@', "-throw new Error('No URL protocol specified');", "+// 'a commented message'", '+const h = "content-encoding" + `${a} b c d e f g` + \'short\';', "+log('it\\'s escaped here');", ''].join('\n');
    expect([...(changedLiteralsOf(patch, new Set(['x.ts'])).get('x.ts') ?? [])].sort()).toEqual(['No URL protocol specified', 'content-encoding']);
  });

  it('test-names pairs from one name → files index: a name of exactly a test and a source counts, a third file\'s use removes it; 2,000 tests beside 2,000 sources pair one to one', () => {
    const names = new Map<string, { identifiers: Set<string>; literals: Set<string> }>();
    const counts = new Map<string, number>();
    const N = 2000;
    for (let i = 0; i < N; i++) {
      const own = [`alpha${i}`, `beta${i}`, `gamma${i}`];
      names.set(`test/t${i}.ts`, { identifiers: new Set([...own, 'shared']), literals: new Set([`message number ${i}`]) });
      names.set(`src/s${i}.ts`, { identifiers: new Set([...own, 'shared']), literals: new Set(i === 0 ? [] : [`message number ${i}`]) });
      for (const n of own) counts.set(n, 2);
    }
    counts.set('shared', 2 * N);
    names.set('src/other.ts', { identifiers: new Set(['gamma1']), literals: new Set() });
    const tests = [...names.keys()].filter((p) => p.startsWith('test/'));
    const sources = new Set([...names.keys()].filter((p) => p.startsWith('src/')));
    const c = testNameCandidates(tests, sources, names, { counts, files: 2 * N + 1 });
    expect(c.size).toBe(N);
    expect(c.get('test/t0.ts')).toEqual([{ source: 'src/s0.ts', names: ['alpha0', 'beta0', 'gamma0'] }]);
    expect(c.get('test/t1.ts')).toEqual([{ source: 'src/s1.ts', names: ['alpha1', 'beta1', "'message number 1'"] }]);
    expect(testNamesSubject(c.get('test/t7.ts'), (p) => p)?.source).toBe('src/s7.ts');
    // Two sources of different cohorts with as many names: nothing; of one cohort: the first.
    const tie = [{ source: 'src/a.ts', names: ['x', 'y', 'z'] }, { source: 'src/b.ts', names: ['u', 'v', 'w'] }];
    expect(testNamesSubject(tie, (p) => p)).toBeUndefined();
    expect(testNamesSubject(tie, () => 'one')?.source).toBe('src/a.ts');
    expect(testNamesSubject([{ source: 'src/a.ts', names: ['x', 'y'] }], (p) => p)).toBeUndefined();
  });

  it('type-test: a tsd type test joins the declaration file beside it (index.test-d.ts ↔ index.d.ts, a generic stem); index.test.ts ↔ index.ts and a type test of another directory do not', async () => {
    const f = fixture();
    const decl = (extra: string) => `export interface Options {\n  readonly cwd?: string;\n${extra}}\n\nexport function run(file: string, options?: Options): Promise<string>;\n`;
    const typeTest = (extra: string) => `import { expectType } from 'tsd';\nimport { run } from './index.js';\n\nexpectType<Promise<string>>(run('unicorns'));\n${extra}`;
    // The implementation already reads `preferLocal`: the name is not new, so `new-identifier` has nothing to join.
    const impl = (v: number) => `export function run(file, options = {}) {\n  return Promise.resolve(String(file) + ${v} + Boolean(options.preferLocal));\n}\n`;
    f.write('index.js', impl(1));
    f.write('index.d.ts', decl(''));
    f.write('index.test-d.ts', typeTest(''));
    f.write('other/index.test-d.ts', "import { expectType } from 'tsd';\n\nexpectType<number>(1);\n");
    f.write('src/index.ts', 'export const version = 1;\n');
    f.write('src/index.test.ts', "import { version } from './index';\n\ntest('v', () => {\n  expect(typeof version).toBe('number');\n});\n");
    const base = f.commit('base');
    // The declarations gain an option and the type test checks it; the type test names only `run` (unchanged).
    f.write('index.d.ts', decl('  readonly preferLocal?: boolean;\n'));
    f.write('index.test-d.ts', typeTest("expectType<Promise<string>>(run('unicorns', {preferLocal: true}));\n"));
    f.write('other/index.test-d.ts', "import { expectType } from 'tsd';\n\nexpectType<number>(2);\n");
    f.write('src/index.ts', 'export const version = 2;\n');
    f.write('src/index.test.ts', "import { version } from './index';\n\ntest('v', () => {\n  expect(version > 0).toBe(true);\n});\n");
    const head = f.commit('a new option, its type test, and unrelated edits');
    expect(DEFAULT_SIGNALS).toContain('type-test');
    const r = await compute(f, base, head);
    expect(groups(r)).toContain('index.d.ts,index.test-d.ts');
    expect(groups(r)).toContain('other/index.test-d.ts');
    expect(cohortOf(r, 'index.d.ts').groupingReason).toBe('a type test and its declarations: index.test-d.ts checks index.d.ts');
    // `src/index.test.ts` ↔ `src/index.ts` is joined (or not) by its reference, never by this signal.
    expect(cohortOf(r, 'src/index.ts').groupingReason ?? '').not.toContain('type test');
    // Off, nothing joins the pair: `run` is unchanged, and `preferLocal` alone is no shared-identifiers or test-names evidence
    // (`test-affinity`, the fallback on their words, off too).
    const off = await compute(f, base, head, DEFAULT_SIGNALS.filter((x) => x !== 'type-test' && x !== 'test-affinity'));
    expect(groups(off)).toContain('index.d.ts');
    expect(groups(off)).toContain('index.test-d.ts');
  });

  it('declared-member: a declaration file and the JavaScript beside it that both change one member join and say which; a doc-only mention or another member does not', async () => {
    const f = fixture();
    // sindresorhus's layout: hand-written typings beside the code, JSDoc blocks whose lines carry no leading `*`.
    const decl = (extra: string) => `export type Shell = {\n\t(command: string): Promise<string>;\n\n\t/**\n\tSame as $ but synchronous.\n\n\t@example\n\tconst {stdout} = $.sync('echo');\n\t*/\n\tsync(command: string): string;\n${extra}};\n\nexport const $: Shell;\n`;
    const impl = (extra: string) => `export function $(command) {\n\treturn Promise.resolve(command);\n}\n\n$.sync = command => String(command);\n${extra}`;
    f.write('index.d.ts', decl(''));
    f.write('index.js', impl(''));
    const other = (member: string, v: number) => `export type Options = {\n\treadonly ${member}?: number;\n};\n\nexport function wait(options?: Options): Promise<${v === 1 ? 'void' : 'number'}>;\n`;
    f.write('lib/wait.d.ts', other('timeout', 1));
    f.write('lib/wait.js', 'export function wait(options = {}) {\n\treturn new Promise(resolve => setTimeout(resolve, options.timeout));\n}\n');
    const glob = (extra: string) => `export type GitignoreOptions = {\n\treadonly cwd?: string;\n${extra}};\n\nexport function isIgnored(options?: GitignoreOptions): boolean;\n`;
    f.write('lib/glob.d.ts', glob('\treadonly ignore?: readonly string[];\n'));
    f.write('lib/glob.js', 'export function isIgnored(options = {}) {\n\tconst ignore = [...(options.ignore ?? [])];\n\treturn ignore.length > 0;\n}\n');
    // As in globby, the option is everywhere: too common for `member-use` to read anything into it.
    for (let i = 0; i < 10; i++) f.write(`lib/tasks/t${i}.js`, `export const t${i} = (options) => options.ignore ?? ${i};\n`);
    const base = f.commit('base');
    // `index.d.ts` declares a new member `s`, `index.js` sets it: one piece of work with no reference between them.
    f.write('index.d.ts', decl('\n\t/**\n\tAn alias of $.sync: $.verbose is not it.\n\t*/\n\ts(command: string): string;\n'));
    f.write('index.js', impl('$.s = $.sync;\n'));
    // `lib/wait.d.ts` renames an option while `lib/wait.js` starts reading another: no shared member.
    f.write('lib/wait.d.ts', other('delay', 2));
    f.write('lib/wait.js', 'export function wait(options = {}) {\n\tif (options.signal) options.signal.throwIfAborted();\n\treturn new Promise(resolve => setTimeout(resolve, options.timeout));\n}\n');
    // `lib/glob.d.ts` drops an option of one type while `lib/glob.js` rewrites a line reading an option of that name it
    // reads before and after: a member named on both sides is no evidence.
    f.write('lib/glob.d.ts', glob(''));
    f.write('lib/glob.js', 'export function isIgnored(options = {}) {\n\tconst ignore = [...(options.ignore ?? []), ...(options.extra ?? [])];\n\treturn ignore.length > 0;\n}\n');
    const head = f.commit('an alias, and three unrelated edits');
    expect(DEFAULT_SIGNALS).toContain('declared-member');
    const r = await compute(f, base, head);
    expect(groups(r)).toContain('index.d.ts,index.js');
    expect(cohortOf(r, 'index.js').groupingReason).toBe('a declaration and its implementation: index.d.ts and index.js both change `s`');
    expect(groups(r)).toContain('lib/wait.d.ts');
    expect(groups(r)).toContain('lib/wait.js');
    expect(groups(r)).toContain('lib/glob.d.ts');
    expect(groups(r)).toContain('lib/glob.js');
    const off = await compute(f, base, head, DEFAULT_SIGNALS.filter((x) => x !== 'declared-member' && x !== 'test-affinity'));
    expect(groups(off)).toContain('index.d.ts');
    expect(groups(off)).toContain('index.js');
  });

  it('declared-member reads declared members from a declaration\'s code lines and touched members from an implementation\'s, pairs X.d.ts with X.js of its own directory, and reads a long line in bounded time', () => {
    expect(implementationOf('index.d.ts', new Set(['index.js', 'index.d.ts']))).toBe('index.js');
    expect(implementationOf('lib/a.d.mts', new Set(['lib/a.mjs']))).toBe('lib/a.mjs');
    expect(implementationOf('lib/a.d.cts', new Set(['lib/a.js']))).toBeUndefined();
    expect(implementationOf('types/index.d.ts', new Set(['index.js']))).toBeUndefined();
    expect(implementationOf('index.ts', new Set(['index.js']))).toBeUndefined();
    expect([...declaredNamesOf('\treadonly lines?: boolean;')]).toEqual(['lines']);
    expect([...declaredNamesOf('\tpipe<T>(target: T): T;')]).toEqual(['pipe']);
    expect([...declaredNamesOf('export function execaNode(file: string): Result;')]).toEqual(['execaNode']);
    expect([...declaredNamesOf("\tconst {stdout} = await execa('echo', ['a: b']);")].sort()).toEqual([]);
    expect([...declaredNamesOf('\treturn x;')]).toEqual([]);
    expect([...touchedNamesOf("const {lines, encoding} = normalize(options.lines, {buffer: true, label: 'x.y'});")].sort()).toEqual(['buffer', 'encoding', 'label', 'lines']);
    expect([...touchedNamesOf('$.s = $.sync;')].sort()).toEqual(['s', 'sync']);
    expect([...touchedNamesOf('this?.stop?.()')]).toEqual(['stop']);
    const long = `x.${'a'.repeat(200_000)}: '${'b'.repeat(200_000)}`;
    const t0 = performance.now();
    expect(touchedNamesOf(long).size).toBe(0);
    expect(declaredNamesOf(long).size).toBe(0);
    expect(performance.now() - t0).toBeLessThan(50);
  });

  it('member-use: a member one source declares on a changed line and one other file accesses on a changed line joins them, when the name is rare; a common name does not', async () => {
    const f = fixture();
    for (let i = 0; i < 80; i++) f.write(`src/misc/m${i}.ts`, `export function m${i}(o: { timeout: number }): number {\n  return o.timeout + ${i};\n}\n`);
    // The name is not new to the repository (so \`new-identifier\` has nothing to say), only rare in it.
    f.write('src/legacy.ts', 'export const legacy = { _headers: undefined };\n');
    const proxy = (extra: string, init: string) => `export class ResponseProxy {\n  headers: Headers;\n${extra}  constructor() {\n    this.headers = ${init};\n  }\n}\n`;
    f.write('src/adapters/proxy.ts', proxy('', 'new Headers()'));
    const prepare = (expr: string) => `import type { ResponseProxy } from './adapters/proxy';\n\nexport function prepare(res: { response: ResponseProxy & Record<string, unknown> }) {\n  return { headers: ${expr} };\n}\n`;
    f.write('src/prepare.ts', prepare('res.response.headers'));
    f.write('src/timer.ts', 'export class Timer {\n  timeout: number = 1;\n}\n');
    f.write('src/wait.ts', 'export function wait(o: { timeout: number }): number {\n  return o.timeout;\n}\n');
    const base = f.commit('base');
    // The proxy keeps its headers in a new private field that prepare() now reads: no resolved edge (the member of an
    // inferred receiver), no name new to the repository; only the field's declaration and its use.
    f.write('src/adapters/proxy.ts', proxy('  _headers: Headers;\n', 'this._headers = new Headers()'));
    f.write('src/prepare.ts', prepare('res.response._headers'));
    // `timeout` is declared by one and accessed by the other, but 80 other files name it: no evidence.
    f.write('src/timer.ts', 'export class Timer {\n  timeout: number = 2;\n}\n');
    f.write('src/wait.ts', 'export function wait(o: { timeout: number }): number {\n  return o.timeout * 2;\n}\n');
    const head = f.commit('a private headers field and its reader; two unrelated edits');
    expect(DEFAULT_SIGNALS).toContain('member-use');
    const r = await compute(f, base, head);
    expect(groups(r)).toContain('src/adapters/proxy.ts,src/prepare.ts');
    expect(cohortOf(r, 'src/prepare.ts').groupingReason).toBe('a member declared and used: proxy.ts declares `_headers`, which prepare.ts changes lines accessing');
    expect(groups(r)).toContain('src/timer.ts');
    expect(groups(r)).toContain('src/wait.ts');
    const off = await compute(f, base, head, DEFAULT_SIGNALS.filter((x) => x !== 'member-use' && x !== 'test-affinity'));
    expect(groups(off)).toContain('src/adapters/proxy.ts');
    expect(groups(off)).toContain('src/prepare.ts');
  });

  it('member-use reads a declaration only from a field, a property signature or a method with a body or return type; a call opening a line declares nothing', () => {
    expect(memberDeclarationOf('  _headers: Headers;')).toBe('_headers');
    expect(memberDeclarationOf('  readonly _internals?: Internals')).toBe('_internals');
    expect(memberDeclarationOf('  unstable_onInit(store) {')).toBe('unstable_onInit');
    expect(memberDeclarationOf('  close(): Promise<void>;')).toBe('close');
    expect(memberDeclarationOf('  async fetch<T>(url: string): Promise<T> {')).toBe('fetch');
    expect(memberDeclarationOf('  before(() => {')).toBeUndefined();
    expect(memberDeclarationOf('  setup(options);')).toBeUndefined();
    expect(memberDeclarationOf('  if (x) {')).toBeUndefined();
    expect(memberDeclarationOf("  const a = 'b: c';")).toBeUndefined();
    expect([...accessedMembersOf("event.response?._headers || res['x.y']")]).toEqual(['response', '_headers']);
    const long = `${'a'.repeat(200_000)}(: '${'b'.repeat(200_000)}`;
    const t0 = performance.now();
    expect(memberDeclarationOf(long)).toBeUndefined();
    expect(accessedMembersOf(long).size).toBe(0);
    expect(performance.now() - t0).toBeLessThan(50);
  });

  it('typeTestSubject pairs X.test-d.ts with X.d.ts (.d.mts, .d.cts) of its own directory only', () => {
    expect(typeTestSubject('index.test-d.ts', ['index.d.ts', 'index.js'])).toBe('index.d.ts');
    expect(typeTestSubject('typings/index.test-d.ts', ['typings/index.d.ts', 'index.d.ts'])).toBe('typings/index.d.ts');
    expect(typeTestSubject('source/index.test-d.mts', ['source/index.d.mts'])).toBe('source/index.d.mts');
    expect(typeTestSubject('test-d/index.test-d.ts', ['index.d.ts'])).toBeUndefined();
    expect(typeTestSubject('index.test.ts', ['index.d.ts'])).toBeUndefined();
    expect(typeTestSubject('index.test-d.ts', ['index.ts'])).toBeUndefined();
  });

  it('test-titles: a feature-named test whose added test case is titled for what one changed source changes joins it; a title word a third changed file also names joins nothing', async () => {
    const f = fixture();
    // 24 other indexed files name `options`, `response` and `timeout`: never rare (15 % of 29 files is 4.35).
    for (let i = 0; i < 24; i++) f.write(`src/misc/m${i}.ts`, `export function m${i}(options: number, response: number, timeout: number): number {\n  return options + response + timeout + ${i};\n}\n`);
    const core = (getter: string) => `export class Request {\n  private _request?: { reusedSocket: boolean };\n\n  get reusedSocket(): boolean | undefined {\n    ${getter}\n  }\n}\n`;
    f.write('src/core.ts', core('return this._request!.reusedSocket;'));
    const retry = (body: string) => `export function retryDelay(attempt: number): number {\n${body}}\n`;
    f.write('src/retry.ts', retry('  return attempt * 100;\n'));
    f.write('src/index.ts', "import { Request } from './core';\n\nexport default function got(url: string): Request {\n  void url;\n  return new Request();\n}\n");
    const test = (body: string) => `import got from '../src/index';\n\ntest('basic', () => {\n  got('/');\n});\n${body}`;
    f.write('test/stream.ts', test(''));
    f.write('test/timeout.ts', test(''));
    const base = f.commit('base');
    f.write('src/core.ts', core('return this._request?.reusedSocket;'));
    f.write('src/retry.ts', retry('  return attempt * 200;\n'));
    // The test's code names only `got` (unchanged) and a string: the title is all that says what it is about.
    f.write('test/stream.ts', test("\ntest('reusedSocket getter', () => {\n  expect(Object.keys(got('/'))).toContain('socket');\n});\n"));
    f.write('test/timeout.ts', test("\ntest('slow server', () => {\n  const startedAt = Date.now();\n  got('/slow');\n  expect(Date.now() - startedAt).toBeLessThan(500);\n});\n"));
    const head = f.commit('fix the getter with its regression test, and a timeout test');
    expect(DEFAULT_SIGNALS).toContain('test-titles');
    const r = await compute(f, base, head);
    expect(groups(r)).toEqual(['src/core.ts,test/stream.ts', 'src/retry.ts', 'test/timeout.ts']);
    expect(cohortOf(r, 'test/stream.ts').groupingReason).toBe('a test titled for the change: stream.ts adds test cases titled for `reusedSocket`, which core.ts changes lines naming');
    // Off, nothing else joins them (but `test-affinity`, the fallback on the same words, off too): one shared name is no
    // test-names evidence, and no reference reaches the getter.
    expect(groups(await compute(f, base, head, DEFAULT_SIGNALS.filter((x) => x !== 'test-titles' && x !== 'test-affinity')))).toEqual(['src/core.ts', 'src/retry.ts', 'test/stream.ts', 'test/timeout.ts']);

    // The other source's changed lines name it too: the title no longer says which change the test is about.
    f.write('src/retry.ts', retry('  const reusedSocket = attempt > 1;\n  return reusedSocket ? 0 : attempt * 200;\n'));
    const ambiguous = f.commit('the retry delay names it as well');
    expect(groups(await compute(f, base, ambiguous))).toEqual(['src/core.ts', 'src/retry.ts', 'test/stream.ts', 'test/timeout.ts']);
  });

  it('test-titles reads the titles of test cases on added lines (JS/TS calls, Python and Go test functions), and pairs a word only with a source that alone names it, rare, case kept, no declaration file', () => {
    expect(titleWordsOf("test('beforeError hook is called for ERR_UNSUPPORTED_PROTOCOL', async t => {")).toEqual(['beforeError', 'hook', 'is', 'called', 'for', 'ERR_UNSUPPORTED_PROTOCOL']);
    expect(titleWordsOf('it.skip("works with a keepAlive agent", () => {')).toEqual(['works', 'with', 'a', 'keepAlive', 'agent']);
    // A title with escapes still reads; a PR line of backslashes with no closing quote is no title, read in linear time
    // (an ambiguous backslash rule backtracked exponentially: 38 backslashes took a second, 60 would take hours).
    expect(titleWordsOf("test('isn\\'t escaped \\\\ twice', () => {")).toEqual(['isn', 't', 'escaped', 'twice']);
    const started = performance.now();
    expect(titleWordsOf("test('" + '\\'.repeat(5000))).toEqual([]);
    expect(titleWordsOf('test("' + '\\a'.repeat(5000))).toEqual([]);
    expect(performance.now() - started).toBeLessThan(500);
    expect(titleWordsOf('def test_get_os_args(runner):')).toEqual(['get_os_args', 'get', 'os', 'args']);
    expect(titleWordsOf('func TestRouterMount(t *testing.T) {')).toEqual(['RouterMount', 'Router', 'Mount']);
    expect(titleWordsOf('const reusedSocket = test;')).toEqual([]);
    const patch = ['diff --git a/t.ts b/t.ts', '--- a/t.ts', '+++ b/t.ts', '@@ -1,2 +1,3 @@', "-test('removedTitle case', () => {});", "+// test('commentedTitle case', () => {});", "+test('_privateName and tiny ok', () => {});", ''].join('\n');
    expect([...(changedTitleWordsOf(patch, new Set(['t.ts'])).get('t.ts') ?? [])].sort()).toEqual(['privateName', 'tiny']);

    const frequency = { counts: new Map([['_privateName', 1], ['Returns', 1], ['everywhere', 90], ['typed', 1], ['shared', 1]]), files: 100 };
    const ids = new Map<string, Set<string>>([
      ['src/a.ts', new Set(['_privateName', 'Returns', 'everywhere', 'shared'])],
      ['src/b.ts', new Set(['shared'])],
      ['src/index.d.ts', new Set(['typed'])],
      ['test/t.ts', new Set()],
    ]);
    const words = new Map([['test/t.ts', new Set(['privateName', 'returns', 'everywhere', 'shared', 'typed'])]]);
    // `privateName` (leading `_` dropped) pairs; `returns` is no `Returns`; `everywhere` is in 90 % of the files; `shared` is named by two sources; `typed` only by a declaration file.
    expect(testTitleCandidates(['test/t.ts'], new Set(['src/a.ts', 'src/b.ts', 'src/index.d.ts']), words, ids, frequency).get('test/t.ts')).toEqual([{ source: 'src/a.ts', words: ['privateName'] }]);
    // A tie between two cohorts joins nothing; within one cohort it is the same choice.
    const tie = [{ source: 'src/a.ts', words: ['x'] }, { source: 'src/b.ts', words: ['y'] }];
    expect(testTitlesSubject(tie, (p) => p)).toBeUndefined();
    expect(testTitlesSubject(tie, () => 'one')?.source).toBe('src/a.ts');
  });

  it('test-affinity: a lone regression test whose added lines share the words of the fix (not its identifiers, nor a title word) joins it when it is clearly the closest of two tests; with one test and one source, or off, nothing joins', async () => {
    const f = fixture();
    // 24 other indexed files name `options`, `response` and `timeout`: words in more than half of the files weigh nothing.
    for (let i = 0; i < 24; i++) f.write(`src/misc/m${i}.ts`, `export function m${i}(options: number, response: number, timeout: number): number {\n  return options + response + timeout + ${i};\n}\n`);
    const core = (body: string) => `export function computeDelay(attemptCount: number, retryAfterSeconds: number): number {\n${body}}\n`;
    f.write('src/core.ts', core('  void retryAfterSeconds;\n  return attemptCount * 100;\n'));
    f.write('src/index.ts', "import { computeDelay } from './core';\n\nexport default async function got(url: string, options?: object): Promise<number[]> {\n  void url;\n  void options;\n  return [computeDelay(1, 1)];\n}\n");
    const test = (body: string) => `import got from '../src/index';\n\ntest('basic', async () => {\n  await got('/');\n});\n${body}`;
    f.write('test/retry.ts', test(''));
    f.write('test/timeout.ts', test(''));
    const base = f.commit('base');
    f.write('src/core.ts', core('  const backoffDelay = Math.min(retryAfterSeconds * 1000, attemptCount * 100);\n  return backoffDelay;\n'));
    // The regression test reaches the fix only through `got(…)`, shares no identifier with it and no title word is one of
    // its identifiers (`retryAfterSeconds`, `attemptCount`): only the words say what it is about.
    f.write('test/retry.ts', test("\ntest('backs off by the retry-after seconds between attempts', async () => {\n  const delays = await got('/', { retry: { limit: 2 } });\n  expect(delays).toEqual([1000, 2000]);\n});\n"));
    const oneTest = f.commit('the fix and its regression test');
    f.write('test/timeout.ts', test("\ntest('slow server', async () => {\n  const startedAt = Date.now();\n  await got('/slow');\n  expect(Date.now() - startedAt).toBeLessThan(500);\n});\n"));
    const head = f.commit('and a timeout test');
    expect(DEFAULT_SIGNALS).toContain('test-affinity');
    const r = await compute(f, base, head);
    expect(groups(r)).toEqual(['src/core.ts,test/retry.ts', 'test/timeout.ts']);
    expect(cohortOf(r, 'test/retry.ts').groupingReason).toMatch(/^a test closest in words to the change: retry\.ts adds lines whose words are closest to core\.ts's changed lines \(`[a-z]+`, `[a-z]+`, `[a-z]+`, `[a-z]+` and 1 more; affinity 0\.\d\d, next 0\.00\)$/);
    // Off, nothing else joins them: no reference reaches the fix, no shared identifier, no title word it names.
    expect(groups(await compute(f, base, head, DEFAULT_SIGNALS.filter((x) => x !== 'test-affinity')))).toEqual(['src/core.ts', 'test/retry.ts', 'test/timeout.ts']);
    // One test-only change beside one source-only change: nothing to choose between, nothing joins.
    expect(groups(await compute(f, base, oneTest))).toEqual(['src/core.ts', 'test/retry.ts']);
  });

  it('test-affinity reads words (identifier parts, string words, stemmed) and joins only a clear, mutual best above the floor', () => {
    expect(affinityWordsOf("const delays = await got('retry-after seconds', { calculateRetryDelay: HTTPServer });")).toEqual(['delay', 'got', 'retry', 'after', 'second', 'calculate', 'retry', 'delay', 'http', 'server']);
    expect(['retries', 'destroyed', 'process', 'classes', 'handling', 'as'].map(stem)).toEqual(['retry', 'destroy', 'process', 'class', 'handl', 'as']);
    // PR text is a tenant's input: a line of one long identifier (uppercase runs, alternating case, digits) reads in linear time.
    const started = performance.now();
    for (const line of ['A'.repeat(200_000) + 'a', 'Aa'.repeat(100_000), ('AB'.repeat(50) + 'a').repeat(2_000), 'x1'.repeat(100_000)]) affinityWordsOf(line);
    expect(performance.now() - started).toBeLessThan(1_000);
    const patch = ['diff --git a/t.ts b/t.ts', '--- a/t.ts', '+++ b/t.ts', '@@ -1,2 +1,2 @@', '-const removedWord = 1;', '+// commentWord', "+test('addedWord', () => {});", ''].join('\n');
    const words = changedAffinityWordsOf(patch, new Set(['t.ts'])).get('t.ts')!;
    expect([...words.added].sort()).toEqual(['add', 'test', 'word']);
    expect([...words.changed].sort()).toEqual(['add', 'remov', 'test', 'word']);
    const files = [['retryAfter', 'common'], ['retryCount', 'common'], ['common'], ['common'], ['other'], ['other'], ['x']].map((identifiers, i) => ({ blob: `blob${i}`, identifiers }));
    const frequency = wordFrequency(files, 'scope-a');
    expect(frequency.files).toBe(7);
    expect(frequency.counts.get('retry')).toBe(2);
    expect(frequency.counts.get('common')).toBe(4);
    // A blob's words are kept per scope (a blob's text never changes): the same scope reads them back, another scope does not.
    expect(wordFrequency([{ blob: 'blob0', identifiers: ['unrelatedName'] }], 'scope-a').counts.get('retry')).toBe(1);
    expect(wordFrequency([{ blob: 'blob0', identifiers: ['unrelatedName'] }], 'scope-b').counts.get('retry')).toBeUndefined();
    const cohort = (key: string, ws: string[]) => ({ key, words: new Set(ws) });
    const src = cohort('src', ['retry', 'after', 'delay', 'common']);
    const near = cohort('near', ['retry', 'after', 'delay', 'limit']);
    const far = cohort('far', ['slow', 'server']);
    const joins = testAffinityJoins([src], [near, far], frequency);
    // Heaviest first: `delay` is in no indexed file, `after` in one, `retry` in two.
    expect(joins.map((j) => [j.source, j.test, j.nextTest, j.words])).toEqual([['src', 'near', 0, ['delay', 'after', 'retry']]]);
    expect(joins[0].score).toBeGreaterThan(0.5);
    // `common` is in more than half the files: no weight. One source and one test: nothing to choose between.
    expect(testAffinityJoins([src], [near], frequency)).toEqual([]);
    // A runner-up test within the margin: no clear best.
    expect(testAffinityJoins([src], [near, cohort('close', ['retry', 'after', 'delay'])], frequency)).toEqual([]);
    // Another source cohort as close to the test: the test has no clear best.
    expect(testAffinityJoins([src, cohort('src2', ['retry', 'after', 'delay'])], [near, far], frequency)).toEqual([]);
    // Below the floor: one word of many.
    expect(testAffinityJoins([cohort('s', ['retry', 'a1', 'a2', 'a3', 'a4', 'a5', 'a6', 'a7', 'a8', 'a9'])], [cohort('t', ['retry', 'b1', 'b2', 'b3', 'b4', 'b5', 'b6', 'b7', 'b8', 'b9']), far], frequency)).toEqual([]);
  });

  it('new-identifier: a struct field the change adds joins the files that set or read it (no reference resolves a field); a name the base already holds joins nothing', async () => {
    const f = fixture();
    f.write('go.mod', 'module example.com/kongish\n\ngo 1.21\n');
    const model = (extra: string) => `package kongish\n\n// Value is one flag's value.\ntype Value struct {\n\tName string\n\tHelp string\n${extra}}\n`;
    const build = (extra: string) => `package kongish\n\nfunc buildValue(name, help string) *Value {\n\treturn &Value{\n\t\tName: name,\n\t\tHelp: help,\n${extra}\t}\n}\n`;
    const help = (cond: string) => `package kongish\n\nfunc formatHelp(v *Value) string {\n\tif ${cond} {\n\t\treturn v.Name\n\t}\n\treturn v.Help\n}\n`;
    const other = (n: number) => `package kongish\n\nfunc limit() int {\n\treturn ${n}\n}\n`;
    f.write('model.go', model(''));
    f.write('build.go', build(''));
    f.write('help.go', help('v.Help == ""'));
    f.write('limit.go', other(1));
    const base = f.commit('base');
    f.write('model.go', model('\tOrigHelp string // before interpolation\n'));
    f.write('build.go', build('\t\tOrigHelp: help,\n'));
    f.write('help.go', help('v.OrigHelp == ""'));
    f.write('limit.go', other(2));
    const head = f.commit('keep the help text before interpolation');
    expect(DEFAULT_SIGNALS).toContain('new-identifier');
    const r = await compute(f, base, head);
    expect(groups(r)).toEqual(['build.go,help.go,model.go', 'limit.go']);
    expect(cohortOf(r, 'model.go').groupingReason).toBe('a name the change introduces: build.go and help.go both name `OrigHelp`, new in this change; build.go and model.go both name `OrigHelp`, new in this change');
    // Off, nothing joins them: a field read or set resolves to no definition, and one shared name is no shared-identifiers evidence.
    expect(groups(await compute(f, base, head, DEFAULT_SIGNALS.filter((x) => x !== 'new-identifier')))).toEqual(['build.go', 'help.go', 'limit.go', 'model.go']);

    // The same edit with a name the base already holds (`Help`, read now by help.go and limit.go): apart.
    f.write('model.go', model(''));
    f.write('build.go', build(''));
    f.write('help.go', help('len(v.Help) == 0'));
    f.write('limit.go', 'package kongish\n\nfunc limit() int {\n\treturn len((&Value{}).Help)\n}\n');
    const known = f.commit('a known field read in two files');
    expect(groups(await compute(f, base, known))).toEqual(['help.go', 'limit.go']);
  });

  it('new-identifier across directories: a key a changed source declares joins the test that sets it; a name only used (an external API first called in this change) joins nothing', async () => {
    const f = fixture();
    const options = (extra: string) => `export interface Options {\n  readonly retries?: number;\n${extra}}\n\nexport function normalize(options: Options): Options {\n  return { ...options };\n}\n`;
    const test = (body: string) => `import { normalize } from '../src/options';\n\ntest('defaults', () => {\n  expect(normalize({}).retries).toBeUndefined();\n});\n${body}`;
    f.write('src/options.ts', options(''));
    f.write('src/copy.ts', 'export function copy<T>(x: T): T {\n  return JSON.parse(JSON.stringify(x));\n}\n');
    f.write('test/redirects.test.ts', test(''));
    f.write('test/clone.test.ts', "test('clone', () => {\n  expect(JSON.parse('{}')).toEqual({});\n});\n");
    const base = f.commit('base');
    // `normalize` (unchanged, a hub-free reference on an unchanged line) is what both tests already call.
    f.write('src/options.ts', options('  readonly maxRedirects?: number;\n'));
    f.write('test/redirects.test.ts', test("\ntest('redirect limit', () => {\n  expect(normalize({ maxRedirects: 2 }).retries).toBeUndefined();\n});\n"));
    f.write('src/copy.ts', 'export function copy<T>(x: T): T {\n  return structuredClone(x);\n}\n');
    f.write('test/clone.test.ts', "test('clone', () => {\n  expect(structuredClone({})).toEqual({});\n});\n");
    const head = f.commit('a new option and its test; a new runtime API in a source and a test');
    const r = await compute(f, base, head);
    expect(cohortOf(r, 'test/redirects.test.ts').files).toEqual(['src/options.ts', 'test/redirects.test.ts']);
    expect(cohortOf(r, 'test/redirects.test.ts').groupingReason).toContain('a name the change introduces: options.ts and redirects.test.ts both name `maxRedirects`, new in this change');
    // `structuredClone` is new to the code but declared nowhere in it, and its two files are in two directories.
    expect(cohortOf(r, 'test/clone.test.ts').files).toEqual(['test/clone.test.ts']);
    // (`test-affinity`, the fallback on their words, would join them too: off as well.)
    const off = await compute(f, base, head, DEFAULT_SIGNALS.filter((x) => x !== 'new-identifier' && x !== 'test-affinity'));
    expect(cohortOf(off, 'test/redirects.test.ts').files).toEqual(['test/redirects.test.ts']);
    expect(changedKeysOf(['diff --git a/x.ts b/x.ts', '--- a/x.ts', '+++ b/x.ts', '@@ -1 +1,4 @@', '-a', '+  readonly maxRedirects?: number;', "+const o = {retry: {limit: 2}, label: 'keys: values'};", '+std::cout;', ''].join('\n'), new Set(['x.ts'])).get('x.ts')).toEqual(new Set(['maxRedirects', 'retry', 'limit', 'label']));
  });

  it('newIdentifierGroups: names absent from the base and present at head, of four characters or more, on two or more files', () => {
    const freq = (names: string[]) => ({ counts: new Map(names.map((n) => [n, 1])), files: 10 });
    const ids = new Map([
      ['a.go', new Set(['OrigHelp', 'Help', 'tmp', 'gone'])],
      ['b.go', new Set(['OrigHelp', 'Help', 'tmp'])],
      ['c.go', new Set(['OrigHelp', 'gone'])],
    ]);
    // `Help` is in the base; `tmp` is too short; `gone` is in neither commit's files (a removed line's name).
    expect(newIdentifierGroups(ids, freq(['Help', 'gone']), freq(['OrigHelp', 'Help', 'tmp']))).toEqual([{ name: 'OrigHelp', files: ['a.go', 'b.go', 'c.go'] }]);
    expect(newIdentifierGroups(new Map([['a.go', new Set(['OrigHelp'])]]), freq([]), freq(['OrigHelp']))).toEqual([]);
  });

  it('subjectOf pairs by the ecosystem\'s test name, the nearest directory first, and refuses ambiguous or generic names', () => {
    expect(subjectOf('test/parse.test.ts', ['src/parse.ts', 'src/format.ts'])).toBe('src/parse.ts');
    expect(subjectOf('tests/test_core.py', ['src/click/core.py'])).toBe('src/click/core.py');
    expect(subjectOf('mux_test.go', ['mux.go', 'tree.go'])).toBe('mux.go');
    expect(subjectOf('a/x/parse.test.ts', ['a/x/parse.ts', 'b/parse.ts'])).toBe('a/x/parse.ts');
    expect(subjectOf('test/parse.test.ts', ['a/parse.ts', 'b/parse.ts'])).toBeUndefined();
    expect(subjectOf('test/index.test.ts', ['src/index.ts'])).toBeUndefined();
  });

  it('subjectOf compares stems without case or separators', () => {
    expect(subjectOf('test/http-error.ts', ['source/errors/HTTPError.ts', 'source/core/Ky.ts'])).toBe('source/errors/HTTPError.ts');
    expect(subjectOf('tests/test_http_client.py', ['pkg/http-client.py'])).toBe('pkg/http-client.py');
    expect(subjectOf('tests/test_http_client.py', ['pkg/httpClient.ts'])).toBe('pkg/httpClient.ts');
    expect(subjectOf('tests/test_compat.py', ['src/click/_compat.py'])).toBe('src/click/_compat.py');
    expect(subjectOf('tests/middleware/test_https_redirect.py', ['starlette/middleware/httpsredirect.py'])).toBe('starlette/middleware/httpsredirect.py');
    expect(subjectOf('tests/options.implies.test.js', ['lib/options-implies.js', 'lib/option.js'])).toBe('lib/options-implies.js');
    // Still ambiguous when two flatten alike at the same distance; a flattened generic stem is still generic.
    expect(subjectOf('test/http-error.ts', ['a/HTTPError.ts', 'b/http_error.ts'])).toBeUndefined();
    expect(subjectOf('tests/test_init.py', ['pkg/__init__.py'])).toBeUndefined();
  });

  it('subjectOf pairs a generic stem only with the same-stem source of the test\'s own directory, and no tsd type test', () => {
    expect(subjectOf('src/middleware/cors/index.test.ts', ['src/middleware/cors/index.ts', 'src/index.ts', 'src/middleware/etag/index.ts'])).toBe('src/middleware/cors/index.ts');
    expect(subjectOf('utils_test.go', ['utils.go', 'mux.go'])).toBe('utils.go');
    expect(subjectOf('src/middleware/cors/index.test.ts', ['src/index.ts', 'src/middleware/etag/index.ts'])).toBeUndefined();
    expect(subjectOf('tests/test_utils.py', ['src/click/utils.py'])).toBeUndefined();
    expect(subjectOf('index.test-d.ts', ['index.js', 'index.d.ts'])).toBeUndefined();
  });

  it('subjectOf: with no same-stem source, the one source whose whole name parts begin or end with the test stem\'s (or the reverse)', () => {
    expect(stemParts('HTTPError')).toEqual(['http', 'error']);
    expect(stemParts('persistAsync')).toEqual(['persist', 'async']);
    expect(stemParts('_client_ip')).toEqual(['client', 'ip']);
    expect(subjectOf('test/stream.js', ['source/as-stream.js', 'source/index.js'])).toBe('source/as-stream.js');
    expect(subjectOf('test/arguments.ts', ['source/normalize-arguments.ts', 'source/create.ts'])).toBe('source/normalize-arguments.ts');
    expect(subjectOf('tests/persistAsync.test.tsx', ['src/middleware/persist.ts', 'src/vanilla.ts'])).toBe('src/middleware/persist.ts');
    expect(subjectOf('middleware/client_ip_example_test.go', ['middleware/client_ip.go', 'tree.go'])).toBe('middleware/client_ip.go');
    // An exact stem wins over a part-aligned one.
    expect(subjectOf('test/stream.js', ['source/as-stream.js', 'lib/stream.js'])).toBe('lib/stream.js');
    // Whole parts only, the shorter side of 4 characters or more, no generic part, no dotted stem.
    expect(subjectOf('test/stream.js', ['source/upstream.js'])).toBeUndefined();
    expect(subjectOf('test/as-stream.js', ['source/as.js'])).toBeUndefined();
    expect(subjectOf('test/utils-stream.js', ['source/utils.js'])).toBeUndefined();
    expect(subjectOf('tests/test_init_options.py', ['pkg/__init__.py'])).toBeUndefined();
    expect(subjectOf('tests/command.help.test.js', ['lib/command.js'])).toBeUndefined();
    // Two equally long candidates pair nothing; the longer shared name wins.
    expect(subjectOf('test/stream.js', ['source/as-stream.js', 'source/stream-x.js'])).toBeUndefined();
    expect(subjectOf('test/node-stream.js', ['lib/node.js', 'lib/stream.js'])).toBe('lib/stream.js');
  });

  it('subjectOf: each source\'s name is split once per list — 2,000 unpaired tests against 2,000 sources stay bounded', () => {
    const sources = Array.from({ length: 2000 }, (_, i) => `src/dir${i % 50}/someModuleName-part${i}.ts`);
    const started = Date.now();
    for (let i = 0; i < 2000; i++) expect(subjectOf(`test/feature-thing${i}.test.ts`, sources)).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('mirror: a changed file of a generated copy of src/ (Deno specifiers) joins its source and says so; the same name outside the copy does not', async () => {
    // A tree and its Deno copy (zod v3's deno/lib/): the copy's relative specifiers end in `.ts`.
    const mod = (name: string, v: number, deno: boolean) => `import { util } from "./helpers/util${deno ? '.ts' : ''}";\n\nexport function ${name}(x: number): number {\n  const y = util(x);\n  return y * ${v};\n}\n`;
    const util = 'export function util(x: number): number {\n  return x;\n}\n';
    const f = fixture();
    f.write('package.json', '{"name":"m"}');
    for (const root of ['src', 'deno/lib']) {
      f.write(`${root}/helpers/util.ts`, util);
      f.write(`${root}/types.ts`, mod('parse', 1, root !== 'src'));
      f.write(`${root}/errors.ts`, mod('fail', 1, root !== 'src'));
    }
    // Same name, another tree that is no copy of src/.
    f.write('examples/types.ts', 'export const example = 1;\n');
    const base = f.commit('base');
    // A short edit (no similar-edit line) in the source and the regenerated copy, and an unrelated file of the same name.
    f.write('src/types.ts', mod('parse', 2, false));
    f.write('deno/lib/types.ts', mod('parse', 2, true));
    f.write('examples/types.ts', 'export const example = 2;\n');
    const head = f.commit('head');
    const r = await compute(f, base, head);
    expect(groups(r)).toEqual(['deno/lib/types.ts,src/types.ts', 'examples/types.ts']);
    expect(cohortOf(r, 'src/types.ts').groupingReason).toBe('copies of one tree: deno/lib/types.ts is a generated mirror of src/types.ts');
    expect(groups(await compute(f, base, head, DEFAULT_SIGNALS.filter((x) => x !== 'mirror')))).toEqual(['deno/lib/types.ts', 'examples/types.ts', 'src/types.ts']);

    // A copy not regenerated (the source changed, the copy's text now differs): no join.
    f.write('src/types.ts', 'export function parse(x: number): string {\n  const s = String(x);\n  return s.padStart(4);\n}\n');
    f.write('deno/lib/types.ts', mod('parse', 3, true));
    const stale = f.commit('stale copy');
    expect(groups(await compute(f, head, stale))).toEqual(['deno/lib/types.ts', 'src/types.ts']);
  });

  it('the names and paths a reason cites are bounded at the source: long generated identifiers and a deep mirrored tree are each clipped with a marker, and every one is still named', async () => {
    // Generated code (protobuf / OpenAPI clients) has identifiers of hundreds of characters; a reason citing
    // three of them whole ran past its bound and the last ones were cut off the reason's end.
    const long = (head: string) => `${head}${'ResponseEnvelopeField'.repeat(40)}`;
    const [a, b, c] = [long('Alpha'), long('Beta'), long('Gamma')];
    const f = fixture();
    for (let i = 0; i < 60; i++) f.write(`src/misc/m${i}.ts`, `export function m${i}(options: number): number {\n  return options + ${i};\n}\n`);
    f.write('src/gen.ts', `export const ${a} = 1;\nexport const ${b} = 2;\nexport const ${c} = 3;\n`);
    f.write('src/body.ts', 'export function size(x: number): number {\n  return x;\n}\n');
    f.write('test/upload.test.ts', "test('upload', () => {\n  expect(1).toBe(1);\n});\n");
    const base = f.commit('base');
    f.write('src/body.ts', `import { ${a}, ${b}, ${c} } from './gen';\n\nexport function size(x: number): number {\n  return x + ${a} + ${b} + ${c};\n}\n`);
    f.write('test/upload.test.ts', `import { ${a}, ${b}, ${c} } from '../src/gen';\n\ntest('upload', () => {\n  expect(${a} + ${b}).toBe(${c});\n});\n`);
    const head = f.commit('the generated names threaded through the body and its test');
    const r = await compute(f, base, head);
    expect(groups(r).filter((g) => g.includes('body'))).toEqual(['src/body.ts,test/upload.test.ts']);
    const cite = (n: string) => `\`${clipText(n, BOUNDS.reasonName)}\``;
    expect(cite(a)).toMatch(/^`Alpha(ResponseEnvelopeField)+R?e?s?.*… \[\+\d+ chars\]`$/);
    expect(cohortOf(r, 'src/body.ts').groupingReason).toBe(`rare identifiers both change: body.ts and upload.test.ts both change lines naming ${[a, b, c].map(cite).join(', ')}`);

    // A mirrored tree five 200-character directories deep: both paths named, each clipped.
    const deep = Array.from({ length: 5 }, (_, i) => `d${i}${'x'.repeat(198)}`).join('/');
    const mod = (v: number, deno: boolean) => `import { util } from "./helpers/util${deno ? '.ts' : ''}";\n\nexport function parse(x: number): number {\n  const y = util(x);\n  return y * ${v};\n}\n`;
    const g = fixture();
    g.write('package.json', '{"name":"m"}');
    for (const root of ['src', 'deno/lib']) {
      g.write(`${root}/${deep}/helpers/util.ts`, 'export function util(x: number): number {\n  return x;\n}\n');
      g.write(`${root}/${deep}/types.ts`, mod(1, root !== 'src'));
      g.write(`${root}/${deep}/errors.ts`, mod(1, root !== 'src').replace('parse', 'fail'));
    }
    const base2 = g.commit('base');
    g.write(`src/${deep}/types.ts`, mod(2, false));
    g.write(`deno/lib/${deep}/types.ts`, mod(2, true));
    const head2 = g.commit('head');
    const m = await compute(g, base2, head2);
    expect(groups(m)).toEqual([`deno/lib/${deep}/types.ts,src/${deep}/types.ts`]);
    expect(cohortOf(m, `src/${deep}/types.ts`).groupingReason).toBe(`copies of one tree: ${clipText(`deno/lib/${deep}/types.ts`, BOUNDS.reasonName)} is a generated mirror of ${clipText(`src/${deep}/types.ts`, BOUNDS.reasonName)}`);
  });

  it('mirror candidates: same relative path under two roots, specifiers normalized, the copy told from the source', () => {
    expect(mirrorCandidates(['src/utils/body.ts', 'deno_dist/utils/body.ts', 'src/app.ts']).map((c) => [c.a, c.b, c.rootA, c.rootB])).toEqual([['deno_dist/utils/body.ts', 'src/utils/body.ts', 'deno_dist', 'src']]);
    expect(orientMirror(mirrorCandidates(['src/x.ts', 'deno/lib/x.ts'])[0])).toEqual({ mirror: 'deno/lib/x.ts', source: 'src/x.ts' });
    expect(mirrorSimilarity('import { a } from "./a.ts";\nexport * from "./index.ts";\nexport const b = a;\n', "import { a } from './a';\nexport * from '.';\n\nexport const b = a;\n")).toBe(1);
    expect(mirrorSimilarity('export const b = 1;\nexport const c = 2;\n', 'export const b = 2;\nexport const d = 2;\n')).toBe(0);
  });

  it('test-hub: a changed test\'s unchanged call of the entry point every test calls does not pull it to that entry point\'s change; its changed line decides, and an unchanged reference to a rarely tested definition still links', async () => {
    const f = fixture();
    for (let i = 0; i < 40; i++) f.write(`src/misc/m${i}.ts`, `export function m${i}(options: number): number {\n  return options + ${i};\n}\n`);
    const core = (v: number) => `export function run(x: number): number {\n  return x * ${v};\n}\n`;
    const extra = (v: number) => `export function helper(x: number): number {\n  return x - ${v};\n}\n`;
    const rare = (v: number) => `export function rare(x: number): number {\n  return x + ${v};\n}\n`;
    f.write('src/core.ts', core(2));
    f.write('src/extra.ts', extra(1));
    f.write('src/rare.ts', rare(1));
    // `run` is called by four test files of 49 indexed files (> 5 %): a hub. `rare` by one.
    for (const t of ['b', 'c', 'd']) f.write(`test/${t}.test.ts`, `import { run } from '../src/core';\n\ntest('${t}', () => {\n  expect(run(1)).toBe(2);\n});\n`);
    const a = (n: number) => `import { run } from '../src/core';\nimport { helper } from '../src/extra';\n\ntest('a', () => {\n  expect(run(1)).toBe(2);\n  expect(helper(${n})).toBe(1);\n});\n`;
    f.write('test/a.test.ts', a(2));
    const e = (n: number) => `import { rare } from '../src/rare';\n\ntest('e', () => {\n  expect(rare(1)).toBe(2);\n  expect(${n}).toBe(${n});\n});\n`;
    f.write('test/e.test.ts', e(1));
    const base = f.commit('base');
    f.write('src/core.ts', core(3));
    f.write('src/extra.ts', extra(2));
    f.write('src/rare.ts', rare(2));
    f.write('test/a.test.ts', a(3));
    f.write('test/e.test.ts', e(2));
    const head = f.commit('head');
    const r = await compute(f, base, head);
    expect(groups(r)).toEqual(['src/core.ts', 'src/extra.ts,test/a.test.ts', 'src/rare.ts,test/e.test.ts']);
    // Without the signal the unchanged `run(1)` line votes as much as the changed `helper(3)` one, and the tie goes to core.ts.
    expect(groups(await compute(f, base, head, DEFAULT_SIGNALS.filter((x) => x !== 'test-hub')))).toEqual(['src/core.ts,test/a.test.ts', 'src/extra.ts', 'src/rare.ts,test/e.test.ts']);
  });

  it('wrapper: a test calling the exported wrapper of a changed private helper joins it through one named hop; a changed exported helper is no hop (its users name it)', async () => {
    const lib = (v: number) => `function helper(x: number): number {\n  return x + ${v};\n}\n\nexport function api(x: number): number {\n  return helper(x) * 2;\n}\n`;
    // shared is exported: what uses it references it directly, so a reference to wrap says nothing about it.
    const other = (v: number) => `export function shared(x: number): number {\n  return x - ${v};\n}\n\nexport function wrap(x: number): number {\n  return shared(x);\n}\n`;
    const test = (n: number, fn: string, file: string) => `import { ${fn} } from '../src/${file}';\n${Array.from({ length: n }, (_, i) => `\ntest('${fn} case ${i}', () => {\n  expect(${fn}(${i})).toBeDefined();\n});\n`).join('')}`;
    const f = fixture();
    f.write('package.json', '{"name":"w"}');
    f.write('src/lib.ts', lib(1));
    f.write('src/other.ts', other(1));
    f.write('test/calls.test.ts', test(1, 'api', 'lib'));
    f.write('test/wraps.test.ts', test(1, 'wrap', 'other'));
    const base = f.commit('base');
    f.write('src/lib.ts', lib(2));
    f.write('test/calls.test.ts', test(2, 'api', 'lib'));
    const head = f.commit('head');
    const r = await compute(f, base, head);
    expect(groups(r)).toEqual(['src/lib.ts,test/calls.test.ts']);
    expect(cohortOf(r, 'src/lib.ts').groupingReason).toBe('through an exported wrapper: test/calls.test.ts → api → helper');
    expect(groups(await compute(f, base, head, DEFAULT_SIGNALS.filter((x) => x !== 'wrapper')))).toEqual(['src/lib.ts', 'test/calls.test.ts']);

    f.write('src/other.ts', other(2));
    f.write('test/wraps.test.ts', test(2, 'wrap', 'other'));
    const noHop = f.commit('an exported helper changes');
    expect(groups(await compute(f, head, noHop))).toEqual(['src/other.ts', 'test/wraps.test.ts']);
  });

  it('co-change: files that changed together in most of their earlier commits pair; big commits are ignored', async () => {
    const f = fixture();
    f.write('a.ts', '1');
    f.write('b.ts', '1');
    f.write('c.ts', '1');
    f.commit('one');
    for (let i = 2; i < 5; i++) {
      f.write('a.ts', String(i));
      f.write('b.ts', String(i));
      f.commit(`together ${i}`);
    }
    f.write('c.ts', '2');
    f.write('a.ts', '9');
    f.commit('c with a once');
    for (let i = 0; i < 25; i++) f.write(`bulk/f${i}.ts`, '1');
    f.write('b.ts', 'x');
    f.write('c.ts', 'x');
    const base = f.commit('a big commit');
    const repo = await GitRepo.open(f.dir);
    try {
      const pairs = await coChangePairs(repo, base, ['a.ts', 'b.ts', 'c.ts']);
      // b and c changed together in 'one' and in the big commit: counting the big one would pair them too.
      expect(pairs.map((p) => [p.a, p.b, p.together])).toEqual([['a.ts', 'b.ts', 4], ['a.ts', 'c.ts', 2]]);
    } finally {
      repo.close();
    }
  });

  it('valid TypeScript that tree-sitter-typescript 0.23.2 rejects is parsed by TypeScript\'s parser; a file broken for both is reported in the output, not silently degraded', async () => {
    const f = fixture();
    // As in immer's types-external.ts: generic call signatures without semicolons. tsc accepts it,
    // tree-sitter-typescript 0.23.2 produces ERROR nodes.
    const valid = (v: number) => `type AnyFunc = (...args: any[]) => any\n\nexport interface IProduce {\n  <Recipe extends AnyFunc>(\n    recipe: Recipe\n  ): Recipe\n  <State>(\n    recipe: (state: State) => State\n  ): (state: State) => State\n}\n\nexport function f(): number {\n  return ${v};\n}\n`;
    const broken = (v: number) => `export function g(): number {\n  return ${v};\n}\n\nexport function h( {\n`;
    f.write('src/types.ts', valid(1));
    f.write('src/broken.ts', broken(1));
    f.write('src/use.ts', "import { f } from './types';\n\nexport function useIt(): number {\n  return f() + 1;\n}\n");
    const base = f.commit('base');
    f.write('src/types.ts', valid(2));
    f.write('src/broken.ts', broken(2));
    f.write('src/use.ts', "import { f } from './types';\n\nexport function useIt(): number {\n  return f() + 2;\n}\n");
    const head = f.commit('head');
    const r = await compute(f, base, head);
    const types = r.data.changedFiles.find((c) => c.path === 'src/types.ts')!;
    expect(types.parseErrors).toBeUndefined();
    // The definitions are there (IProduce and f), and the changed call f() links use.ts to it.
    const typesSymbols = r.head!.defsByFile.get('src/types.ts')!.map((s) => s.def.qname);
    expect(typesSymbols).toEqual(expect.arrayContaining(['AnyFunc', 'IProduce', 'f']));
    expect(r.head!.index.files.get('src/types.ts')!.facts.parser).toBe('typescript');
    expect(cohortOf(r, 'src/types.ts').files).toEqual(['src/types.ts', 'src/use.ts']);
    expect(cohortOf(r, 'src/types.ts').fragments.map((x) => x.symbolId)).toContain('src/types.ts#f');

    expect(r.data.changedFiles.find((c) => c.path === 'src/broken.ts')).toMatchObject({ parseErrors: true });
    expect(r.data.metrics.parseErrorFiles).toBe(1);
    expect(cohortOf(r, 'src/broken.ts').groupingReason).toMatch(/^parse errors in broken\.ts: definitions and references there may be incomplete$/);
  });
});
