import { chainHash, genesisHash } from '../../src/events/chain';
import { AuditableStore, verifyStore } from '../../src/audit/checkpointer';
import { ev } from './support';

/** How both chained adapters extend the chain: refusals, retries and concurrency never fork it. */
export function chainAppendSuite(name: string, open: () => Promise<AuditableStore>, openSecond?: (first: AuditableStore) => Promise<AuditableStore>): void {
  describe(`hash chain on append: ${name}`, () => {
    let store: AuditableStore;
    beforeEach(async () => {
      store = await open();
    });
    afterEach(async () => {
      await store.close();
    });

    test('each event links to the one before it, starting from the workspace genesis', async () => {
      await store.append('a', 'no_stream', [ev(store.workspaceId, 1), ev(store.workspaceId, 2)]);
      await store.append('b', 'no_stream', [ev(store.workspaceId, 3)]);
      const rows = await store.readChainPage(0, 10);
      expect(rows.map((r) => r.position)).toEqual([1, 2, 3]);
      rows.forEach((r, i) => {
        expect(r.hash).toMatch(/^[0-9a-f]{64}$/);
        expect(r.hash).toBe(chainHash(i === 0 ? genesisHash(store.workspaceId) : rows[i - 1].hash!, r));
      });
      expect(await store.chainInfo()).toEqual({ chainedFrom: 0, headPosition: 3, headHash: rows[2].hash });
    });

    test('idempotent retries and replays of an append write nothing and do not fork the chain', async () => {
      const batch = [ev(store.workspaceId, 1), ev(store.workspaceId, 2)];
      await store.append('a', 'no_stream', batch);
      const before = await store.readChainPage(0, 10);
      // The same append again, concurrently with itself and with a fresh one, in one group commit.
      const results = await Promise.all([store.append('a', 'no_stream', batch), store.append('a', 'no_stream', batch), store.append('b', 'no_stream', [ev(store.workspaceId, 3)])]);
      expect(results.map((r) => r.duplicate)).toEqual([true, true, false]);
      const after = await store.readChainPage(0, 10);
      expect(after.slice(0, 2)).toEqual(before);
      expect(after[2].hash).toBe(chainHash(before[1].hash!, after[2]));
      expect((await verifyStore(store)).ok).toBe(true);
    });

    test('refused appends inside one group commit leave no trace in the chain', async () => {
      await store.append('a', 'no_stream', [ev(store.workspaceId, 0)]);
      const dup = ev(store.workspaceId, 9);
      const outcomes = await Promise.allSettled([
        store.append('a', 0, [ev(store.workspaceId, 1)]),
        store.append('a', 0, [ev(store.workspaceId, 2)]), // wrong expected revision: refused
        store.append('b', 'no_stream', [ev(store.workspaceId, 3), { ...dup }, { ...dup }]), // duplicate id inside: refused
        store.append('c', 'no_stream', [ev(store.workspaceId, 4)]),
      ]);
      expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'fulfilled']);
      await store.append('d', 'no_stream', [ev(store.workspaceId, 5)]);
      const r = await verifyStore(store);
      expect(r).toMatchObject({ ok: true, events: 4, headPosition: 4 });
    });

    if (openSecond) {
      test('two connections appending to the same log in turn keep one chain', async () => {
        const other = await openSecond(store);
        try {
          for (let i = 0; i < 20; i++) await Promise.all([store.append(`x-${i}`, 'no_stream', [ev(store.workspaceId, i)]), other.append(`y-${i}`, 'no_stream', [ev(store.workspaceId, 100 + i)])]);
          const r = await verifyStore(store);
          expect(r).toMatchObject({ ok: true, events: 40 });
        } finally {
          await other.close();
        }
      });
    }
  });
}
