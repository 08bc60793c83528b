// A PR's files are the author's: every byte of a manifest, an API description or a changed line reaches
// text processing on the server's thread when a review is computed (and its review diff read). Each scan
// here was quadratic or worse before (a regex retried from every position, a list copied per item, hunks
// checked against every earlier range per entry). Two kinds of test per scan: the linear code gives what
// the regex or loop it replaced gives, on many random strings of the characters that matter; and an input
// of 256 KiB of the hostile shape — minutes for the code before (measured, in each comment), a few
// milliseconds now — finishes within this file's generous timeout. No timing assertion: a regression hangs.
import { diffDependencies } from '../../src/dependencies/diff';
import { manifestKindOf } from '../../src/dependencies/manifests';
import { parseSpecText } from '../../src/axes/api-contract/document';
import { normalizePathTemplate } from '../../src/axes/api-contract/model';
import { normalizePointer } from '../../src/axes/api-contract/context';
import { blankStrings, stringLiteralRanges } from '../../src/cohorts/evidence/shared-identifiers';
import { editKey } from '../../src/cohorts/evidence/similar-edits';
import { signatureOf } from '../../src/context/pack';
import { hunksOfEntry, planCohort } from '../../src/readmodels/queries/review-diff';
import { pushTo } from '../../src/cohorts/group';
import type { DiffHunk } from '../../src/git/unified-diff';
import { originAllowed } from '../../src/rpc/ws-transport';
import { fingerprintMarker, markedFingerprints } from '../../src/publish/render';
import { stripComments } from '../../src/codegraph/strip-comments';
import { goModulePath } from '../../src/codegraph/languages/lang-go';
import { csprojOf } from '../../src/codegraph/languages/lang-csharp';
import { kotlinRepairSource, withoutAlias } from '../../src/codegraph/languages/lang-kotlin';
import { docLinesWithin } from '../../src/codegraph/doc-lines';
import { psr4Candidates } from '../../src/codegraph/languages/lang-php';
import { extractFacts } from '../../src/codegraph/extract';
import { loadGrammar } from '../../src/codegraph/languages/grammar-runtime';

jest.setTimeout(60_000);

const KIB_256 = 256 * 1024;
const fill = (unit: string, bytes = KIB_256) => unit.repeat(Math.ceil(bytes / unit.length));

