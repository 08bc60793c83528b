import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');
jest.setTimeout(180_000);

/**
 * CLI output as a person expects it (issue 38): one line per act with its positions, `--json` for the
 * exact response, lists with a header row, and a suggestion for a mistyped name instead of the whole usage.
 */
describe('CLI output for people, --json for machines', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-cli-out-'));
  const cli = (...args: string[]) => spawnSync(process.execPath, ['-r', './tools/ts-register.js', 'src/cli/main.ts', '--data-dir', dataDir, ...args], { cwd: ROOT, encoding: 'utf8' });
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  test('acts: a line with what was recorded where, the result below; --json prints the exact response, with its trailing newline', () => {
    expect(cli('workspace', 'create', 'acme').stdout).toBe('createWorkspace: recorded 2 events at positions 1–2, stream workspace\n  workspaceId: acme\n');
    expect(cli('member', 'add', '--workspace', 'acme', '--principal', 'agent:bot').stdout).toBe('addMember: recorded 1 event at position 3, stream workspace\n');
    const run = cli('review', 'run', 'setReviewLevel', '--workspace', 'acme', '--payload', '{"level":"light"}');
    expect(run.stdout).toBe('setReviewLevel: recorded 1 event at position 4, stream workspace\n  changed: true\n');
    const again = cli('review', 'run', 'setReviewLevel', '--workspace', 'acme', '--payload', '{"level":"light"}', '--json');
    expect(again.stdout.endsWith('}\n')).toBe(true);
    expect(JSON.parse(again.stdout)).toEqual({ eventIds: [], firstPosition: null, lastPosition: null, result: { changed: false }, streamId: 'workspace', streamRevision: 3 });
  });

  test('lists have a header row', () => {
    cli('token', 'create', '--workspace', 'acme', '--principal', 'agent:bot');
    expect(cli('token', 'list', '--workspace', 'acme').stdout.split('\n')[0]).toMatch(/^token id\s+principal\s+role\s+state\s+issued at\s+label$/);
    expect(cli('member', 'list', '--workspace', 'acme').stdout.split('\n')[0]).toMatch(/^principal\s+role$/);
    expect(cli('workspace', 'list').stdout.split('\n')[0]).toMatch(/^workspace\s+name\s+created at$/);
  });

  test('a mistyped command gets a suggestion and a pointer to --help, not the whole usage; so do unknown command and query names', () => {
    const typo = cli('worksapce', 'list');
    expect(typo.stderr).toBe("error: unknown command 'worksapce'\n(Did you mean workspace?)\n(add --help for the usage)\n");
    expect(cli('review', 'show', 'verdikt', '--workspace', 'acme').stderr).toMatch(/^error \[unknown_query\]: query: "verdikt" is not in the query registry — did you mean "verdict"\? \(/);
    expect(cli('review', 'run', 'confirmNod', '--workspace', 'acme', '--payload', '{}').stderr).toMatch(/^error \[unknown_command\]: command: "confirmNod" is not in the command registry — did you mean "confirmNode"\? \(/);
  });
});
