import { closeSharedDiffPools } from '../../src/axes/visual/pool';
import { newUuidV7 } from '../../src/events/ids';
import { LOCAL_OPERATOR, type Ledger } from '../../src/ledger';
import { queryByName } from '../../src/readmodels/queries/queries';
import { runQuery } from '../../src/readmodels/queries/run-query';
import { OPENAPI_BASE, OPENAPI_HEAD, png } from '../e2e/support';
import { GitFixture } from '../support/git-fixture';
import { ledgerFixture } from '../support/ledger-fixture';

jest.setTimeout(120_000);

const AGENT = { principal: 'agent:rev1' as const, role: 'member' as const };
const HUMAN = { principal: 'user:alice' as const, role: 'member' as const };

/**
 * SPEC §11, §12 across rounds: a human's contract decision is keyed by the change's id and a visual
 * approval by the head image's hash, so a push that leaves the change (or the image) as it was keeps
 * them — a recompute at the new head needs no second decision; a push that changes the image does.
 */
describe('human decisions survive a recompute when the change is the same', () => {
  let fx: Awaited<ReturnType<typeof ledgerFixture>>;
  let ledger: Ledger;
  let repo: GitFixture;
  const ws = 'rounds';
  const target = { repoId: 'shop', prNumber: 3 };
  const run = (cmd: string, payload: Record<string, unknown>, who: { principal: `user:${string}` | `agent:${string}`; role: 'member' } = AGENT) =>
    ledger.run(cmd, ws, { ...who, idempotencyKey: newUuidV7() }, { ...target, ...payload });
  const ask = async (name: string) => {
    const q = queryByName(name)!;
    return (await runQuery(q, await ledger.workspace(ws), q.input.parse(target))).value as any;
  };

  beforeAll(async () => {
    fx = await ledgerFixture({ workspaceId: ws });
    ledger = fx.ledger;
    repo = new GitFixture('rl-rounds-');
    repo.git('remote', 'add', 'origin', 'git@github.com:acme/shop.git');
    repo.write('openapi.yaml', OPENAPI_BASE);
    repo.write('goldens/button.png', png(24, 16, [200, 40, 40]));
    repo.write('README.md', 'shop\n');
    const base = repo.commit('base');
    repo.write('openapi.yaml', OPENAPI_HEAD);
    repo.write('goldens/button.png', png(24, 16, [200, 40, 40], { x: 0, y: 0, w: 4, h: 4, rgb: [0, 0, 0] }));
    const head1 = repo.commit('head 1');
    await ledger.run('registerRepo', ws, { ...LOCAL_OPERATOR, idempotencyKey: newUuidV7() }, { repoId: 'shop', path: repo.dir });
    await run('requestReview', { baseSha: base, headSha: head1 });
    await run('computeReview', {});
  });
  afterAll(async () => {
    await fx.cleanup();
    repo.cleanup();
    await closeSharedDiffPools();
  });

  it('given every breaking change approved and the snapshot approved, when an unrelated push is computed, then both gates stay open with the same decisions; a changed image needs a new approval', async () => {
    const before = await ask('apiContract');
    const breaking = before.changes.filter((c: any) => c.severity === 'breaking');
    expect(breaking.length).toBeGreaterThan(0);
    for (const ch of breaking) await run('setContractDecision', { changeId: ch.changeId, decision: 'approved' }, HUMAN);
    await run('approveVisual', { snapshotId: 'goldens/button.png' }, HUMAN);
    expect(await ask('apiContract')).toMatchObject({ status: 'warn', undecidedBreaking: [] });
    expect(await ask('visual')).toMatchObject({ status: 'warn', pending: [] });

    repo.write('README.md', 'shop, documented\n');
    const head2 = repo.commit('docs only');
    const out = await run('computeReview', { headSha: head2 });
    expect(out.response.result).toMatchObject({ recorded: true, headSha: head2, newRound: 2 });
    const after = await ask('apiContract');
    expect(after).toMatchObject({ headSha: head2, status: 'warn', undecidedBreaking: [], rejected: [] });
    expect(after.changes.filter((c: any) => c.severity === 'breaking').map((c: any) => [c.changeId, c.decision?.decision])).toEqual(breaking.map((c: any) => [c.changeId, 'approved']));
    expect(await ask('visual')).toMatchObject({ status: 'warn', pending: [] });
    const verdict = await ask('verdict');
    expect(verdict.axes.filter((a: any) => a.axis === 'apiContract' || a.axis === 'visual').map((a: any) => a.status)).toEqual(['warn', 'warn']);
    expect(verdict).toMatchObject({ round: 2, state: 'provisional' });

    repo.write('goldens/button.png', png(24, 16, [200, 40, 40], { x: 0, y: 0, w: 6, h: 6, rgb: [0, 0, 0] }));
    const head3 = repo.commit('bigger square');
    await run('computeReview', { headSha: head3 });
    expect(await ask('visual')).toMatchObject({ status: 'fail', pending: ['goldens/button.png'] });
    expect(await ask('apiContract')).toMatchObject({ headSha: head3, status: 'warn' });
  });
});
