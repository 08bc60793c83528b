import { newUuidV7 } from '../../src/events/ids';
import { payloadFor, resolveTools } from '../../src/mcp/tools';
import { Actor, ALICE, BOB, CAROL, publishFixture } from './support';

describe('MCP publish_review_to_github: consensus by default, Ship stays COMMENT unless asked', () => {
  let f: Awaited<ReturnType<typeof publishFixture>>;
  afterEach(async () => f?.close());

  const callTool = async (actor: Actor, args: Record<string, unknown>) => {
    const tool = resolveTools().find((t) => t.name === 'publish_review_to_github')!;
    expect(tool.schema.safeParse(args).success).toBe(true);
    const ws = await f.ledger.workspace('acme');
    return f.ledger.executor.execute(tool.command!, ws, { principal: actor.principal as any, role: actor.role, idempotencyKey: newUuidV7() }, payloadFor(tool.binding!, args));
  };

  it('is the publish command: an agent gets a request, a human publishes peer-confirmed findings as COMMENT', async () => {
    f = await publishFixture();
    const tool = resolveTools().find((t) => t.name === 'publish_review_to_github')!;
    expect(tool.command!.name).toBe('publish');
    const confirmed = await f.file(ALICE, { title: 'five is a string now', anchor: { path: 'src/app.ts', startLine: 5, endLine: 5 } });
    await f.confirm(BOB, confirmed.nodeId);
    await f.file(ALICE, { title: 'unconfirmed', anchor: { path: 'src/app.ts', startLine: 29, endLine: 29 } });
    await f.finalize();

    const asAgent = await callTool(ALICE, { repoId: 'web-app', prNumber: 7 });
    expect(asAgent.response.result).toMatchObject({ status: 'awaiting_approval', selection: 'consensus', approveOnShip: false });
    expect(f.github.log).toHaveLength(0);

    const asHuman = await callTool(CAROL, { repoId: 'web-app', prNumber: 7 });
    expect(asHuman.response.result).toMatchObject({ status: 'published', event: 'COMMENT', verdict: 'Ship', inline: 1 });
    expect(f.github.reviewPosts()[0].body.comments).toHaveLength(1);
  });
});
