import { newUuidV7 } from '../../src/events/ids';
import { ALICE, BOB, HEAD1, HEAD2, reviewFixture, WS } from './support';

type Fixture = Awaited<ReturnType<typeof reviewFixture>>;
let f: Fixture;
beforeEach(async () => {
  f = await reviewFixture();
  await f.request();
  await f.run('observeHead', ALICE, { ...f.pr(), headSha: HEAD2, source: 'webhook' });
});
afterEach(async () => f.cleanup());

/**
 * SPEC §3 for commands that change nothing: no event is written, yet the key is spent. The same key
 * with the same payload answers the original bytes; with another payload (or by another principal) it
 * is refused, even after a restart.
 */
describe('idempotency keys of commands that change nothing', () => {
  test('given the head already observed, when observeHead repeats it under a key, then the same key and payload replay the bytes, another source is refused, and nothing is written', async () => {
    const key = newUuidV7();
    const before = await f.count();
    const first = await f.run('observeHead', ALICE, { ...f.pr(), headSha: HEAD2, source: 'webhook' }, key);
    expect(first.response.result).toEqual({ recorded: false });
    const again = await f.run('observeHead', ALICE, { ...f.pr(), headSha: HEAD2, source: 'webhook' }, key);
    expect(again.json).toBe(first.json);
    expect(again.replayed).toBe(true);
    await expect(f.run('observeHead', ALICE, { ...f.pr(), headSha: HEAD2, source: 'poll' }, key)).rejects.toMatchObject({ code: 'idempotency_key_reused', message: expect.stringMatching(/different payload/) });
    // A payload that would write is refused too: the key answered already.
    await expect(f.run('observeHead', ALICE, { ...f.pr(), headSha: HEAD1, source: 'webhook' }, key)).rejects.toMatchObject({ code: 'idempotency_key_reused' });
    await expect(f.run('requestReview', ALICE, { ...f.pr(), baseSha: 'b'.repeat(40), headSha: HEAD1 }, key)).rejects.toMatchObject({ code: 'idempotency_key_reused', message: expect.stringMatching(/different command \(observeHead\)/) });
    await expect(f.run('observeHead', BOB, { ...f.pr(), headSha: HEAD2, source: 'webhook' }, key)).rejects.toMatchObject({ code: 'idempotency_key_reused', message: expect.stringMatching(/another principal/) });
    expect(await f.count()).toBe(before);
  });

  test('holds across a restart', async () => {
    const key = newUuidV7();
    const envelope = { principal: ALICE.principal as any, role: ALICE.role, idempotencyKey: key };
    const first = await f.ledger.run('observeHead', WS, envelope, { ...f.pr(), headSha: HEAD2 });
    const reopened = await f.reopen();
    try {
      const again = await reopened.run('observeHead', WS, envelope, { ...f.pr(), headSha: HEAD2 });
      expect(again.json).toBe(first.json);
      await expect(reopened.run('observeHead', WS, envelope, { ...f.pr(), headSha: HEAD2, source: 'poll' })).rejects.toMatchObject({ code: 'idempotency_key_reused' });
    } finally {
      await reopened.close();
    }
  });

  test('ten concurrent no-op calls with one key and two payloads: one payload wins, the other is refused', async () => {
    const key = newUuidV7();
    const outs = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => f.run('observeHead', ALICE, { ...f.pr(), headSha: HEAD2, source: i % 2 ? 'a' : 'b' }, key)));
    const ok = outs.filter((o): o is PromiseFulfilledResult<any> => o.status === 'fulfilled');
    const refused = outs.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
    expect(new Set(ok.map((o) => o.value.json)).size).toBe(1);
    expect(ok.length).toBe(5);
    expect(refused.every((r) => r.reason.code === 'idempotency_key_reused')).toBe(true);
  });
});
