import { QueryBus } from '@nestjs/cqrs';
import { ledgerQuery, LEDGER_QUERY_CLASSES } from '../../src/cqrs/queries';
import { canonicalJson } from '../../src/events/canonical-json';
import { QUERIES } from '../../src/readmodels/queries/queries';
import { BASE, call, command, HEAD_A, nodePayload, serverFixture, tokenFor } from '../rpc/support';

describe('the query registry on the Nest QueryBus', () => {
  let fx: Awaited<ReturnType<typeof serverFixture>>;
  const target = { repoId: 'shop', prNumber: 5 };
  let positionAfterFiling = 0;

  beforeAll(async () => {
    fx = await serverFixture();
    const agent = await tokenFor(fx.server.url, fx.ownerToken, fx.workspaceId, 'agent:qa', 'member');
    expect((await command(fx.server.url, agent, fx.workspaceId, 'requestReview', { ...target, baseSha: BASE, headSha: HEAD_A })).error).toBeUndefined();
    const filed = await command(fx.server.url, agent, fx.workspaceId, 'addReviewNode', { ...target, node: nodePayload('an off-by-one') });
    expect(filed.error).toBeUndefined();
    positionAfterFiling = filed.result.lastPosition;
    expect((await command(fx.server.url, agent, fx.workspaceId, 'addReviewNode', { ...target, node: nodePayload('a race', { priority: 'P0' }) })).error).toBeUndefined();
  });
  afterAll(() => fx.close());

  it('has a query class and handler for every registry query', () => {
    expect(LEDGER_QUERY_CLASSES.map((c) => c.definition.name)).toEqual(QUERIES.map((q) => q.name));
  });

  it('answers every registry query exactly as review_studio.<name> does (value, position and refusals)', async () => {
    const bus = fx.server.app.get(QueryBus);
    let answered = 0;
    for (const q of QUERIES) {
      for (const input of [target, {}]) {
        const rpc = await call(fx.server.url, fx.ownerToken, `review_studio.${q.name}`, { workspace_id: fx.workspaceId, ...input });
        const viaBus = await bus.execute(ledgerQuery(q.name, fx.workspaceId, input)).then(
          (a) => ({ ok: true as const, json: canonicalJson(a) }),
          (e: { code?: string }) => ({ ok: false as const, code: e.code }),
        );
        if (rpc.error) {
          expect({ query: q.name, input, ok: viaBus.ok, code: viaBus.ok ? null : viaBus.code }).toEqual({ query: q.name, input, ok: false, code: rpc.error.data?.code });
        } else {
          expect({ query: q.name, input, answer: viaBus.ok ? JSON.parse(viaBus.json) : viaBus }).toEqual({ query: q.name, input, answer: rpc.result });
          answered++;
        }
      }
    }
    // Most read models answer for a PR: the comparison is not vacuous.
    expect(answered).toBeGreaterThanOrEqual(12);
  });

  it('answers as of a position like review_studio.<name> with asOf', async () => {
    const bus = fx.server.app.get(QueryBus);
    for (const name of ['nodeStatus', 'verdict']) {
      const rpc = await call(fx.server.url, fx.ownerToken, `review_studio.${name}`, { workspace_id: fx.workspaceId, ...target, asOf: positionAfterFiling });
      expect(rpc.error).toBeUndefined();
      const answer = await bus.execute(ledgerQuery(name, fx.workspaceId, target, positionAfterFiling));
      expect(answer.position).toBe(positionAfterFiling);
      expect(JSON.parse(canonicalJson(answer))).toEqual(rpc.result);
      // …and differs from now: the second finding is not in it.
      expect(canonicalJson(answer)).not.toBe(canonicalJson(await bus.execute(ledgerQuery(name, fx.workspaceId, target))));
    }
  });
});
