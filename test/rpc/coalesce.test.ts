import { newUuidV7 } from '../../src/events/ids';
import { queryByName } from '../../src/readmodels/queries/queries';
import { runQuery } from '../../src/readmodels/queries/run-query';
import { WatchHub, type WatchUpdate } from '../../src/rpc/watch';
import { ledgerFixture } from '../support/ledger-fixture';
import { BASE, HEAD_A, nodePayload } from './support';

const AGENT = { principal: 'agent:slow-test' as const, role: 'member' as const };

describe('a slow consumer that asked for coalescing gets the latest state with bounded memory', () => {
  it('queues at most a bounded number of updates while congested, then delivers the latest state marked coalesced', async () => {
    const fx = await ledgerFixture({ workspaceId: 'slow' });
    const hub = new WatchHub();
    try {
      const ws = await fx.ledger.workspace('slow');
      const target = { repoId: 'slow-repo', prNumber: 1 };
      await fx.ledger.run('requestReview', 'slow', { ...AGENT, idempotencyKey: newUuidV7() }, { ...target, baseSha: BASE, headSha: HEAD_A });
      const nodes = queryByName('nodeStatus')!;
      const sent: WatchUpdate[] = [];
      let congested = true;
      let drain: (() => void) | null = null;
      const started = await hub.watch(ws, nodes, target, undefined, {
        send: (u) => sent.push(u),
        congested: () => congested,
        onDrain: (cb) => {
          drain = cb;
        },
        fail: (err) => {
          throw err;
        },
      }, { coalesce: true });
      started.watcher.start();
      for (let i = 0; i < 200; i++) await fx.ledger.run('addReviewNode', 'slow', { ...AGENT, idempotencyKey: newUuidV7() }, { ...target, node: nodePayload(`finding ${i}`) });
      const head = await ws.store.headPosition();
      for (let t = 0; started.watcher.position < head && t < 200; t++) await new Promise((r) => setTimeout(r, 10));
      expect(sent).toEqual([]);
      // 201 changes happened; the watcher holds one collapsed state, not 201 frames.
      expect((started.watcher as unknown as { queue: unknown[] }).queue.length).toBeLessThanOrEqual(64);
      congested = false;
      drain!();
      expect(sent.length).toBeGreaterThan(0);
      expect(sent.length).toBeLessThanOrEqual(64);
      const last = sent[sent.length - 1];
      expect(last.position).toBe(head);
      expect(sent.some((u) => u.coalesced)).toBe(true);
      expect(JSON.parse(last.valueJson)).toEqual((await runQuery(nodes, ws, target)).value);
      const positions = sent.map((u) => u.position);
      expect(positions).toEqual([...positions].sort((a, b) => a - b));
      started.watcher.close();
      expect(hub.feedCount()).toBe(0);
    } finally {
      hub.close();
      await fx.cleanup();
    }
  });
});

describe('a slow consumer that did not ask for coalescing is ended with watch_lagging and resumes with since, missing no step', () => {
  it('ends the subscription past 64 queued updates, names where to resume, and the resume gives every step', async () => {
    const fx = await ledgerFixture({ workspaceId: 'slow' });
    const hub = new WatchHub();
    try {
      const ws = await fx.ledger.workspace('slow');
      const target = { repoId: 'slow-repo', prNumber: 2 };
      await fx.ledger.run('requestReview', 'slow', { ...AGENT, idempotencyKey: newUuidV7() }, { ...target, baseSha: BASE, headSha: HEAD_A });
      const nodes = queryByName('nodeStatus')!;
      const sent: WatchUpdate[] = [];
      let congested = false;
      let failure: { code: string; details?: { since?: number } } | null = null;
      const started = await hub.watch(ws, nodes, target, undefined, {
        send: (u) => {
          sent.push(u);
          congested = true; // the transport takes one update, then stalls
        },
        congested: () => congested,
        onDrain: () => undefined,
        fail: (err) => {
          failure = err as never;
        },
      });
      started.watcher.start();
      const positions: number[] = [];
      for (let i = 0; i < 100; i++) positions.push((await fx.ledger.run('addReviewNode', 'slow', { ...AGENT, idempotencyKey: newUuidV7() }, { ...target, node: nodePayload(`finding ${i}`) })).response.lastPosition!);
      for (let t = 0; !failure && t < 500; t++) await new Promise((r) => setTimeout(r, 10));
      expect(failure).toMatchObject({ code: 'watch_lagging', details: { since: sent[0].position } });
      expect(sent).toHaveLength(1);
      expect(started.watcher.closed).toBe(true);

      // Resuming where it says: every later step, none coalesced, none twice.
      const resumed: WatchUpdate[] = [];
      const again = await hub.watch(ws, nodes, target, (failure as unknown as { details: { since: number } }).details.since, { send: (u) => resumed.push(u), congested: () => false, onDrain: (cb) => cb(), fail: (err) => { throw err; } });
      again.watcher.start();
      expect(resumed.map((u) => u.position)).toEqual(positions.filter((p) => p > sent[0].position));
      expect(resumed.every((u) => !u.coalesced)).toBe(true);
      again.watcher.close();
    } finally {
      hub.close();
      await fx.cleanup();
    }
  });
});
