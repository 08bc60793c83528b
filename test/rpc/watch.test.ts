import * as http from 'node:http';
import { WatchHub } from '../../src/rpc/watch';
import { BASE, command, HEAD_A, nodePayload, serverFixture, tokenFor, WsClient } from './support';

describe('watch* subscriptions over WebSocket and SSE', () => {
  let fx: Awaited<ReturnType<typeof serverFixture>>;
  let agent: string;
  let peer: string;
  let viewer: string;
  let pr = 100;
  const file = (target: object, title: string) => command(fx.server.url, agent, fx.workspaceId, 'addReviewNode', { ...target, node: nodePayload(title) });
  const newReview = async () => {
    const target = { repoId: 'watch-repo', prNumber: pr++ };
    const r = await command(fx.server.url, agent, fx.workspaceId, 'requestReview', { ...target, baseSha: BASE, headSha: HEAD_A });
    expect(r.error).toBeUndefined();
    return target;
  };

  beforeAll(async () => {
    fx = await serverFixture();
    agent = await tokenFor(fx.server.url, fx.ownerToken, fx.workspaceId, 'agent:watch-author', 'member');
    peer = await tokenFor(fx.server.url, fx.ownerToken, fx.workspaceId, 'agent:watch-peer', 'member');
    viewer = await tokenFor(fx.server.url, fx.ownerToken, fx.workspaceId, 'user:watch-viewer', 'viewer');
  });
  afterAll(async () => {
    await fx.close();
  });

  it('sends a snapshot with its position, then one ordered update per change, each with the position of its event', async () => {
    const target = await newReview();
    const ws = await WsClient.open(fx.server.url, viewer);
    const sub = await ws.call('watchNodeStatus', { workspace_id: fx.workspaceId, ...target });
    expect(sub.error).toBeUndefined();
    expect(sub.result.snapshot.nodes).toEqual([]);
    const positions: number[] = [];
    for (const t of ['one', 'two', 'three']) positions.push((await file(target, t)).result.lastPosition);
    await ws.until(() => ws.updates(sub.result.subscription).length === 3);
    const updates = ws.updates(sub.result.subscription);
    expect(updates.map((u) => u.position)).toEqual(positions);
    expect(updates.map((u) => u.value.nodes.map((n: any) => n.title))).toEqual([['one'], ['one', 'two'], ['one', 'two', 'three']]);
    expect(Math.min(...positions)).toBeGreaterThan(sub.result.position);
    await ws.close();
  });

  it('resumes after a disconnect with since: exactly the missed updates, nothing lost, nothing repeated', async () => {
    const target = await newReview();
    const steady = await WsClient.open(fx.server.url, viewer);
    const steadySub = (await steady.call('watchNodeStatus', { workspace_id: fx.workspaceId, ...target })).result.subscription;
    const flaky = await WsClient.open(fx.server.url, viewer);
    const flakySub = (await flaky.call('watchNodeStatus', { workspace_id: fx.workspaceId, ...target })).result.subscription;

    const first = await file(target, 'before disconnect');
    await flaky.until(() => flaky.updates(flakySub).length === 1);
    const seen = flaky.updates(flakySub);
    await flaky.close();

    // Missed while disconnected: two filings and a confirmation by a peer.
    const second = await file(target, 'missed one');
    await file(target, 'missed two');
    await command(fx.server.url, peer, fx.workspaceId, 'confirmNode', { ...target, nodeId: first.result.result.nodeId });
    void second;

    const back = await WsClient.open(fx.server.url, viewer);
    const resumed = await back.call('watchNodeStatus', { workspace_id: fx.workspaceId, ...target, since: seen[seen.length - 1].position });
    expect(resumed.result).toEqual(expect.objectContaining({ resumed: true, position: seen[seen.length - 1].position }));
    expect(resumed.result.snapshot).toBeUndefined();
    await back.until(() => back.updates(resumed.result.subscription).length === 3);
    await file(target, 'live after resume');
    await back.until(() => back.updates(resumed.result.subscription).length === 4);
    await steady.until(() => steady.updates(steadySub).length === 5);

    const strip = (u: any) => ({ position: u.position, value: u.value });
    expect([...seen, ...back.updates(resumed.result.subscription)].map(strip)).toEqual(steady.updates(steadySub).map(strip));
    await steady.close();
    await back.close();
  });

  it('refuses a since ahead of the log', async () => {
    const target = await newReview();
    const ws = await WsClient.open(fx.server.url, viewer);
    const r = await ws.call('watchVerdict', { workspace_id: fx.workspaceId, ...target, since: 10_000_000 });
    expect(r.error!.data!.code).toBe('invalid_since');
    await ws.close();
  });

  it('releases the store subscription on unwatch and on connection close', async () => {
    const hub = fx.server.app.get(WatchHub);
    const target = await newReview();
    const a = await WsClient.open(fx.server.url, viewer);
    const subA = (await a.call('watchVerdict', { workspace_id: fx.workspaceId, ...target })).result.subscription;
    const b = await WsClient.open(fx.server.url, viewer);
    await b.call('watchVerdict', { workspace_id: fx.workspaceId, ...target });
    expect(hub.feedCount()).toBe(1);
    expect((await a.call('unwatch', { subscription: subA })).result).toBe(true);
    expect(hub.feedCount()).toBe(1);
    await b.close();
    await new Promise((r) => setTimeout(r, 100));
    expect(hub.feedCount()).toBe(0);
    await file(target, 'nobody listens');
    await new Promise((r) => setTimeout(r, 100));
    expect(a.updates(subA)).toEqual([]);
    await a.close();
  });

  it('refuses watch over plain HTTP and points to the streaming transports', async () => {
    const target = await newReview();
    const r = await command(fx.server.url, viewer, fx.workspaceId, 'watchVerdict', target);
    expect(r.error!.data!.code).toBe('transport_unsupported');
  });

  it('streams the same watch as Server-Sent Events, resumable with Last-Event-ID', async () => {
    const target = await newReview();
    const events: Array<{ id: string; event: string; data: any }> = [];
    const req = http.get(`${fx.server.url}/workspaces/${fx.workspaceId}/watch/verdict?repoId=${target.repoId}&prNumber=${target.prNumber}`, { headers: { authorization: `Bearer ${viewer}` } });
    const res = await new Promise<http.IncomingMessage>((resolve) => req.once('response', resolve));
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/text\/event-stream/);
    let buf = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      buf += chunk;
      let i;
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        if (block.startsWith(':')) continue;
        const f = Object.fromEntries(block.split('\n').map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 2)]));
        events.push({ id: f.id, event: f.event, data: JSON.parse(f.data) });
      }
    });
    const waitFor = async (n: number) => {
      for (let t = 0; events.length < n && t < 200; t++) await new Promise((r) => setTimeout(r, 25));
    };
    await waitFor(1);
    expect(events[0].event).toBe('snapshot');
    expect(events[0].data.value.exists).toBe(true);
    const p0 = await command(fx.server.url, agent, fx.workspaceId, 'addReviewNode', { ...target, node: nodePayload('blocker', { priority: 'P0', confidence: 0.95 }) });
    // Filing emits two events (status → in_progress, then the node): each change is an update.
    for (let t = 0; !events.some((e) => e.id === String(p0.result.lastPosition)) && t < 200; t++) await new Promise((r) => setTimeout(r, 25));
    req.destroy();
    const last = events[events.length - 1];
    expect(last).toEqual({ id: String(p0.result.lastPosition), event: 'update', data: { position: p0.result.lastPosition, value: expect.objectContaining({ verdict: 'Block' }) } });
    expect(events.slice(1).map((e) => e.event)).toEqual(events.slice(1).map(() => 'update'));

    const missed = await command(fx.server.url, agent, fx.workspaceId, 'resolveNode', { ...target, nodeId: p0.result.result.nodeId, reason: 'fixed in the next commit' });
    expect(missed.error).toBeUndefined();
    const again = await fetch(`${fx.server.url}/workspaces/${fx.workspaceId}/watch/watchVerdict?repoId=${target.repoId}&prNumber=${target.prNumber}`, { headers: { authorization: `Bearer ${viewer}`, 'last-event-id': last.id } });
    const reader = again.body!.getReader();
    let text = '';
    while (!/event: update/.test(text)) text += new TextDecoder().decode((await reader.read()).value);
    expect(text).toContain('event: resumed');
    expect(text).toContain(`id: ${missed.result.lastPosition}\nevent: update`);
    await reader.cancel();
  });

  /** Reads SSE frames until `done` holds over the updates (jest's timeout bounds it). */
  async function sseUpdates(path: string, headers: Record<string, string>, done: (updates: Array<{ position: number; value: unknown }>) => boolean) {
    const res = await fetch(`${fx.server.url}${path}`, { headers: { authorization: `Bearer ${viewer}`, ...headers } });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const updates: Array<{ position: number; value: unknown; coalesced?: boolean }> = [];
    let buf = '';
    while (!done(updates)) {
      buf += new TextDecoder().decode((await reader.read()).value);
      let i;
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        if (!block.includes('event: update')) continue;
        updates.push(JSON.parse(block.split('data: ')[1]));
      }
    }
    await reader.cancel();
    return updates;
  }

  for (const [query, input] of [
    ['NodeStatus', (target: object) => target],
    // Answered from its read model: the missed changes come one by one here too (issue 34).
    ['Audit', () => ({ limit: 1 })],
  ] as const) {
    it(`watch${query}: a resume over SSE (Last-Event-ID) and over WebSocket (since) give the same updates, each missed change as the live subscriber got it`, async () => {
      const target = await newReview();
      const nodeIds = [];
      for (const t of ['r1', 'r2', 'r3']) nodeIds.push((await file(target, t)).result.result.nodeId as string);
      const live = await WsClient.open(fx.server.url, viewer);
      const sub = await live.call(`watch${query}`, { workspace_id: fx.workspaceId, ...input(target) });
      expect(sub.error).toBeUndefined();
      const since = sub.result.position as number;
      // Acts that change both views (the audit lists confirmations, not filings).
      let lastPosition = 0;
      for (const nodeId of nodeIds) {
        const confirmed = await command(fx.server.url, peer, fx.workspaceId, 'confirmNode', { ...target, nodeId });
        expect(confirmed.error).toBeUndefined();
        lastPosition = confirmed.result.lastPosition;
      }
      await live.until(() => live.updates(sub.result.subscription).some((u) => u.position === lastPosition), 30_000);
      const strip = (u: { position: number; value: unknown; coalesced?: boolean }) => ({ position: u.position, value: u.value, coalesced: u.coalesced ?? false });
      const expected = live.updates(sub.result.subscription).map(strip);
      expect(expected.length).toBeGreaterThanOrEqual(3);

      const ws = await WsClient.open(fx.server.url, viewer);
      const resumed = await ws.call(`watch${query}`, { workspace_id: fx.workspaceId, ...input(target), since });
      expect(resumed.error).toBeUndefined();
      await ws.until(() => ws.updates(resumed.result.subscription).some((u) => u.position === lastPosition), 30_000);
      expect(ws.updates(resumed.result.subscription).map(strip)).toEqual(expected);

      const params = new URLSearchParams({ input: JSON.stringify(input(target)) });
      const overSse = await sseUpdates(`/workspaces/${fx.workspaceId}/watch/watch${query}?${params}`, { 'last-event-id': String(since) }, (us) => us.some((u) => u.position === lastPosition));
      expect(overSse.map(strip)).toEqual(expected);
      await live.close();
      await ws.close();
    });
  }

  it('parses SSE query parameters by the query schema: a numeric-looking repoId stays a string', async () => {
    const target = { repoId: '2024', prNumber: pr++ };
    expect((await command(fx.server.url, agent, fx.workspaceId, 'requestReview', { ...target, baseSha: BASE, headSha: HEAD_A })).error).toBeUndefined();
    const res = await fetch(`${fx.server.url}/workspaces/${fx.workspaceId}/watch/reviewStatus?repoId=2024&prNumber=${target.prNumber}`, { headers: { authorization: `Bearer ${viewer}` } });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let text = '';
    while (!text.includes('\n\n')) text += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
    expect(text).toMatch(/^id: \d+\nevent: snapshot\ndata: /);
    expect(JSON.parse(text.split('data: ')[1].split('\n')[0]).value).toEqual(expect.objectContaining({ exists: true }));
  });

  it('refuses SSE without a token and for an unknown workspace', async () => {
    expect((await fetch(`${fx.server.url}/workspaces/${fx.workspaceId}/watch/verdict?repoId=r&prNumber=1`)).status).toBe(401);
    expect((await fetch(`${fx.server.url}/workspaces/nope/watch/verdict?repoId=r&prNumber=1`, { headers: { authorization: `Bearer ${viewer}` } })).status).toBe(404);
  });
});