/** Seeded strings over `alphabet` (tokens), up to `max` tokens. */
function* randomTexts(alphabet: string[], count: number, max = 24, seed = 7): Generator<string> {
  let s = seed;
  const rnd = () => ((s = (s * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
  for (let i = 0; i < count; i++) {
    let t = '';
    const n = 1 + Math.floor(rnd() * max);
    for (let k = 0; k < n; k++) t += alphabet[Math.floor(rnd() * alphabet.length)];
    yield t;
  }
}

describe('string literals of changed lines (cohort signals)', () => {
  const STRING = /(["'`])(?:\\.|(?!\1)[^\\])*\1/g;
  it('stringLiteralRanges finds what the literal regex matches, and blankStrings replaces them with ""', () => {
    for (const t of randomTexts(['"', "'", '`', '\\', 'a', ' ', '\n', '\r', '\u2028', 'x"y', '\\"'], 20_000)) {
      const expected = [...t.matchAll(STRING)].map((m) => [m.index!, m.index! + m[0].length]);
      expect(stringLiteralRanges(t)).toEqual(expected);
      expect(blankStrings(t)).toBe(t.replace(STRING, '""'));
    }
  });
  it('a line of 256 KiB of escaped, never closed quotes is scanned once (the regex: ~13 s per signal, three signals)', () => {
    const line = `x = "${fill('\\"')}`;
    expect(stringLiteralRanges(line)).toEqual([]);
    expect(blankStrings(`${fill("'\\'")}"ok"`).endsWith('""')).toBe(true);
  });
});

describe('similar-edit keys and context-pack signatures', () => {
  it('a trailing run of ; or , is dropped as /[;,]+$/ drops it', () => {
    for (const t of randomTexts([';', ',', ' ', 'abc', 'def', '\t', 'x;y'], 5_000)) {
      const reference = t.trim().replace(/\s+/g, ' ').replace(/[;,]+$/, '');
      const key = editKey('+', t);
      expect(key).toBe(reference.length < 16 || !/[A-Za-z_$]{3}/.test(reference) ? undefined : `+${reference}`);
    }
    expect(editKey('+', `call(${fill(';')}x`)).toBe(`+call(${fill(';')}x`); // the regex: ~90 s on 256 KiB
  });
  it('a signature ends where /[{:]\\s*$|=>\\s*\\{?\\s*$|\\{/ said, without rescanning spaces', () => {
    const regex = /[{:]\s*$|=>\s*\{?\s*$|\{/;
    for (const t of randomTexts(['=>', ' ', '{', ':', 'a', '\t', '\r', '\n'], 5_000)) {
      const lines = t.split('\n');
      const cut = lines.findIndex((l) => regex.test(l));
      const expected = (cut < 0 ? lines.slice(0, 4) : lines.slice(0, Math.min(cut + 1, 4))).join('\n');
      expect(signatureOf(t).startsWith(expected.slice(0, 100))).toBe(true);
    }
    expect(signatureOf(`f = () =>${fill(' ')}x\nbody`)).toContain('f = () =>'); // the regex: ~6 s
  });
});

describe('API descriptions', () => {
  it('path templates and pointers normalize as the regexes did', () => {
    for (const t of randomTexts(['{', '}', '/', 'id', 'a'], 10_000)) {
      const positions = new Map<string, number>();
      let i = 0;
      const normalized = t.replace(/\{([^}]*)\}/g, (_m, name: string) => (positions.set(name, i++), '{}'));
      expect(normalizePathTemplate(t)).toEqual({ normalized, positions });
      expect(normalizePointer(t)).toBe(t.replace(/\{[^}/]*\}/g, '{}'));
    }
    expect(normalizePathTemplate(`/${fill('{')}`).normalized.length).toBe(KIB_256 + 1); // the regex: ~4 min
    expect(normalizePointer(`#/paths/${fill('{')}`)).toBe(`#/paths/${fill('{')}`);
  });
  it('invalid YAML is worded by js-yaml with its line and column, not re-parsed by `yaml` (64 KiB of " took 1.9 s, 256 KiB over 30 s)', () => {
    expect(() => parseSpecText('openapi.yaml', 'openapi: 3.0.0\npaths: [unclosed')).toThrow(/openapi\.yaml: invalid YAML: .* at line \d+, column \d+/);
    for (const unit of ['"', '[a]\n', '- ["', 'a: ']) expect(() => parseSpecText('openapi.yaml', fill(unit))).toThrow(/invalid YAML/);
  });
});

describe('dependency manifests', () => {
  const parse = (file: string, text: string) => [...manifestKindOf(file)!.parse(text)];
  it('comments, sections and arrays are read as before (fixed cases)', () => {
    // `#` starts a comment only after whitespace (or at the start of the line).
    expect(parse('requirements.txt', 'Django==3.2  # web\n# all of it\nrequests>=2.0\t#x\n-r other.txt\nurl#frag\n')).toEqual([
      ['django', { version: '==3.2' }],
      ['requests', { version: '>=2.0' }],
      ['url', { version: '#frag' }],
    ]);
    expect(parse('go.mod', 'module m\nrequire (\n\ta v1 // indirect\n\tb v2 // pinned\n\tc v3 //indirect // why\n)\nrequire d v4\n')).toEqual([
      ['a', { version: 'v1', group: 'indirect' }],
      ['b', { version: 'v2' }],
      ['c', { version: 'v3', group: 'indirect' }],
      ['d', { version: 'v4' }],
    ]);
    expect(parse('pyproject.toml', '[project]\nname = "p"\n  dependencies = [\n "a>=1", \'b\' ]\n[project.optional-dependencies]\ntest = ["c"]\ndocs = [ "d==2" ]\n[dependency-groups]\nlint = ["e"]\n')).toEqual([
      ['a', { version: '>=1' }],
      ['b', { version: '*' }],
      ['c', { version: '*', group: 'test' }],
      ['d', { version: '==2', group: 'docs' }],
      ['e', { version: '*', group: 'lint' }],
    ]);
    expect(parse('Cargo.toml', '[dependencies]\nserde = "1.0" # ser\ntokio = { version = "1", features = ["full"] }\n[dev-dependencies]\nx = { git = "u" }\n')).toEqual([
      ['serde', { version: '1.0' }],
      ['tokio', { version: '1' }],
      ['x', { version: 'git:u', group: 'dev' }],
    ]);
    expect(parse('pubspec.yaml', 'name: app\ndependencies:\n  http: ^1.2.0\n  flutter:\n    sdk: flutter\ndev_dependencies:\n  test: any\n')).toEqual([
      ['test', { version: 'any', group: 'dev' }],
      ['http', { version: '^1.2.0' }],
      ['flutter', { version: 'sdk' }],
    ]);
  });
  it('a 256 KiB manifest of each hostile shape is parsed in one pass', async () => {
    // Before: 80,000 spaces on a requirements.txt or Cargo.toml line 5.4 s; a pyproject of 80,000 blank
    // lines 61 s; a 48,000-line Cargo.lock 16 s; a package.json followed by 80,000 newlines 23 s; a
    // pubspec of 64 KiB of `"` 2.4 s (`yaml`).
    expect(parse('requirements.txt', `${fill(' ')}x`)).toEqual([['x', { version: '*' }]]);
    expect(parse('Cargo.toml', `[dependencies]\na = "1"${fill(' ')}x`)).toEqual([['a', { version: '1' }]]);
    expect(parse('go.mod', `require (\n${fill('// indirect ')}\r\n)`)).toEqual([['//', { version: 'indirect', group: 'indirect' }]]);
    expect(parse('go.mod', `require a v1 ${fill('/')}\r`)).toEqual([['a', { version: 'v1' }]]);
    expect(parse('pyproject.toml', `[project]\n${fill('\n')}dependencies = ["a"]`)).toEqual([['a', { version: '*' }]]);
    expect(parse('pyproject.toml', `[project]\n${fill('dependencies = [\n')}`)).toEqual([]);
    expect(parse('pyproject.toml', `[project.optional-dependencies]\n${fill('a')}`)).toEqual([]);
    let lock = '';
    for (let i = 0; lock.length < 4 * KIB_256; i++) lock += `[[package]]\nname = "c${i}"\nversion = "1.${i}.0"\nchecksum = "${'ab'.repeat(32)}"\n\n`;
    expect(parse('Cargo.lock', lock).length).toBeGreaterThan(8_000);
    expect(() => parse('pubspec.yaml', fill('"'))).toThrow();
    const [bump] = await diffDependencies([{ path: 'package.json', status: 'modified' }], async (side) => (side === 'base' ? `{\n  "version": "1"\n}${fill("\n")}` : `{\n  "version": "2"\n}${fill("\n")}`));
    expect(bump).toMatchObject({ changes: [], versionOnly: true });
  });
});

describe('review diff pages', () => {
  const hunk = (start: number, count: number): DiffHunk => ({ oldStart: start, oldCount: count, newStart: start, newCount: count, text: '@@' });
  const cohortOf = (ranges: Array<{ side: 'head' | 'base'; start: number; end: number; symbol?: boolean }>) => ({
    key: 'c',
    files: ['a.ts'],
    fragments: ranges.map((r, i) => ({ id: `f${i}`, path: 'a.ts', side: r.side, startLine: r.start, endLine: r.end, ...(r.symbol ? { symbolId: `a.ts#s${i}` } : {}), kind: 'function', change: 'modified' })),
    readingOrder: { order: 'callee-first', steps: ranges.map((r, i) => ({ path: 'a.ts', ...(r.symbol ? { symbolId: `a.ts#s${i}` } : { startLine: r.start, endLine: r.end }), why: 'w' })) },
  });
  it('each hunk is shown once, at the first entry whose range it intersects, or with the rest of the file', () => {
    let s = 3;
    const rnd = (n: number) => ((s = (s * 1103515245 + 12345) & 0x7fffffff) % n);
    for (let trial = 0; trial < 400; trial++) {
      const ranges = Array.from({ length: 1 + rnd(8) }, () => {
        const start = 1 + rnd(40);
        return { side: rnd(2) ? ('head' as const) : ('base' as const), start, end: start + rnd(6), symbol: rnd(2) === 1 };
      });
      const hunks: DiffHunk[] = [];
      for (let at = 1 + rnd(3); at < 50; at += 1 + rnd(6)) {
        const h = hunk(at, rnd(4));
        hunks.push(h);
        at += h.newCount;
      }
      const plan = planCohort(cohortOf(ranges) as never, new Set());
      // Reference: an entry shows the hunks that intersect its range and none of the earlier entries' ranges.
      const span = (h: DiffHunk, side: 'head' | 'base') => {
        const start = Math.max(1, side === 'head' ? h.newStart : h.oldStart);
        return { start, end: start + Math.max(side === 'head' ? h.newCount : h.oldCount, 1) - 1 };
      };
      const meets = (h: DiffHunk, r: { side: 'head' | 'base'; start: number; end: number }) => span(h, r.side).start <= r.end && r.start <= span(h, r.side).end;
      const seen: Array<{ side: 'head' | 'base'; start: number; end: number }> = [];
      for (const entry of plan) {
        const expected = hunks.filter((h) => !seen.some((r) => meets(h, r)) && (entry.range ? meets(h, entry.range) : true));
        expect(hunksOfEntry(entry, hunks)).toEqual(expected);
        if (entry.range) seen.push(entry.range);
      }
    }
  });
  it('a file of 8,000 one-line changes, one fragment each, plans and pages in one pass (1,500 took 3.2 s per page)', () => {
    const ranges = Array.from({ length: 8_000 }, (_, i) => ({ side: 'head' as const, start: 2 * i + 1, end: 2 * i + 1, symbol: i % 2 === 0 }));
    const hunks = ranges.map((r) => hunk(r.start, 1));
    const plan = planCohort(cohortOf(ranges) as never, new Set());
    let shown = 0;
    for (const entry of plan) shown += hunksOfEntry(entry, hunks).length;
    expect(shown).toBe(8_000);
  });
});

describe('grouping', () => {
  it('pushTo appends in place: groups of 100,000 members cost one push each', () => {
    const m = new Map<string, number[]>();
    for (let i = 0; i < 200_000; i++) pushTo(m, i % 2 ? 'odd' : 'even', i);
    expect(m.get('odd')!.length).toBe(100_000);
    expect(m.get('even')!.slice(0, 3)).toEqual([0, 2, 4]);
  });
});

describe('caller strings: headers and published markers', () => {
  const upgrade = (origin: string, host = 'localhost:3000') => ({ headers: { origin, host } }) as never;
  it('an Origin is compared without its trailing slashes, as /\\/+$/ stripped them, before any token is read', () => {
    for (const t of randomTexts(['/', 'http:', '//', 'localhost:3000', 'x', 'HTTP://LOCALHOST:3000'], 5_000)) {
      const o = t.toLowerCase().replace(/\/+$/, '');
      expect(originAllowed(upgrade(t))).toBe(o === 'http://localhost:3000' || o === 'https://localhost:3000');
    }
    // Node's 16 KiB header limit of slashes: ~200 ms of the server's thread per upgrade with the regex.
    expect(originAllowed(upgrade(`http://localhost:3000${fill('/', 16_000)}`))).toBe(true);
    expect(originAllowed(upgrade(`${fill('/', 16_000)}x`))).toBe(false);
  });
  it("a publication's markers are read once from the posted texts (includes() per finding and comment: k² × 64 KiB)", () => {
    const fps = Array.from({ length: 400 }, (_, i) => i.toString(16).padStart(64, '0'));
    const comments = fps.map((fp) => `${'near ' + fingerprintMarker(fp).slice(0, 30)} `.repeat(1_000) + fingerprintMarker(fp));
    const marked = markedFingerprints(comments);
    expect(fps.every((fp) => marked.has(fp))).toBe(true);
    expect(markedFingerprints([`x${fingerprintMarker('a'.repeat(64))}y`, fingerprintMarker('b'.repeat(63)).replace(' -->', '')])).toEqual(new Set(['a'.repeat(64)]));
  });
});

describe('code index: build scripts and imports', () => {
  it("Gradle scripts lose their comments, strings kept, as the regex did; /* and quotes never closed are scanned once", () => {
    const reference = (t: string) => t.replace(/\/\*[\s\S]*?\*\/|("(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')|\/\/[^\n]*/g, (_m, str: string | undefined) => str ?? '');
    for (const t of randomTexts(['/', '*', '"', "'", '\\', '\n', '\r', 'a', ' ', '/*', '*/', '//', "include ':app'"], 30_000)) expect(stripComments(t, `"'`, false)).toBe(reference(t));
    const tsconfigReference = (t: string) => t.replace(/\/\*[\s\S]*?\*\/|("(?:\\.|[^"\\])*")|\/\/[^\n]*/g, (_m, str: string | undefined) => str ?? '');
    for (const t of randomTexts(['/', '*', '"', "'", '\\', '\n', '\r', 'a', ' ', '/*', '*/', '//', '"paths"'], 30_000, 24, 11)) expect(stripComments(t, '"', true)).toBe(tsconfigReference(t));
    // (Compared as booleans: a failure would print 256 KiB.)
    expect(stripComments(`include ':a'\n${fill('/*a')}`, `"'`, false) === `include ':a'\n${fill('/*a')}`).toBe(true); // the regex: ~2 min on 256 KiB
    expect(stripComments(`x = "${fill('\\"')}\ninclude ':b' // c`, `"'`, false) === `x = "${fill('\\"')}\ninclude ':b' `).toBe(true);
  });
  it('a grouped Rust or PHP import of 100,000 items under a 3,900-character prefix builds at most 4 MiB of module paths (was 397 MB of facts, 58 s)', async () => {
    const items = Array.from({ length: 100_000 }, (_, i) => `b${i}`).join(', ');
    for (const [language, src] of [['rust', `use ${'a'.repeat(3_900)}::{${items}};\nuse std::io::{Read, Write};\n`], ['php', `<?php\nuse ${'A'.repeat(3_900)}\\{${items}};\n`]] as const) {
      const facts = extractFacts(await loadGrammar(language), src);
      expect(facts.imports.length).toBeGreaterThan(1_000); // the first ones are kept
      expect(facts.imports.reduce((n, d) => n + d.source.length, 0)).toBeLessThanOrEqual(4 * 1024 * 1024);
    }
    // Real grouped imports are untouched.
    const real = extractFacts(await loadGrammar('rust'), 'use std::collections::{HashMap, BTreeMap as Tree};\n');
    expect(real.imports).toEqual([
      { source: 'std::collections', bindings: [{ local: 'HashMap', imported: 'HashMap' }] },
      { source: 'std::collections', bindings: [{ local: 'Tree', imported: 'BTreeMap' }] },
    ]);
  });
  it('go.mod module paths and csproj references are read as their regexes read them, in one pass', () => {
    for (const t of randomTexts(['module', ' ', '\n', '\t', 'example.com/m', '"x"', 'modules', '//'], 20_000)) expect(goModulePath(t)).toBe(/^\s*module\s+(\S+)/m.exec(t)?.[1]?.replace(/^"|"$/g, ''));
    expect(goModulePath(`${fill('\n')}module example.com/m`)).toBe('example.com/m'); // the regex: ~15 min per MiB of blank lines
    const csReference = (t: string) => [...t.replace(/<!--[\s\S]*?-->/g, '').matchAll(/<ProjectReference\b[^>]*\bInclude\s*=\s*"([^"]+)"/gi)].map((m) => m[1]);
    for (const t of randomTexts(['<ProjectReference', ' ', 'Include', '=', '"', 'a.csproj', '>', '/>', '<!--', '-->', 'include', 'x'], 30_000, 24, 5)) {
      expect(csprojOf('p/p.csproj', t).references).toEqual(csprojOf('p/p.csproj', '').references.concat(csReference(t).map((r) => r.replace(/\\/g, '/')).map((r) => require('node:path').posix.normalize(require('node:path').posix.join('p', r))).filter((j: string) => !j.startsWith('..'))));
    }
    expect(csprojOf('a.csproj', fill('<ProjectReference ')).references).toEqual([]); // the regex: ~55 s per MiB
    expect(csprojOf('a.csproj', fill('<!--')).references).toEqual([]);
  });
  it('Kotlin headers split before a constructor line are repaired as the whole-text regex repaired them, line by line', () => {
    const reference = (source: string) => {
      let changed = false;
      const out = source.replace(/\b(class|object)([ \t]+)([A-Za-z_]\w*(?:<[^\n{}()]*>)?)([ \t]*)\n([ \t]*)(?=(?:(?:public|private|internal|protected)[ \t]+)?(?:@\w+(?:\([^)\n]*\))?[ \t]+)*constructor[ \t]*\()/g, (_m, kw: string, gap: string, name: string, trail: string, indent: string) => ((changed = true), `${kw}\n${' '.repeat(gap.length - 1)}${name}${trail} ${indent}`));
      return changed ? out : undefined;
    };
    for (const t of randomTexts(['class', 'object', ' ', '\t', 'Builder', '<T>', '<A<B>>', '\n', '  ', 'internal ', '@Inject ', 'constructor(', ') :', '{', 'x'], 30_000, 20, 3)) expect(kotlinRepairSource(t)).toBe(reference(t));
    expect(kotlinRepairSource(`${fill('class A<')}\nconstructor(`)).toBeUndefined(); // the regex: ~2 min per MiB
  });
  it('doc lines of a line of 40,000 comments are found in one pass over the line (~64 s per MiB before)', async () => {
    const line = `${' '.repeat(100_000)}${'/**/ '.repeat(40_000)}x`;
    const lines = docLinesWithin(await loadGrammar('typescript'), `${line}\n// alone\nconst y = 1;\n`, Date.now() + 600_000);
    expect(lines && [...lines].sort()).toEqual([2, 4]); // the comment line and the blank last line
  });
  it('PSR-4 candidates come from the roots of the name\'s namespaces, longest first, as a sort of every root gave them', () => {
    const reference = (fqn: string, roots: Array<{ dir: string; prefix: string; paths: string[] }>) => {
      const out: string[] = [];
      for (const r of [...roots].sort((a, b) => b.prefix.length - a.prefix.length)) {
        if (r.prefix && fqn !== r.prefix && !fqn.startsWith(`${r.prefix}\\`)) continue;
        const rest = (r.prefix ? fqn.slice(r.prefix.length + 1) : fqn).split('\\').join('/');
        if (rest) for (const p of r.paths) out.push(p ? `${p}/${rest}.php` : `${rest}.php`);
      }
      return out;
    };
    const parts = ['App', 'Lib', 'A', 'B', ''];
    let seed = 9;
    const pick = () => parts[(seed = (seed * 1103515245 + 12345) & 0x7fffffff) % parts.length];
    for (let trial = 0; trial < 3_000; trial++) {
      const roots = Array.from({ length: 1 + (trial % 7) }, (_, i) => ({ dir: '', prefix: [pick(), pick()].filter(Boolean).join('\\'), paths: [`src${i}`, ...(i % 3 ? [] : [''])] }));
      const fqn = [pick(), pick(), pick(), 'Cls'].filter(Boolean).join('\\');
      expect(psr4Candidates(fqn, roots)).toEqual(reference(fqn, roots));
    }
  });
  it('a Kotlin import loses its trailing alias as /\\s+as\\s+\\w+$/ removed it', () => {
    for (const t of randomTexts(['import', ' ', '\t', 'as', 'a', '.', '*', 'B_1', '\n', 'xas'], 20_000)) expect(withoutAlias(t)).toBe(t.replace(/\s+as\s+\w+$/, ''));
    expect(withoutAlias(`import a${fill(' ')}b`) === `import a${fill(' ')}b`).toBe(true);
  });
});
