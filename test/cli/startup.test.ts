/**
 * The CLI loads only what the command it runs uses (issue 18): the command table registers without
 * loading any implementation, and each command requires its implementation when it runs. Checked in a
 * plain Node child (the CLI as users run it, from the TypeScript sources) by listing, at exit, every
 * module in `require.cache`.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { blank, setPixel, toPng } from '../axes/visual/support/images';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../..');

/** Runs the CLI with `args` and returns its exit code, output and the modules it loaded (relative to the repo). */
async function loadedBy(args: string[]): Promise<{ code: number; stdout: string; sources: string[]; packages: string[] }> {
  const script = `
    process.on('exit', () => require('node:fs').writeSync(2, '\\nLOADED ' + JSON.stringify(Object.keys(require.cache)) + '\\n'));
    require('./src/cli/main.ts').run(['node', 'review-ledger', ...JSON.parse(process.argv[1])]);`;
  let code = 0;
  let stdout = '';
  let stderr = '';
  try {
    ({ stdout, stderr } = await run(process.execPath, ['-r', './tools/ts-register.js', '-e', script, JSON.stringify(args)], { cwd: ROOT, encoding: 'utf8' }));
  } catch (err) {
    ({ code, stdout, stderr } = err as { code: number; stdout: string; stderr: string });
  }
  const line = stderr.split('\n').find((l) => l.startsWith('LOADED '));
  if (!line) throw new Error(`no module list from the child (exit ${code}): ${stderr}`);
  const files = (JSON.parse(line.slice(7)) as string[]).filter((f) => f.startsWith(ROOT)).map((f) => path.relative(ROOT, f));
  const sources = files.filter((f) => f.startsWith('src/')).sort();
  const packageOf = (f: string) => f.split('/').slice(1, f.split('/')[1].startsWith('@') ? 3 : 2).join('/');
  // @swc/core is the TypeScript require hook the child runs under, not something the CLI loads.
  const packages = [...new Set(files.filter((f) => f.startsWith('node_modules/')).map(packageOf))].filter((p) => !p.startsWith('@swc/')).sort();
  return { code, stdout, sources, packages };
}

/** What registering the whole command table loads: the registration modules, nothing they run. */
const REGISTRATION = [
  'src/axes/visual/options.ts',
  'src/cli/commands/backup.ts',
  'src/cli/commands/compute.ts',
  'src/cli/commands/context-pack.ts',
  'src/cli/commands/contract-diff.ts',
  'src/cli/commands/core.ts',
  'src/cli/commands/demo.ts',
  'src/cli/commands/index-code.ts',
  'src/cli/commands/index.ts',
  'src/cli/commands/mcp.ts',
  'src/cli/commands/publish.ts',
  'src/cli/commands/read-models.ts',
  'src/cli/commands/review.ts',
  'src/cli/commands/token.ts',
  'src/cli/commands/visual-diff.ts',
  'src/cli/main.ts',
  'src/local-operator.ts',
  'src/publish/output-hygiene.ts',
];

/** Never loaded by --help, visual-diff or contract-diff: the server, the stores, the agent transports. */
const HEAVY = ['@nestjs/common', '@nestjs/core', '@nestjs/cqrs', 'pg', '@modelcontextprotocol/sdk', 'ws', 'better-sqlite3', 'rxjs', '@octokit/rest', '@eventstore/db-client', 'express', 'web-tree-sitter'];

describe('CLI start-up loads only what the command uses', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-cli-startup-'));
    fs.writeFileSync(path.join(dir, 'a.png'), toPng(blank(30, 20)));
    fs.writeFileSync(path.join(dir, 'b.png'), toPng(setPixel(blank(30, 20), 7, 8, [0, 0, 0, 255])));
    fs.writeFileSync(path.join(dir, 'a.yaml'), 'openapi: 3.0.3\ninfo: { title: t, version: "1" }\npaths:\n  /a:\n    get:\n      responses: { "200": { description: ok } }\n');
    fs.writeFileSync(path.join(dir, 'b.yaml'), 'openapi: 3.0.3\ninfo: { title: t, version: "1" }\npaths: {}\n');
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('--help lists every command and loads the registration modules and commander only', async () => {
    const r = await loadedBy(['--help']);
    expect(r.code).toBe(0);
    for (const command of ['serve', 'workspace', 'events', 'review', 'replay', 'audit', 'token', 'webhook-secret', 'mcp', 'visual-diff', 'repo', 'index', 'compute', 'publish', 'contract-diff', 'context', 'metrics', 'demo']) {
      expect(r.stdout).toMatch(new RegExp(`^  ${command}\\b`, 'm'));
    }
    expect(r.sources).toEqual(REGISTRATION);
    expect(r.packages).toEqual(['commander']);
  });

  it('visual-diff on an identical pair loads the engine and nothing else', async () => {
    const r = await loadedBy(['visual-diff', path.join(dir, 'a.png'), path.join(dir, 'a.png')]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^unchanged: 0 pixel/);
    expect(r.sources).toEqual([...REGISTRATION, 'src/axes/visual/diff.ts', 'src/axes/visual/kernel.ts', 'src/axes/visual/match.ts', 'src/axes/visual/png.ts', 'src/axes/visual/split.ts', 'src/axes/visual/threads.ts', 'src/axes/visual/wasm/kernel-bytes.ts', 'src/cli/commands/visual-diff.actions.ts'].sort());
    expect(r.packages).toEqual(['commander']);
  });

  it('visual-diff on a changed pair adds only its comparison code', async () => {
    const r = await loadedBy(['visual-diff', path.join(dir, 'a.png'), path.join(dir, 'b.png'), '--out', path.join(dir, 'd.png')]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^changed: 1 pixel/);
    expect(r.sources.filter((s) => !REGISTRATION.includes(s)).every((s) => s.startsWith('src/axes/visual/') || s === 'src/cli/commands/visual-diff.actions.ts')).toBe(true);
    for (const p of r.packages) expect(HEAVY).not.toContain(p);
  });

  it('contract-diff loads neither the ledger nor the server', async () => {
    const r = await loadedBy(['contract-diff', path.join(dir, 'a.yaml'), path.join(dir, 'b.yaml')]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/1 breaking/);
    for (const p of r.packages) expect(HEAVY).not.toContain(p);
    expect(r.sources.filter((s) => /^src\/(ledger|server|events\/store|workspaces|rpc|mcp)\b/.test(s))).toEqual([]);
  });

  it('a command that opens the ledger still runs (its implementation is loaded on action)', async () => {
    const dataDir = path.join(dir, 'data');
    const r = await loadedBy(['--data-dir', dataDir, 'workspace', 'create', 'acme']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('createWorkspace: recorded 2 events at positions 1–2, stream workspace\n  workspaceId: acme\n');
    expect(r.sources).toContain('src/ledger.ts');
  });
});
