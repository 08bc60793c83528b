import { execFile } from 'node:child_process';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { newUuidV7 } from '../../src/events/ids';
import { ALICE, CAROL, OWNER, publishFixture, TOKEN } from './support';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../..');

describe('review-ledger publish (CLI, GitHub credentials from the environment)', () => {
  let f: Awaited<ReturnType<typeof publishFixture>>;
  afterEach(async () => f?.close());

  const cli = (args: string[]) =>
    run(process.execPath, ['-r', './tools/ts-register.js', 'src/cli/main.ts', '--data-dir', f.dataDir, 'publish', '--workspace', 'acme', '--repo', 'web-app', '--pr', '7', ...args], {
      cwd: ROOT,
      env: { ...process.env, REVIEW_LEDGER_GITHUB_TOKEN: TOKEN, REVIEW_LEDGER_GITHUB_API_URL: f.github.baseUrl },
    }).catch((e) => e as { stdout: string; stderr: string; code: number });

  /** Acting as a principal from the CLI needs its token: provision the member, issue one. */
  const tokenOf = async (principal: string) => {
    await f.ledger.run('addMember', 'acme', { ...OWNER, idempotencyKey: newUuidV7() }, { principal, role: 'member' });
    return (await f.ledger.issueToken('acme', { ...OWNER, idempotencyKey: newUuidV7() }, { principal, role: 'member' })).token;
  };

  it('an agent requests, a human approves, one review is posted; the token is never printed', async () => {
    f = await publishFixture();
    const alice = await tokenOf(ALICE.principal);
    const carol = await tokenOf(CAROL.principal);
    await f.file(ALICE, { title: 'five is a string now', anchor: { path: 'src/app.ts', startLine: 5, endLine: 5 } });
    await f.finalize();
    const requested = await cli(['--request', '--token', alice]);
    expect(JSON.parse(requested.stdout).result).toEqual({ status: 'awaiting_approval', requestId: 'p1', selection: 'consensus', approveOnShip: false });
    expect(f.github.log).toHaveLength(0);
    const approved = await cli(['--approve', 'p1', '--token', carol, '--as', CAROL.principal]);
    const result = JSON.parse(approved.stdout).result;
    // Consensus selection: the unconfirmed finding stays out; a Ship from a request is a COMMENT.
    expect(result).toMatchObject({ status: 'published', requestId: 'p1', event: 'COMMENT', inline: 0, folded: 0 });
    expect(f.github.pulls.get(7)!.reviews).toHaveLength(1);
    expect(requested.stdout + requested.stderr + approved.stdout + approved.stderr).not.toContain(TOKEN);
    const again = await cli(['--token', carol]);
    expect(again.stderr).toContain('error [already_published]');
    expect(f.github.pulls.get(7)!.reviews).toHaveLength(1);
  });
});
