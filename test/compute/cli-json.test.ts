import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { OPENAPI_BASE, OPENAPI_HEAD } from '../e2e/support';
import { GitFixture } from '../support/git-fixture';

jest.setTimeout(180_000);

const ROOT = path.resolve(__dirname, '../..');

describe('review-ledger compute --json and abbreviated SHAs over the CLI', () => {
  const f = new GitFixture('rl-cli-json-');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-cli-json-data-'));
  const cli = (...args: string[]) =>
    execFileSync(process.execPath, ['-r', path.join(ROOT, 'tools/ts-register.js'), path.join(ROOT, 'src/cli/main.ts'), '--data-dir', dataDir, ...args], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  afterAll(() => {
    f.cleanup();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('given a breaking API change nobody decided, when computed with --json from 7-digit SHAs, then the api-contract reports the gate (fail, pending) and the review has one round at the full head', () => {
    f.git('remote', 'add', 'origin', 'https://github.com/acme/api.git');
    f.write('openapi.yaml', OPENAPI_BASE);
    const base = f.commit('base');
    f.write('openapi.yaml', OPENAPI_HEAD);
    const head = f.commit('head');
    cli('workspace', 'create', 'cli-json');
    cli('repo', 'register', '--workspace', 'cli-json', '--repo', 'api', '--path', f.dir);

    const out = JSON.parse(cli('compute', '--workspace', 'cli-json', '--repo', 'api', '--pr', '5', '--base', base.slice(0, 7), '--head', head.slice(0, 7), '--json'));
    expect(out).toMatchObject({ baseSha: base, headSha: head });
    // `evidence`: the diff ran completely; never a "pass" beside an undecided breaking change.
    expect(out.apiContract).toMatchObject({ status: 'fail', evidence: 'complete' });
    expect(JSON.stringify(out.apiContract)).not.toContain('"pass"');
    expect(out.apiContract.pending.length).toBeGreaterThan(0);
    expect(out.verdict).toMatchObject({ state: 'provisional', verdict: 'Block' });

    // The same PR computed again with the full SHAs: the same round, nothing new recorded.
    // --json output is pure JSON even when nothing changed: the note goes to stderr.
    const again = spawnSync(process.execPath, ['-r', path.join(ROOT, 'tools/ts-register.js'), path.join(ROOT, 'src/cli/main.ts'), '--data-dir', dataDir, 'compute', '--workspace', 'cli-json', '--repo', 'api', '--pr', '5', '--base', base, '--head', head, '--json'], { cwd: ROOT, encoding: 'utf8' });
    expect(again.status).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ baseSha: base, headSha: head, apiContract: { status: 'fail' } });
    expect(again.stderr).toMatch(/^identical inputs: the latest computation stands/m);
    const status = JSON.parse(cli('review', 'show', 'reviewStatus', '--workspace', 'cli-json', '--repo', 'api', '--pr', '5'));
    expect(status.value).toMatchObject({ round: 1, reviewedHead: head });
  });
});
