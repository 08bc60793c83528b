import * as http from 'node:http';
import { BASE, command, HEAD_A, nodePayload, serverFixture, tokenFor, WsClient } from '../rpc/support';

/**
 * A stream is authenticated once, so revocation must reach it (SPEC §16, issue 19): a revoked token's, a
 * removed member's and a demoted member's open WebSocket subscriptions and SSE streams end within 1 s
 * of the revocation, with a close reason — over real sockets, against a real server.
 */
describe('revocation ends open subscriptions and streams', () => {
  let fx: Awaited<ReturnType<typeof serverFixture>>;
  const target = { repoId: 'revoke-repo', prNumber: 4 };
  const WITHIN_MS = 1000;

  beforeAll(async () => {
    fx = await serverFixture();
    expect((await command(fx.server.url, fx.ownerToken, fx.workspaceId, 'requestReview', { ...target, baseSha: BASE, headSha: HEAD_A })).error).toBeUndefined();
  });
  afterAll(async () => {
    await fx.close();
  });

  const owner = (method: string, payload: Record<string, unknown>) => command(fx.server.url, fx.ownerToken, fx.workspaceId, method, payload);
  const closed = (c: WsClient) => new Promise<{ code: number; reason: string; at: number }>((resolve) => c.ws.once('close', (code, reason) => resolve({ code, reason: reason.toString(), at: Date.now() })));

  /** An SSE stream read as it arrives: the events so far and when it ended. */
  function sse(pathAndQuery: string, token: string) {
    const events: Array<{ event: string; data: string }> = [];
    let buffer = '';
    let endedAt: number | null = null;
    const opened = new Promise<void>((resolve, reject) => {
      const req = http.get(`${fx.server.url}${pathAndQuery}`, { headers: { authorization: `Bearer ${token}` } }, (res) => {
        if (res.statusCode !== 200) reject(new Error(`status ${res.statusCode}`));
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buffer += chunk;
          for (let i = buffer.indexOf('\n\n'); i >= 0; i = buffer.indexOf('\n\n')) {
            const block = buffer.slice(0, i);
            buffer = buffer.slice(i + 2);
            const event = /^event: (.*)$/m.exec(block)?.[1];
            if (event) events.push({ event, data: /^data: (.*)$/m.exec(block)?.[1] ?? '' });
            if (event === 'snapshot') resolve();
          }
        });
        res.on('end', () => (endedAt = Date.now()));
        res.on('close', () => (endedAt ??= Date.now()));
      });
      req.on('error', reject);
    });
    return { events, opened, endedAt: () => endedAt };
  }

  async function until(predicate: () => boolean, ms = 5000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!predicate()) {
      if (Date.now() > deadline) throw new Error('timed out');
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  it('revokeToken: the WebSocket gets watch.error token_revoked for each subscription and closes with the reason, within 1 s; later events never reach it', async () => {
    const token = await tokenFor(fx.server.url, fx.ownerToken, fx.workspaceId, 'user:revoked-watcher', 'member');
    const ws = await WsClient.open(fx.server.url, token);
    const nodes = await ws.call('watchNodeStatus', { workspace_id: fx.workspaceId, ...target });
    const progress = await ws.call('watchProgress', { workspace_id: fx.workspaceId });
    expect([nodes.error, progress.error]).toEqual([undefined, undefined]);
    const ended = closed(ws);
    const revoked = await owner('revokeToken', { tokenId: token.split('_')[2] });
    const revokedAt = Date.now();
    expect(revoked.error).toBeUndefined();
    const { code, reason, at } = await ended;
    expect(at - revokedAt).toBeLessThan(WITHIN_MS);
    expect([code, reason]).toEqual([4001, expect.stringMatching(/^token_revoked: /)]);
    const errors = ws.notifications.filter((n) => n.method === 'watch.error').map((n) => n.params.error.data);
    expect(errors).toEqual(expect.arrayContaining([{ code: 'token_revoked', details: expect.objectContaining({ subscription: nodes.result.subscription }) }, { code: 'token_revoked', details: expect.objectContaining({ subscription: progress.result.subscription }) }]));
    const before = ws.updates(nodes.result.subscription).length;
    await owner('addReviewNode', { ...target, node: nodePayload('after the revocation') });
    await new Promise((r) => setTimeout(r, 300));
    expect(ws.updates(nodes.result.subscription).length).toBe(before);
  });

  it('removeMember: an open SSE stream ends with event: error member_removed within 1 s', async () => {
    const token = await tokenFor(fx.server.url, fx.ownerToken, fx.workspaceId, 'user:removed-reader', 'viewer');
    const stream = sse(`/workspaces/${fx.workspaceId}/watch/verdict?repoId=${target.repoId}&prNumber=${target.prNumber}`, token);
    await stream.opened;
    const removed = await owner('removeMember', { principal: 'user:removed-reader' });
    const removedAt = Date.now();
    expect(removed.error).toBeUndefined();
    await until(() => stream.endedAt() !== null);
    expect(stream.endedAt()! - removedAt).toBeLessThan(WITHIN_MS);
    const last = stream.events[stream.events.length - 1];
    expect(last.event).toBe('error');
    expect(JSON.parse(last.data).data.code).toBe('member_removed');
  });

  it('removeMember: the progress SSE stream ends too', async () => {
    const token = await tokenFor(fx.server.url, fx.ownerToken, fx.workspaceId, 'user:removed-progress', 'viewer');
    const stream = sse(`/workspaces/${fx.workspaceId}/watch/progress`, token);
    await stream.opened;
    await owner('removeMember', { principal: 'user:removed-progress' });
    const removedAt = Date.now();
    await until(() => stream.endedAt() !== null);
    expect(stream.endedAt()! - removedAt).toBeLessThan(WITHIN_MS);
    expect(JSON.parse(stream.events[stream.events.length - 1].data).data.code).toBe('member_removed');
  });

  it('a demotion below what a subscription needs ends that subscription (role_changed); the connection stays for what the role still allows', async () => {
    const token = await tokenFor(fx.server.url, fx.ownerToken, fx.workspaceId, 'user:demoted-watcher', 'member');
    const ws = await WsClient.open(fx.server.url, token);
    const sub = await ws.call('watchNodeStatus', { workspace_id: fx.workspaceId, ...target });
    expect(sub.error).toBeUndefined();
    await owner('changeMemberRole', { principal: 'user:demoted-watcher', role: 'guest' });
    const demotedAt = Date.now();
    await ws.until(() => ws.notifications.some((n) => n.method === 'watch.error'), WITHIN_MS);
    expect(Date.now() - demotedAt).toBeLessThan(WITHIN_MS);
    const err = ws.notifications.find((n) => n.method === 'watch.error').params.error;
    expect(err.data).toEqual({ code: 'role_changed', details: expect.objectContaining({ subscription: sub.result.subscription, role: 'guest' }) });
    expect(err.message).toContain('now guest');
    expect(ws.ws.readyState).toBe(ws.ws.OPEN);
    // Not resubscribable with the demoted role.
    expect((await ws.call('watchNodeStatus', { workspace_id: fx.workspaceId, ...target })).error?.data?.code).toBe('forbidden');
    await ws.close();
  });

  it('a subscription whose token still grants it keeps streaming', async () => {
    const token = await tokenFor(fx.server.url, fx.ownerToken, fx.workspaceId, 'user:steady-watcher', 'viewer');
    const ws = await WsClient.open(fx.server.url, token);
    const sub = await ws.call('watchNodeStatus', { workspace_id: fx.workspaceId, ...target });
    // Another member's revocation moves the workspace stream: this subscription is re-checked and kept.
    const other = await tokenFor(fx.server.url, fx.ownerToken, fx.workspaceId, 'user:someone-else', 'viewer');
    await owner('revokeToken', { tokenId: other.split('_')[2] });
    await new Promise((r) => setTimeout(r, 500));
    await owner('addReviewNode', { ...target, node: nodePayload('still streamed') });
    await ws.until(() => ws.updates(sub.result.subscription).some((u) => JSON.stringify(u.value).includes('still streamed')));
    expect(ws.notifications.filter((n) => n.method === 'watch.error')).toEqual([]);
    await ws.close();
  });
});
