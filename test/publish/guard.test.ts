import { newUuidV7 } from '../../src/events/ids';
import { loadPublishState } from '../../src/publish/run';
import { peerConfirmed, selectFindings } from '../../src/publish/selection';
import { ALICE, BOB, CAROL, OWNER, publishFixture } from './support';

type Fixture = Awaited<ReturnType<typeof publishFixture>>;
const DAVE = { principal: 'user:dave', role: 'member' as const };

describe('publishing is a guarded action', () => {
  let f: Fixture;
  afterEach(async () => f?.close());

  it('an agent\'s publish records a request and posts nothing; a human\'s approval publishes it once', async () => {
    f = await publishFixture();
    const confirmed = await f.file(ALICE, { title: 'five is a string now', anchor: { path: 'src/app.ts', startLine: 5, endLine: 5 } });
    await f.confirm(BOB, confirmed.nodeId);
    await f.file(ALICE, { title: 'unconfirmed nit', priority: 'P3', anchor: { path: 'src/app.ts', startLine: 29, endLine: 29 } });
    await f.finalize();

    const asked = await f.run('requestPublish', BOB, { ...f.target });
    expect(asked.response.result).toEqual({ status: 'awaiting_approval', requestId: 'p1', selection: 'consensus', approveOnShip: false });
    expect(f.github.log).toHaveLength(0);
    const [requested] = await f.eventsOf('PublishRequested');
    expect(requested.data).toMatchObject({ requestId: 'p1', needsApproval: true, by: BOB.principal });

    // Agents cannot approve, and neither can the requester.
    await expect(f.run('approvePublish', ALICE, { ...f.target, requestId: 'p1' })).rejects.toMatchObject({ code: 'forbidden' });
    expect(f.github.log).toHaveLength(0);

    const approved = await f.run('approvePublish', CAROL, { ...f.target, requestId: 'p1' });
    expect(approved.response.result).toMatchObject({ status: 'published', requestId: 'p1', event: 'COMMENT', inline: 1, folded: 0 });
    const [post] = f.github.reviewPosts();
    expect(post.body.comments.map((c: any) => c.line)).toEqual([5]);
    const [approval] = await f.eventsOf('PublishApproved');
    expect(approval.data).toMatchObject({ requestId: 'p1', by: CAROL.principal });
    const [published] = await f.eventsOf('ReviewPublished');
    expect(published.data).toMatchObject({ requestId: 'p1', publishedBy: CAROL.principal, selection: 'consensus' });

    await expect(f.run('approvePublish', DAVE, { ...f.target, requestId: 'p1' })).rejects.toMatchObject({ code: 'publish_request_settled' });
    expect(f.github.reviewPosts()).toHaveLength(1);
    expect(f.github.pulls.get(7)!.reviews).toHaveLength(1);
  });

  it('the publish method called by an agent becomes a request too', async () => {
    f = await publishFixture();
    await f.finalize();
    const out = await f.publish(ALICE);
    expect(out.response.result).toMatchObject({ status: 'awaiting_approval', requestId: 'p1' });
    expect(f.github.log).toHaveLength(0);
  });

  it('with no human member able to approve, an agent\'s request is refused (fail closed) and nothing is recorded', async () => {
    f = await publishFixture({ workspaceCreator: { principal: 'agent:root', role: 'owner' } });
    await f.finalize();
    const before = (await f.events('acme')).length;
    await expect(f.run('requestPublish', ALICE, { ...f.target })).rejects.toMatchObject({ code: 'no_publish_approver' });
    await expect(f.publish(BOB)).rejects.toMatchObject({ code: 'no_publish_approver' });
    expect((await f.events('acme')).length).toBe(before);
    // A human added as a viewer cannot approve either; as a member they can.
    // The local operator provisions humans (an agent never provisions a human).
    await f.run('addMember', { principal: 'user:local-operator', role: 'owner' }, { principal: 'user:vera', role: 'viewer' });
    await expect(f.run('requestPublish', ALICE, { ...f.target })).rejects.toMatchObject({ code: 'no_publish_approver' });
    await f.run('addMember', { principal: 'user:local-operator', role: 'owner' }, { principal: 'user:mona', role: 'member' });
    await expect(f.run('requestPublish', ALICE, { ...f.target })).resolves.toBeDefined();
  });

  it('viewers cannot publish, and nothing publishes before the review is finalized', async () => {
    f = await publishFixture();
    await expect(f.publish({ principal: 'user:vic', role: 'viewer' })).rejects.toMatchObject({ code: 'forbidden' });
    await expect(f.publish(CAROL)).rejects.toMatchObject({ code: 'not_awaiting_approval' });
    expect(f.github.log).toHaveLength(0);
  });

  it('a request made on an earlier round cannot be approved on a later one', async () => {
    f = await publishFixture();
    await f.finalize();
    await f.run('requestPublish', ALICE, { ...f.target });
    f.repo.write('src/extra.ts', 'export const extra = 1;\n');
    const next = f.repo.commit('next');
    await f.run('requestReview', ALICE, { ...f.target, baseSha: f.base, headSha: next });
    await expect(f.run('approvePublish', CAROL, { ...f.target, requestId: 'p1' })).rejects.toMatchObject({ code: 'publish_request_stale' });
    expect(f.github.log).toHaveLength(0);
  });
});

