import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { GitFixture } from '../support/git-fixture';

jest.setTimeout(120_000);

const ROOT = path.resolve(__dirname, '../..');

describe('review-ledger index / compute CLI', () => {
  const f = new GitFixture('rl-cli-');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-cli-data-'));
  const cli = (...args: string[]) =>
    execFileSync(process.execPath, ['-r', path.join(ROOT, 'tools/ts-register.js'), path.join(ROOT, 'src/cli/main.ts'), '--data-dir', dataDir, ...args], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  afterAll(() => {
    f.cleanup();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('registers a repo, indexes it, and prints the cohort report with reading order, blast radius and grouping mode', () => {
    f.git('remote', 'add', 'origin', 'https://gitlab.com/acme/tools.git');
    f.write('src/b.ts', 'export function g(x: number): number {\n  return x + 1;\n}\n');
    f.write('src/a.ts', "import { g } from './b';\n\nexport function f(x: number): number {\n  return g(x) * 2;\n}\n");
    f.write('scripts/run.lua', 'print("a")\n');
    const base = f.commit('base');
    f.write('src/b.ts', 'export function g(x: number): number {\n  return x + 2;\n}\n');
    f.write('src/a.ts', "import { g } from './b';\n\nexport function f(x: number): number {\n  return g(x) * 3;\n}\n");
    f.write('scripts/run.lua', 'print("b")\n');
    const head = f.commit('head');

    cli('workspace', 'create', 'cli-ws');
    expect(JSON.parse(cli('repo', 'register', '--workspace', 'cli-ws', '--repo', 'tools', '--path', f.dir))).toMatchObject({ forge: { kind: 'gitlab', owner: 'acme', name: 'tools' } });
    const indexed = cli('index', '--workspace', 'cli-ws', '--repo', 'tools', '--commit', head);
    expect(indexed).toMatch(/indexed [0-9a-f]{40}: 2 files, 2 symbols/);
    expect(indexed).toMatch(/1 file\(s\) in languages without a grammar .*scripts\/run\.lua/);

    const report = cli('compute', '--workspace', 'cli-ws', '--repo', 'tools', '--pr', '3', '--base', base, '--head', head);
    expect(report).toMatch(/2 cohort\(s\), 3 changed file\(s\)/);
    expect(report).toMatch(/grouping: semantic/);
    expect(report).toMatch(/grouping: path — no grammar for lua/);
    expect(report).toMatch(/reading order \(callee-first\):\n\s+1\. src\/b\.ts#g .*called by f\n\s+2\. src\/a\.ts#f .*calls g/);
    expect(report).toMatch(/blast radius: score [\d.]+ · 0 dependent file\(s\)/);
    // The gates and the verdict close the report (issue 38): no spec and no snapshot here, nothing filed yet.
    expect(report).toMatch(/\napi contract: not_applicable — 0 change\(s\), 0 breaking[^\n]*\nvisual: not_applicable — 0 snapshot\(s\), 0 changed\/added\/removed[^\n]*\nverdict: Hold \(provisional\)\n/);
    expect(cli('compute', '--workspace', 'cli-ws', '--repo', 'tools', '--pr', '3', '--base', base, '--head', head)).toMatch(/identical inputs: the latest computation stands/);
  });
});
