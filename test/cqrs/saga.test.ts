import { Injectable } from '@nestjs/common';
import { CommandBus, type ICommand } from '@nestjs/cqrs';
import { loadConfig } from '../../src/config';
import { closeSharedExtractPool } from '../../src/codegraph/extract-pool';
import { closeSharedDiffPools } from '../../src/axes/visual/pool';
import { reviewStreamOf } from '../../src/events/streams';
import { followUpKey, LedgerCommand, ledgerCommandClass } from '../../src/cqrs/commands';
import { collect } from '../../src/events/store/port';
import { newUuidV7 } from '../../src/events/ids';
import { Ledger } from '../../src/ledger';
import { AutoRecomputeSaga } from '../../src/webhooks/auto-recompute.saga';
import { WEBHOOK_PRINCIPAL } from '../../src/webhooks/github';
import { GitFixture } from '../support/git-fixture';
import { ledgerFixture, OWNER } from '../support/ledger-fixture';
import { cqrsContext, until } from './support';

const WS = 'saga';
const target = { repoId: 'auto', prNumber: 11 };
const ComputeReviewCommand = ledgerCommandClass('computeReview');

/** Every command the CommandBus executes (subscribed before the feed starts publishing). */
@Injectable()
class CommandLog {
  readonly commands: LedgerCommand[] = [];
  constructor(bus: CommandBus) {
    bus.subscribe((c: ICommand) => {
      if (c instanceof LedgerCommand) this.commands.push(c);
    });
  }
}

describe('webhook auto-recompute as a @Saga', () => {
  afterAll(async () => {
    await closeSharedDiffPools();
    await closeSharedExtractPool();
  });

  it('computes the current head a webhook recorded while no server ran, once; a restart resumes after it (its stored position) instead of firing again', async () => {
    const fx = await ledgerFixture({ workspaceId: WS });
    const git = new GitFixture('rl-saga-');
    let served: Ledger | null = null;
    let app: Awaited<ReturnType<typeof cqrsContext>> | null = null;
    const start = async () => {
      served = new Ledger(loadConfig({ dataDir: fx.dataDir }, {}));
      app = await cqrsContext(served, { providers: [AutoRecomputeSaga, CommandLog] });
      return app;
    };
    const stop = async () => {
      await app?.close();
      await served?.close();
      app = served = null;
    };
    const prEvents = async () => collect((await fx.ledger.workspace(WS)).store.readStream(reviewStreamOf(target)));
    const computed = async () => (await prEvents()).filter((e) => e.type === 'ReviewComputed').map((e) => (e.data as { headSha: string }).headSha);
    const webhook = (headSha: string, baseSha: string) =>
      fx.ledger.run('observeHead', WS, { principal: WEBHOOK_PRINCIPAL, role: 'member', via: 'webhook', idempotencyKey: newUuidV7() }, { ...target, headSha, baseSha, source: 'github:pull_request.synchronize' });
    try {
      git.git('remote', 'add', 'origin', 'https://github.com/acme/auto.git');
      git.write('src/a.ts', 'export const a = 1;\n');
      const base = git.commit('base');
      git.write('src/a.ts', 'export const a = 2;\n');
      const head1 = git.commit('head 1');
      git.write('src/b.ts', 'import { a } from "./a";\nexport const b = a + 1;\n');
      const head2 = git.commit('head 2');
      await fx.ledger.run('registerRepo', WS, { ...OWNER, idempotencyKey: newUuidV7() }, { repoId: target.repoId, path: git.dir, config: { autoRecompute: true } });
      await fx.ledger.run('requestReview', WS, { ...OWNER, idempotencyKey: newUuidV7() }, { ...target, baseSha: base, headSha: head1 });
      // Two synchronize deliveries recorded by a process that died before computing anything.
      await webhook(head1, base);
      const latest = await webhook(head2, base);
      // No server ran: nothing computed yet.
      expect(await computed()).toEqual([]);

      await start();
      await until(async () => (await computed()).length > 0, 30_000, 'the saga to compute the review');
      await app!.feed.settled();
      const expectedKey = followUpKey('autoRecompute', latest.response.eventIds[0]);
      // Only the current head: the superseded observation of head1 issued nothing.
      expect(app!.get(CommandLog).commands.map((c) => [c.constructor, c.envelope.idempotencyKey, (c.payload as { headSha: string }).headSha])).toEqual([[ComputeReviewCommand, expectedKey, head2]]);
      expect(await computed()).toEqual([head2]);
      const computedEvent = (await prEvents()).find((e) => e.type === 'ReviewComputed')!;
      expect(computedEvent.eventId).toBe(expectedKey);
      expect(computedEvent.metadata).toMatchObject({ principal: WEBHOOK_PRINCIPAL, via: 'webhook', causationId: latest.response.eventIds[0] });
      const afterFirst = (await prEvents()).map((e) => e.eventId);
      await stop();

      // Restart: the saga's stored position is past the observation it handled, so nothing is delivered
      // to it again: no command, no second computation, no new event.
      await start();
      await app!.feed.settled();
      expect(app!.feed.resumedAfter('autoRecompute', WS)).toBeGreaterThanOrEqual(latest.response.firstPosition!);
      for (let i = 0; i < 10; i++) {
        await new Promise((r) => setTimeout(r, 100));
        expect((await prEvents()).map((e) => e.eventId)).toEqual(afterFirst);
      }
      expect(app!.get(CommandLog).commands).toEqual([]);

      // Live: a head another process records while this server runs is computed here, once.
      const back = await webhook(head1, base);
      await until(async () => (await computed()).length === 2, 30_000, 'the live recompute');
      expect(await computed()).toEqual([head2, head1]);
      expect(app!.get(CommandLog).commands.map((c) => c.envelope.idempotencyKey)).toEqual([followUpKey('autoRecompute', back.response.eventIds[0])]);
    } finally {
      await stop();
      await fx.cleanup();
      git.cleanup();
    }
  }, 120_000);
});
