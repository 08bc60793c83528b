import { DomainError } from '../../src/domain-error';
import { canonicalJson } from '../../src/events/canonical-json';
import { newUuidV7 } from '../../src/events/ids';
import { queryByName } from '../../src/readmodels/queries/queries';
import { canonicalJsonWithin } from '../../src/rpc/limits';
import { WatchHub, type WatchUpdate } from '../../src/rpc/watch';
import { ledgerFixture } from '../support/ledger-fixture';
import { BASE, HEAD_A, nodePayload } from './support';

describe('the response cap', () => {
  test('under the cap: the same bytes as canonicalJson; past it: response_too_large before any JSON text is built', () => {
    const value = { b: [1, 'two', { d: null, c: true }], a: 'é'.repeat(10) };
    expect(canonicalJsonWithin(value, 1000, 'x')).toBe(canonicalJson(value));
    const rows = Array.from({ length: 20_000 }, (_, i) => ({ position: i, detail: 'x'.repeat(100) }));
    const stringify = jest.spyOn(JSON, 'stringify');
    try {
      let err: unknown;
      try {
        canonicalJsonWithin({ rows }, 1024 * 1024, 'review_studio.audit');
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(DomainError);
      expect(err).toMatchObject({ code: 'response_too_large', message: expect.stringMatching(/^review_studio\.audit: the response would exceed the limit of 1048576 bytes/) });
      expect(stringify).not.toHaveBeenCalled();
    } finally {
      stringify.mockRestore();
    }
    // Multi-byte text is measured in UTF-8 bytes, not characters.
    expect(() => canonicalJsonWithin({ s: 'é'.repeat(600) }, 1000, 'x')).toThrow(/^x: the response of 1208 bytes exceeds the limit of 1000 bytes/);
  });

  test('a watch whose view grows past the cap ends with response_too_large (the update is never sent)', async () => {
    const fx = await ledgerFixture({ workspaceId: 'cap' });
    const hub = new WatchHub({ maxResponseBytes: 64 * 1024 });
    try {
      const ws = await fx.ledger.workspace('cap');
      const target = { repoId: 'cap-repo', prNumber: 1 };
      const agent = { principal: 'agent:cap-test' as const, role: 'member' as const };
      await fx.ledger.run('requestReview', 'cap', { ...agent, idempotencyKey: newUuidV7() }, { ...target, baseSha: BASE, headSha: HEAD_A });
      const sent: WatchUpdate[] = [];
      const failed: DomainError[] = [];
      const started = await hub.watch(ws, queryByName('nodeStatus')!, target, undefined, { send: (u) => sent.push(u), congested: () => false, onDrain: (cb) => cb(), fail: (e) => failed.push(e) });
      started.watcher.start();
      // Each node's row shows a title of ~490 characters: some 60 nodes pass 64 KiB.
      for (let i = 0; i < 100 && failed.length === 0; i++) await fx.ledger.run('addReviewNode', 'cap', { ...agent, idempotencyKey: newUuidV7() }, { ...target, node: nodePayload(`finding ${i} ${'t'.repeat(480)}`) });
      for (let t = 0; failed.length === 0 && t < 200; t++) await new Promise((r) => setTimeout(r, 10));
      expect(failed).toHaveLength(1);
      expect(failed[0]).toMatchObject({ code: 'response_too_large', message: expect.stringMatching(/^watch nodeStatus: the response (would exceed|of \d+ bytes exceeds) the limit of 65536 bytes/) });
      expect(sent.length).toBeGreaterThan(0);
      for (const u of sent) expect(Buffer.byteLength(u.valueJson)).toBeLessThanOrEqual(64 * 1024);
      expect(started.watcher.closed).toBe(true);
    } finally {
      hub.close();
      await fx.cleanup();
    }
  });
});
