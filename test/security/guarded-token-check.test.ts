import { newUuidV7 } from '../../src/events/ids';
import type { AppendOptions, EventStore } from '../../src/events/store/port';
import { collect } from '../../src/events/store/port';
import { authenticate, parseToken } from '../../src/security/tokens';
import { BASE, call, command, HEAD_A, nodePayload, serverFixture, tokenFor } from '../rpc/support';

/**
 * Issue 35: a command's token check may take the workspace state from the store's freshness instead of
 * reading it (PostgreSQL: no round trip per command), because the append is guarded on the workspace
 * stream revision the check saw. Whatever moves the workspace stream between the check and the append —
 * a revocation on this or another server — fails the append with nothing stored; the server then checks
 * the token on a read and runs the command again, so a revoked token is refused and any other change
 * costs a retry only. The race is placed exactly: the store's append runs the change first, once.
 */
describe('the token check a command runs on is still current when the command takes effect', () => {
  let fx: Awaited<ReturnType<typeof serverFixture>>;
  let pr = 1;
  const target = () => ({ repoId: 'guard-repo', prNumber: pr });

  beforeEach(async () => {
    fx = await serverFixture();
    pr++;
    const r = await command(fx.server.url, fx.ownerToken, fx.workspaceId, 'requestReview', { ...target(), baseSha: BASE, headSha: HEAD_A });
    expect(r.error).toBeUndefined();
  });
  afterEach(async () => {
    await fx.close();
  });

  const store = async (): Promise<EventStore> => (await fx.server.ledger.workspace(fx.workspaceId)).store;
  /** Runs `change` inside the next guarded append, before it is written (after the token check). */
  const beforeNextGuardedAppend = async (change: () => Promise<unknown>) => {
    const s = await store();
    const original = s.append.bind(s);
    const seen: string[] = [];
    let armed = true;
    s.append = async (streamId, expected, events, options?: AppendOptions) => {
      if (armed && options?.guard) {
        armed = false;
        seen.push(`${streamId} guarded on ${options.guard.streamId}@${options.guard.revision}`);
        await change();
      }
      return original(streamId, expected, events, options);
    };
    return { seen, restore: () => (s.append = original) };
  };
  const filedTitles = async () =>
    (await collect((await store()).readAll())).filter((e) => e.type === 'ReviewNodeFiled').map((e) => (e.data as { node: { title: string } }).node.title);

  it('a token revoked between its check and the append: refused unauthorized, nothing stored', async () => {
    const agent = await tokenFor(fx.server.url, fx.ownerToken, fx.workspaceId, 'agent:late', 'member');
    expect((await command(fx.server.url, agent, fx.workspaceId, 'addReviewNode', { ...target(), node: nodePayload('before') })).error).toBeUndefined();
    const race = await beforeNextGuardedAppend(() => fx.server.ledger.run('revokeToken', fx.workspaceId, { idempotencyKey: newUuidV7(), principal: 'user:owner' as never, role: 'owner' }, { tokenId: parseToken(agent)!.tokenId }));
    const r = await command(fx.server.url, agent, fx.workspaceId, 'addReviewNode', { ...target(), node: nodePayload('after revocation') });
    race.restore();
    expect(race.seen).toEqual([expect.stringMatching(/^pr-.* guarded on workspace@\d+$/)]);
    expect(r.error?.data?.code).toBe('unauthorized');
    expect(r.error?.message).toBe('Authorization: unknown or revoked token');
    expect(await filedTitles()).toEqual(['before']);
  });

  it('the workspace moved for another reason (a token issued to someone else): the command lands once, and a replay of its key answers the same bytes', async () => {
    const agent = await tokenFor(fx.server.url, fx.ownerToken, fx.workspaceId, 'agent:busy', 'member');
    const race = await beforeNextGuardedAppend(() => tokenFor(fx.server.url, fx.ownerToken, fx.workspaceId, 'agent:other', 'member'));
    const key = newUuidV7();
    const params = { workspace_id: fx.workspaceId, idempotencyKey: key, ...target(), node: nodePayload('through a move') };
    const first = await call(fx.server.url, agent, 'addReviewNode', params);
    race.restore();
    expect(race.seen).toHaveLength(1);
    expect(first.error).toBeUndefined();
    const replay = await call(fx.server.url, agent, 'addReviewNode', params);
    expect(JSON.stringify(replay.result)).toBe(JSON.stringify(first.result));
    expect(await filedTitles()).toEqual(['through a move']);
  });

  it('a client cannot hand the kernel a check of its own: accessCheckedAt in the params is an unknown field, refused, nothing stored', async () => {
    const agent = await tokenFor(fx.server.url, fx.ownerToken, fx.workspaceId, 'agent:forger', 'member');
    const r = await command(fx.server.url, agent, fx.workspaceId, 'addReviewNode', { ...target(), node: nodePayload('forged check'), accessCheckedAt: 0 });
    expect(r.error?.data?.code).toBe('unknown_field');
    expect(r.error?.message).toMatch(/accessCheckedAt/);
    expect(await filedTitles()).toEqual([]);
  });

  it('in the kernel: a check the workspace moved past fails guard_moved before anything is stored — an append, and a no-op whose key would be spent', async () => {
    const agent = await tokenFor(fx.server.url, fx.ownerToken, fx.workspaceId, 'agent:stale', 'member');
    const peer = await tokenFor(fx.server.url, fx.ownerToken, fx.workspaceId, 'agent:peer', 'member');
    const filed = await command(fx.server.url, peer, fx.workspaceId, 'addReviewNode', { ...target(), node: nodePayload('to confirm') });
    const nodeId = filed.result.result.nodeId as string;
    expect((await command(fx.server.url, agent, fx.workspaceId, 'confirmNode', { ...target(), nodeId })).error).toBeUndefined();

    const caller = await authenticate(fx.server.ledger, fx.workspaceId, agent, undefined, { guarded: true });
    expect(caller.accessCheckedAt).toEqual(expect.any(Number));
    await tokenFor(fx.server.url, fx.ownerToken, fx.workspaceId, 'agent:third', 'member'); // the workspace moves
    const envelope = (idempotencyKey: string) => ({ idempotencyKey, principal: caller.principal, role: caller.role, tokenId: caller.tokenId, accessCheckedAt: caller.accessCheckedAt });
    const refusal = (p: Promise<unknown>) => p.then(() => null, (err: { code?: string; details?: unknown }) => ({ code: err.code, details: err.details }));
    const moved = { code: 'guard_moved', details: { streamId: 'workspace', guarded: caller.accessCheckedAt, actual: expect.any(Number) } };

    expect(await refusal(fx.server.ledger.run('addReviewNode', fx.workspaceId, envelope(newUuidV7()), { ...target(), node: nodePayload('stale check') }))).toEqual(moved);
    // confirmNode a second time by the same principal decides nothing: its key would be spent.
    const noopKey = newUuidV7();
    expect(await refusal(fx.server.ledger.run('confirmNode', fx.workspaceId, envelope(noopKey), { ...target(), nodeId }))).toEqual(moved);
    expect(await (await store()).findNoopKey!(noopKey)).toBeNull();
    expect(await filedTitles()).toEqual(['to confirm']);

    // On a current check both run (the no-op answers with no events).
    const current = await authenticate(fx.server.ledger, fx.workspaceId, agent, undefined, { guarded: true });
    expect(current.accessCheckedAt).toBeGreaterThan(caller.accessCheckedAt!);
    const again = { ...envelope(noopKey), accessCheckedAt: current.accessCheckedAt };
    expect((await fx.server.ledger.run('confirmNode', fx.workspaceId, again, { ...target(), nodeId })).response.eventIds).toEqual([]);
    expect(await (await store()).findNoopKey!(noopKey)).toEqual(expect.objectContaining({ command: 'confirmNode', principal: 'agent:stale' }));
  });
});