describe('the publisher re-checks consensus itself (third independent place, SPEC §5)', () => {
  let f: Fixture;
  afterEach(async () => f?.close());

  it('a self-confirmation forged into the store is not published as consensus', async () => {
    f = await publishFixture();
    const peer = await f.file(ALICE, { title: 'five is a string now', anchor: { path: 'src/app.ts', startLine: 5, endLine: 5 } });
    await f.confirm(BOB, peer.nodeId);
    const selfish = await f.file(ALICE, { title: 'thirty is a string now', anchor: { path: 'src/app.ts', startLine: 29, endLine: 29 } });
    await expect(f.confirm(ALICE, selfish.nodeId)).rejects.toMatchObject({ code: 'self_confirmation_refused' });
    await f.finalize();
    // Bypass every command: a self-confirmation and a finalization that counts it as consensus.
    await f.forge('ReviewNodeConfirmed', { nodeId: selfish.nodeId, by: ALICE.principal, role: 'member' }, ALICE.principal);
    const fin = (await f.eventsOf('ReviewFinalized'))[0].data as any;
    await f.forge('ReviewFinalized', { ...fin, consensusNodeIds: [peer.nodeId, selfish.nodeId] }, ALICE.principal);

    const out = await f.publish(CAROL, { selection: 'consensus', approveOnShip: false });
    expect(out.response.result).toMatchObject({ status: 'published', inline: 1, folded: 0, event: 'COMMENT' });
    const [post] = f.github.reviewPosts();
    expect(post.body.comments).toHaveLength(1);
    expect(post.body.comments[0].body).toContain(peer.fingerprint);
    expect(JSON.stringify(post.body)).not.toContain(selfish.fingerprint);
  });

  it('even a node the fold wrongly marked consensus-ready is left out when no peer confirmed it', async () => {
    f = await publishFixture();
    const node = await f.file(ALICE, { title: 'five is a string now', anchor: { path: 'src/app.ts', startLine: 5, endLine: 5 } });
    const state = structuredClone(await loadPublishState(f.ws, f.target));
    const record = state.pr.nodes[node.nodeId];
    // Simulate a bug upstream: the status says consensus, the only confirmation is the author's.
    record.status = 'consensus-ready';
    record.confirmations.push({ by: ALICE.principal, role: 'member', at: 999 });
    expect(peerConfirmed(record)).toBe(false);
    expect(selectFindings(state.pr, 'consensus').findings).toEqual([]);
    expect(selectFindings(state.pr, 'all_open').findings.map((x) => x.nodeId)).toEqual([node.nodeId]);
    record.confirmations.push({ by: BOB.principal, role: 'member', at: 1000 });
    expect(selectFindings(state.pr, 'consensus').findings.map((x) => x.nodeId)).toEqual([node.nodeId]);
  });

  it('resolved and dismissed findings are skipped', async () => {
    f = await publishFixture();
    const keep = await f.file(ALICE, { title: 'keep me', anchor: { path: 'src/app.ts', startLine: 5, endLine: 5 } });
    const dismissed = await f.file(ALICE, { title: 'dismiss me', anchor: { path: 'src/app.ts', startLine: 6, endLine: 6 } });
    const resolved = await f.file(ALICE, { title: 'resolve me', anchor: { path: 'src/app.ts', startLine: 7, endLine: 7 } });
    await f.run('dismissNode', OWNER, { ...f.target, nodeId: dismissed.nodeId, reason: 'not a bug' });
    await f.run('resolveNode', OWNER, { ...f.target, nodeId: resolved.nodeId, reason: 'fixed' });
    await f.finalize();
    await f.publish(CAROL);
    const [post] = f.github.reviewPosts();
    expect(post.body.comments.map((c: any) => c.line)).toEqual([5]);
    expect(JSON.stringify(post.body)).not.toContain(dismissed.fingerprint);
    expect(JSON.stringify(post.body)).not.toContain(resolved.fingerprint);
    void keep;
    void newUuidV7;
  });
});
