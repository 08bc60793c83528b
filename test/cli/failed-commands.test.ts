import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadConfig } from '../../src/config';
import { collect } from '../../src/events/store/port';
import { Ledger } from '../../src/ledger';

const ROOT = path.resolve(__dirname, '../..');
jest.setTimeout(120_000);

const cli = (dataDir: string, ...args: string[]) => spawnSync(process.execPath, ['-r', './tools/ts-register.js', 'src/cli/main.ts', '--data-dir', dataDir, ...args], { cwd: ROOT, encoding: 'utf8' });

async function logOf(dataDir: string, workspace: string) {
  const ledger = new Ledger(loadConfig({ dataDir }, {}));
  try {
    return (await collect((await ledger.workspace(workspace)).store.readAll())).map((e) => `${e.globalPosition} ${e.type}`);
  } finally {
    await ledger.close();
  }
}

test('a `compute` the repo makes impossible fails before anything is written (issue 38: it recorded a ReviewRequested)', async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-failed-cmd-'));
  try {
    expect(cli(dataDir, 'workspace', 'create', 'acme').status).toBe(0);
    const before = await logOf(dataDir, 'acme');
    const r = cli(dataDir, 'compute', '--workspace', 'acme', '--repo', 'nosuch', '--pr', '2', '--base', 'c'.repeat(40), '--head', 'a'.repeat(40));
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^error \[repo_not_found\]: repoId: "nosuch" is not registered/m);
    expect(await logOf(dataDir, 'acme')).toEqual(before);
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});
