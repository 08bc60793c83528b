import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');
const cli = (dataDir: string, ...args: string[]): string =>
  execFileSync(process.execPath, ['-r', './tools/ts-register.js', 'src/cli/main.ts', '--data-dir', dataDir, ...args], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

describe('review-ledger projections', () => {
  jest.setTimeout(180_000);

  test('rebuild builds a new generation from 0 and switches to it; status shows the slot caught up with the head; unknown names are refused', () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-rm-cli-'));
    cli(dataDir, 'workspace', 'create', 'acme');
    const lines = (out: string) => out.trim().split('\n').map((l) => JSON.parse(l));
    // Without --name: every read model, side by side.
    const all = lines(cli(dataDir, 'read-models', 'rebuild', '--workspace', 'acme', '--json'));
    expect(all.map((r) => [r.name, r.version])).toEqual([['audit', 3], ['history', 1], ['reviewFacts', 1]]);
    const first = all[0];
    const [second] = lines(cli(dataDir, 'read-models', 'rebuild', '--workspace', 'acme', '--name', 'audit', '--json'));
    expect(second.generation).toBe(first.generation + 1);
    const status = JSON.parse(cli(dataDir, 'read-models', 'status', '--workspace', 'acme', '--json'));
    expect(status).toEqual([
      { name: 'audit', version: 3, generation: second.generation, position: second.position, head: second.position, state: 'ready', codeVersion: 3 },
      { name: 'history', version: 1, generation: all[1].generation, position: second.position, head: second.position, state: 'ready', codeVersion: 1 },
      { name: 'reviewFacts', version: 1, generation: all[2].generation, position: second.position, head: second.position, state: 'ready', codeVersion: 1 },
    ]);
    expect(() => cli(dataDir, 'read-models', 'rebuild', '--workspace', 'acme', '--name', 'nope')).toThrow(/unknown_read_model/);
    // `projections` (the command's earlier name) is an alias: scripts written against it get the same answer.
    expect(JSON.parse(cli(dataDir, 'projections', 'status', '--workspace', 'acme', '--json'))).toEqual(status);
    // The audit page options reach the query's schema: a page of an empty log, an unknown order refused.
    expect(JSON.parse(cli(dataDir, 'audit', '--workspace', 'acme', '--order', 'desc', '--limit', '3', '--json'))).toMatchObject({ rows: [], next: null });
    expect(() => cli(dataDir, 'audit', '--workspace', 'acme', '--order', 'sideways', '--json')).toThrow(/--order/);
  });
});
