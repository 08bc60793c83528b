import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { COMMANDS } from '../../src/commands/registry';
import { QUERIES } from '../../src/readmodels/queries/queries';

const ROOT = path.resolve(__dirname, '../..');
type Run = { stdout: string; stderr: string; code: number };

/**
 * Runs CLI invocations one after another in one plain Node child (commander is ESM-only, so not in
 * jest), each through the real program and actions on a real SQLite data dir.
 */
async function cliRuns(dataDir: string, invocations: string[][]): Promise<Run[]> {
  const script = `
    const { buildProgram } = require('./src/cli/main.ts');
    // Subcommands were created before exitOverride(), so their --help calls process.exit: make it return here.
    process.exit = (code) => { throw Object.assign(new Error('exit ' + code), { code: 'commander.helpDisplayed' }); };
    (async () => {
      const results = [];
      for (const args of JSON.parse(process.argv[1])) {
        let stdout = '', stderr = '';
        const out = process.stdout.write, err = process.stderr.write;
        process.stdout.write = (c) => ((stdout += c), true);
        process.stderr.write = (c) => ((stderr += c), true);
        process.exitCode = 0;
        try {
          await buildProgram().exitOverride().configureOutput({ writeOut: (s) => (stdout += s), writeErr: (s) => (stderr += s) }).parseAsync(['node', 'review-ledger', ...args]);
        } catch (e) {
          if (e.code !== 'commander.helpDisplayed') stderr += 'THROWN ' + (e.stack || e);
        } finally {
          process.stdout.write = out;
          process.stderr.write = err;
        }
        results.push({ stdout, stderr, code: Number(process.exitCode || 0) });
      }
      process.exitCode = 0;
      require('node:fs').writeSync(1, JSON.stringify(results));
    })();`;
  const { stdout } = await promisify(execFile)(process.execPath, ['-r', './tools/ts-register.js', '-e', script, JSON.stringify(invocations.map((a) => ['--data-dir', dataDir, ...a]))], { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return JSON.parse(stdout) as Run[];
}

const codeOf = (r: Run): string => (r.code === 0 ? 'answered' : (r.stderr.match(/^error \[([a-z_]+)\]/m)?.[1] ?? `exit ${r.code}: ${r.stderr.slice(0, 300)}`));

describe('the CLI covers the command and query registries', () => {
  jest.setTimeout(300_000);
  const target = { repoId: 'api', prNumber: 3 };
  const invocations = {
    create: [['workspace', 'create', 'w']],
    commands: COMMANDS.map((c) => ['review', 'run', c.name, '--workspace', 'w', '--payload', '{}']),
    unknownCommand: [['review', 'run', 'noSuchCommand', '--workspace', 'w', '--payload', '{}']],
    decisions: [
      ['review', 'run', 'setContractDecision', '--workspace', 'w', '--payload', JSON.stringify({ ...target, changeId: 'ac_x', decision: 'approved' })],
      ['review', 'run', 'approveVisual', '--workspace', 'w', '--payload', JSON.stringify({ ...target, snapshotId: 's1' })],
    ],
    queries: QUERIES.map((q) => ['review', 'show', q.name, '--workspace', 'w', '--repo', 'api', '--pr', '3']),
    extra: [
      ['review', 'show', 'audit', '--workspace', 'w'],
      ['review', 'show', 'axes', '--workspace', 'w'],
      ['review', 'show', 'status', '--workspace', 'w', '--repo', 'api', '--pr', '3'],
      ['review', 'run', '--help'],
      ['review', 'show', '--help'],
    ],
  };
  let dir: string;
  let runs: Record<keyof typeof invocations, Run[]>;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-cli-registry-'));
    // One child for everything: a CLI start costs seconds on a loaded machine.
    const all = await cliRuns(dir, Object.values(invocations).flat());
    let i = 0;
    runs = Object.fromEntries(Object.entries(invocations).map(([k, list]) => [k, list.map(() => all[i++])])) as typeof runs;
    expect(runs.create[0].code).toBe(0);
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('`review run` reaches every command of the registry (its own validation answers, never unknown_command)', () => {
    const answers = Object.fromEntries(COMMANDS.map((c, i) => [c.name, codeOf(runs.commands[i])]));
    expect(Object.entries(answers).filter(([, code]) => code === 'unknown_command' || code.startsWith('exit'))).toEqual([]);
    expect(Object.keys(answers).sort()).toEqual(COMMANDS.map((c) => c.name).sort());
    const [refused] = runs.unknownCommand;
    expect(refused.stderr).toMatch(/^error \[unknown_command\]: command: "noSuchCommand" is not in the command registry \(createWorkspace, /);
    expect(refused.code).toBe(1);
  });

  it('contract decisions and visual approvals are reachable: their deciders answer', () => {
    expect(runs.decisions.map(codeOf)).toEqual(['review_not_found', 'review_not_found']);
  });

  it('`review show` answers every query of the registry (its input schema answers, never unknown_query)', () => {
    const answers = Object.fromEntries(QUERIES.map((q, i) => [q.name, codeOf(runs.queries[i])]));
    expect(Object.entries(answers).filter(([, code]) => code === 'unknown_query' || code.startsWith('exit'))).toEqual([]);
    for (const r of runs.queries.filter((x) => x.code === 0)) expect(JSON.parse(r.stdout)).toEqual(expect.objectContaining({ position: expect.any(Number) }));
    // The state of contract decisions and visual approvals is a query like any other.
    expect([answers.apiContract, answers.visual]).toEqual([expect.stringMatching(/^(answered|review_not_found|not_computed)$/), expect.stringMatching(/^(answered|review_not_found|not_computed)$/)]);
    const [audit, axes] = runs.extra;
    expect(JSON.parse(audit.stdout).value).toEqual({ rows: [], next: null });
    expect(axes.stderr).toMatch(/^error \[unknown_query\]: query: "axes" is not in the query registry \(verdict, /);
  });

  it('a read model has one name: an old view name (status for reviewStatus) is refused, not aliased', () => {
    expect(runs.extra[2].stderr).toMatch(/^error \[unknown_query\]: query: "status" is not in the query registry \(verdict, nodeStatus, /);
    expect(runs.extra[2].code).toBe(1);
  });

  it('`review run --help` and `review show --help` list every command and query, generated from the registries', () => {
    const [, , , run, show] = runs.extra;
    for (const c of COMMANDS) expect(run.stdout).toMatch(new RegExp(`^  ${c.name} \\{`, 'm'));
    for (const q of QUERIES) expect(show.stdout).toMatch(new RegExp(`^  ${q.name} \\{`, 'm'));
  });
});
