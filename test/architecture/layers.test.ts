import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

// The checker is plain Node (CI and `node tools/check-layers.js` run the same code).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const layers = require('../../tools/check-layers.js') as {
  analyse(root?: string): { failures: string[]; fileCycles: string[][]; folderCycles: unknown[]; upward: unknown[] };
  moduleSpecifiers(text: string): string[];
  MAX_UPWARD: number;
  ALLOWED_UPWARD: unknown[];
};

describe('src/ imports point down the layer order (events → domain → commands/projections → transports → server/cli)', () => {
  it('has no file cycle, no folder cycle and no upward import beyond the listed exceptions', () => {
    const r = layers.analyse(path.resolve(__dirname, '../..'));
    expect(r.failures).toEqual([]);
    expect(layers.ALLOWED_UPWARD.length).toBeLessThanOrEqual(layers.MAX_UPWARD);
  });

  it('every listed IO exception names a file that exists (so a stale entry is caught, not skipped)', () => {
    const { IO_EXCEPTIONS } = require('../../tools/check-layers.js') as { IO_EXCEPTIONS: Array<{ file: string }> };
    expect(IO_EXCEPTIONS.filter((e) => !fs.existsSync(path.resolve(__dirname, '../..', e.file)))).toEqual([]);
  });
});

describe('the README map of units is the layer list', () => {
  const checker = require('../../tools/check-layers.js') as {
    LAYERS: Array<{ units: string[] }>;
    UNIT_NOTES: Record<string, string>;
    withUnitMap(text: string): string;
  };
  const readme = fs.readFileSync(path.resolve(__dirname, '../../README.md'), 'utf8');

  it('every unit has a note, and README.md holds the current rendering (regenerate: node tools/check-layers.js --readme)', () => {
    const units = checker.LAYERS.flatMap((l) => l.units);
    expect(units.filter((u) => !checker.UNIT_NOTES[u])).toEqual([]);
    expect(Object.keys(checker.UNIT_NOTES).filter((u) => !units.includes(u))).toEqual([]);
    expect(checker.withUnitMap(readme)).toBe(readme);
    for (const u of units) expect(readme).toContain(u.endsWith('.ts') ? `\`src/${u}\`` : `\`src/${u}/\``);
  });

  it('a hand edit inside the map is caught, and a missing marker is an error', () => {
    const stale = readme.replace('| `src/cli/` |', '| `src/cli-old/` |');
    expect(checker.withUnitMap(stale)).not.toBe(stale);
    expect(() => checker.withUnitMap('no markers')).toThrow(/markers/);
  });

  it('the README fits on a few screens (at most 12 KB; details belong in docs/)', () => {
    expect(Buffer.byteLength(readme)).toBeLessThanOrEqual(12 * 1024);
  });
});

describe('the checker itself', () => {
  let root: string;
  const write = (rel: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), text);
  };
  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-layers-'));
    // one file in every declared unit, so "declared but missing" stays quiet
    for (const l of require('../../tools/check-layers.js').LAYERS as Array<{ units: string[] }>) {
      for (const u of l.units) write(u.endsWith('.ts') ? `src/${u}` : `src/${u}/index.ts`, 'export {};\n');
    }
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it('reads static, type-only, re-export, dynamic and require imports, and skips comments and strings', () => {
    const specs = layers.moduleSpecifiers(
      [
        "import { a } from './a';",
        "import type { B } from './b';",
        "export * from './c';",
        "export { d as e } from './d';",
        "import './side';",
        "const f = (): typeof import('./f') => require('./g');",
        "// import { x } from './commented';",
        '/* import { y } from "./block"; */',
        "const t = `import { z } from './template';`;",
        "const r = /import { q } from '.\\/regex'/;",
        "export const h = 1;",
      ].join('\n'),
    );
    expect(specs).toEqual(['./a', './b', './c', './d', './side', './f', './g']);
  });

  it('fails a database, child-process or network import outside the folders that own it; type-only imports are not IO', () => {
    write('src/commands/driver.ts', "import Database from 'better-sqlite3';\nexport const d = Database;\n");
    write('src/review/spawn.ts', "const cp = require('node:child_process');\nexport const c = cp;\n");
    write('src/rules/socket.ts', "import * as net from 'node:net';\nexport const n = net;\n");
    write('src/readmodels/types-only.ts', "import type { Pool } from 'pg';\nexport type P = Pool | import('pg').Client;\n");
    write('src/stores/sqlite/ok.ts', "import Database from 'better-sqlite3';\nexport const d = Database;\n");
    write('src/git/ok.ts', "import { execFile } from 'node:child_process';\nexport const e = execFile;\n");
    const failures = layers.analyse(root).failures.filter((f) => / import outside its owners /.test(f));
    expect(failures.map((f) => f.replace(/ \(.*\): /, ': '))).toEqual([
      'database import outside its owners: src/commands/driver.ts imports better-sqlite3',
      'child process import outside its owners: src/review/spawn.ts imports node:child_process',
      'network import outside its owners: src/rules/socket.ts imports node:net',
    ]);
  });

  it('fails an upward import (events importing commands)', () => {
    write('src/events/index.ts', "import type { X } from '../commands/index';\nexport {};\n");
    expect(layers.analyse(root).failures).toEqual(['upward import (events -> application): src/events/index.ts -> src/commands/index.ts']);
  });

  it('fails a file cycle and the folder cycle it makes, even within one layer', () => {
    write('src/review/index.ts', "import { c } from '../codegraph/index';\nexport const r = 1;\n");
    write('src/codegraph/index.ts', "import { r } from '../review/index';\nexport const c = 1;\n");
    const f = layers.analyse(root).failures;
    expect(f).toContain('file cycle: src/codegraph/index.ts -> src/review/index.ts');
    expect(f).toContain('folder cycle in src/: codegraph, review');
  });

  it('fails a folder cycle that no file cycle explains', () => {
    write('src/axes/a/one.ts', "import '../b/two';\n");
    write('src/axes/b/two.ts', "export {};\n");
    write('src/axes/b/three.ts', "import '../a/four';\n");
    write('src/axes/a/four.ts', "export {};\n");
    expect(layers.analyse(root).failures).toEqual(['folder cycle in src/axes/: a, b']);
  });

  it('fails a top-level folder that no layer names', () => {
    write('src/utils/index.ts', 'export {};\n');
    expect(layers.analyse(root).failures).toEqual(['units in no layer: utils']);
  });
});
