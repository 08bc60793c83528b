import { newUuidV7 } from '../../src/events/ids';
import { resolveTools } from '../../src/mcp/tools';
import { ALICE, BOB, CAROL, publishFixture } from './support';

describe('publish accepts the SPEC §14 spelling approve_on_ship as well as approveOnShip', () => {
  let f: Awaited<ReturnType<typeof publishFixture>>;
  afterEach(async () => f?.close());

  async function shipReady() {
    f = await publishFixture();
    const confirmed = await f.file(ALICE, { title: 'five is a string now', priority: 'P3', anchor: { path: 'src/app.ts', startLine: 5, endLine: 5 } });
    await f.confirm(BOB, confirmed.nodeId);
    await f.finalize();
  }

  it('approve_on_ship: false leaves Ship as COMMENT (the default would approve)', async () => {
    await shipReady();
    const out = await f.publish(CAROL, { approve_on_ship: false });
    expect(out.response.result).toMatchObject({ status: 'published', verdict: 'Ship', event: 'COMMENT' });
    const [requested] = await f.eventsOf('PublishRequested');
    expect(requested.data).toMatchObject({ approveOnShip: false });
    expect(requested.data).not.toHaveProperty('approve_on_ship');
  });

  it('approve_on_ship: true approves a Ship, as approveOnShip: true does', async () => {
    await shipReady();
    const out = await f.publish(CAROL, { approve_on_ship: true });
    expect(out.response.result).toMatchObject({ status: 'published', verdict: 'Ship', event: 'APPROVE' });
    expect(f.github.reviewPosts()[0].body.event).toBe('APPROVE');
  });

  it('both spellings agreeing are accepted', async () => {
    await shipReady();
    const out = await f.publish(CAROL, { approveOnShip: false, approve_on_ship: false });
    expect(out.response.result).toMatchObject({ status: 'published', event: 'COMMENT' });
  });

  it('both spellings disagreeing are refused, naming both fields, and nothing is posted', async () => {
    await shipReady();
    const refused = f.publish(CAROL, { approveOnShip: true, approve_on_ship: false });
    await expect(refused).rejects.toMatchObject({ code: 'invalid_payload' });
    await expect(f.publish(CAROL, { approveOnShip: true, approve_on_ship: false })).rejects.toThrow(/approve_on_ship.*approveOnShip/);
    expect(f.github.log).toHaveLength(0);
    expect(await f.eventsOf('PublishRequested')).toHaveLength(0);
  });

  it('the MCP tool schema still shows approveOnShip defaulting to false (Ship stays COMMENT), and offers the SPEC spelling', () => {
    const tool = resolveTools().find((t) => t.name === 'publish_review_to_github')!;
    const props = tool.inputJsonSchema.properties as Record<string, Record<string, unknown>>;
    expect(props.approveOnShip).toMatchObject({ type: 'boolean', default: false });
    expect(props.approve_on_ship).toMatchObject({ type: 'boolean' });
    expect(props.selection).toMatchObject({ default: 'consensus' });
    expect(tool.schema.safeParse({ repoId: 'web-app', prNumber: 7, approve_on_ship: true, idempotencyKey: newUuidV7() }).success).toBe(true);
  });
});

describe('MCP publish_review_to_github and the approve_on_ship spelling', () => {
  it('a tool default never overrides the field sent under its SPEC spelling', () => {
    const { COMMAND_TOOLS, payloadFor } = require('../../src/mcp/tools') as typeof import('../../src/mcp/tools');
    const binding = COMMAND_TOOLS.find((b) => b.tool === 'publish_review_to_github')!;
    expect(payloadFor(binding, { repoId: 'r', prNumber: 1, approve_on_ship: true })).toEqual({ repoId: 'r', prNumber: 1, approve_on_ship: true, selection: 'consensus' });
    expect(payloadFor(binding, { repoId: 'r', prNumber: 1 })).toEqual({ repoId: 'r', prNumber: 1, selection: 'consensus', approveOnShip: false });
  });
});
