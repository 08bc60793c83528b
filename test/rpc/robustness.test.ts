import { newUuidV7 } from '../../src/events/ids';
import { call, postRpc, serverFixture, WsClient } from './support';
import { mulberry32 } from '../support/prng';

const prng = mulberry32;

function randomValue(rand: () => number, depth = 0): unknown {
  const pick = Math.floor(rand() * (depth > 3 ? 5 : 8));
  switch (pick) {
    case 0: return null;
    case 1: return rand() < 0.5;
    case 2: return Math.floor(rand() * 2 ** 40) * (rand() < 0.5 ? -1 : 1);
    case 3: return 'x'.repeat(Math.floor(rand() * 40)) + String.fromCharCode(Math.floor(rand() * 0xffff));
    case 4: return ['workspace_id', 'default', 'watchVerdict', '../..', '\u0000', 'rl_default_0000000000000000_' + 'a'.repeat(43)][Math.floor(rand() * 6)];
    case 5: return Array.from({ length: Math.floor(rand() * 4) }, () => randomValue(rand, depth + 1));
    default: {
      const o: Record<string, unknown> = {};
      for (const k of ['jsonrpc', 'id', 'method', 'params', 'workspace_id', 'idempotencyKey', 'since', 'repoId', 'prNumber', 'node']) if (rand() < 0.4) o[k] = randomValue(rand, depth + 1);
      return o;
    }
  }
}

describe('transport robustness', () => {
  let fx: Awaited<ReturnType<typeof serverFixture>>;
  beforeAll(async () => {
    fx = await serverFixture();
  });
  afterAll(async () => {
    await fx.close();
  });

  it('answers every fuzzed frame with a well-formed JSON-RPC reply (or nothing, for notifications) and stays usable', async () => {
    const rand = prng(20261129);
    const ws = await WsClient.open(fx.server.url, fx.ownerToken);
    const methods = ['addReviewNode', 'watchVerdict', 'review_studio.verdict', 'unwatch', 'rpc.discover', 'issueToken', 'nope'];
    let sent = 0;
    for (let i = 0; i < 300; i++) {
      const r = rand();
      let frame: string;
      if (r < 0.2) frame = JSON.stringify(randomValue(rand)).slice(0, Math.floor(rand() * 200));
      else if (r < 0.4) frame = JSON.stringify(Array.from({ length: 1 + Math.floor(rand() * 3) }, () => randomValue(rand)));
      else frame = JSON.stringify({ jsonrpc: '2.0', id: `fuzz-${i}`, method: methods[Math.floor(rand() * methods.length)], params: randomValue(rand) });
      ws.send(frame);
      sent++;
    }
    // A sentinel proves the connection still answers after the corpus, in order.
    const ok = await ws.call('review_studio.verdict', { workspace_id: fx.workspaceId, repoId: 'r', prNumber: 1 });
    expect(ok.result.value).toEqual({ exists: false });
    for (const m of ws.raw) {
      for (const reply of Array.isArray(m) ? m : [m]) {
        if (reply.method === 'watch.update' || reply.method === 'watch.error') continue;
        expect(reply.jsonrpc).toBe('2.0');
        expect('result' in reply !== 'error' in reply).toBe(true);
        if (reply.error) {
          expect(Number.isInteger(reply.error.code)).toBe(true);
          expect(typeof reply.error.data.code).toBe('string');
          expect(reply.error.data.code).not.toBe('internal');
        }
      }
    }
    expect(sent).toBe(300);
    await ws.close();
  });

  it('ten clients sending the same idempotency key at once record exactly one event and get identical answers', async () => {
    const params = { workspace_id: fx.workspaceId, idempotencyKey: newUuidV7(), principal: 'user:raced', role: 'viewer' };
    const replies = await Promise.all(Array.from({ length: 10 }, () => postRpc(fx.server.url, fx.ownerToken, { jsonrpc: '2.0', id: 1, method: 'addMember', params })));
    const bodies = new Set(replies.map((r) => JSON.stringify(r.body)));
    expect(bodies.size).toBe(1);
    const ws = await fx.server.ledger.workspace(fx.workspaceId);
    let count = 0;
    for await (const e of ws.store.readAll()) if (e.type === 'MemberAdded' && (e.data as { principal: string }).principal === 'user:raced') count++;
    expect(count).toBe(1);
    expect((await call(fx.server.url, fx.ownerToken, 'addMember', { ...params })).result).toEqual(replies[0].body.result);
  });
});
