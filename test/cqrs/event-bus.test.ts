import { Injectable } from '@nestjs/common';
import { EventsHandler, type IEventHandler } from '@nestjs/cqrs';
import { loadConfig } from '../../src/config';
import { ALL_LEDGER_EVENTS, EveryBusEvent, ledgerEventClass, LedgerEvent, WorkspaceCaughtUp } from '../../src/cqrs/events';
import { newUuidV7 } from '../../src/events/ids';
import { Ledger } from '../../src/ledger';
import { ledgerFixture, OWNER } from '../support/ledger-fixture';
import { BASE, HEAD_A, HEAD_B } from '../rpc/support';
import { cqrsContext, until } from './support';

const WS = 'feed';
const AGENT = { principal: 'agent:rev' as const, role: 'member' as const };
const target = { repoId: 'shop', prNumber: 3 };

/** Everything the bus delivers, in order. */
@EventsHandler(...ALL_LEDGER_EVENTS, WorkspaceCaughtUp)
@Injectable()
class LogRecorder implements IEventHandler<LedgerEvent | WorkspaceCaughtUp> {
  readonly seen: Array<{ type: string; position: number; eventId?: string; replayed?: boolean; workspaceId: string }> = [];
  handle(e: LedgerEvent | WorkspaceCaughtUp): void {
    if (e instanceof WorkspaceCaughtUp) this.seen.push({ type: '(caught up)', position: e.position, workspaceId: e.workspaceId });
    else this.seen.push({ type: e.type, position: e.event.globalPosition, eventId: e.event.eventId, replayed: e.replayed, workspaceId: e.workspaceId });
  }
}

/** The same, bound once (EveryBusEvent: no filter per event class); records what it is given in the same shape. */
@EventsHandler(EveryBusEvent)
@Injectable()
class EveryRecorder extends LogRecorder {}

/** One event type only, as a feature would subscribe. */
const HeadObserved = ledgerEventClass('HeadObserved');
@EventsHandler(HeadObserved)
@Injectable()
class HeadRecorder implements IEventHandler<LedgerEvent> {
  readonly heads: string[] = [];
  handle(e: LedgerEvent<{ headSha: string }>): void {
    this.heads.push(e.data.headSha);
  }
}

describe('the EventBus fed from the store', () => {
  it('delivers the log on start (replayed), then what a second ledger on the same SQLite data dir appends (live); refused commands deliver nothing', async () => {
    const fx = await ledgerFixture({ workspaceId: WS });
    await fx.ledger.run('addMember', WS, { ...OWNER, idempotencyKey: newUuidV7() }, { principal: AGENT.principal, role: 'member' });
    await fx.ledger.run('requestReview', WS, { ...AGENT, idempotencyKey: newUuidV7() }, { ...target, baseSha: BASE, headSha: HEAD_A });
    const before = await fx.events();
    // The Nest app runs on its own ledger; `fx.ledger` stays a separate writer on the same files.
    const served = new Ledger(loadConfig({ dataDir: fx.dataDir }, {}));
    const app = await cqrsContext(served, { providers: [LogRecorder, HeadRecorder, EveryRecorder] });
    const log = app.get(LogRecorder);
    const heads = app.get(HeadRecorder);
    const every = app.get(EveryRecorder);
    try {
      await app.feed.settled();
      const head = before[before.length - 1].globalPosition;
      expect(log.seen).toEqual([
        ...before.map((e) => ({ type: e.type, position: e.globalPosition, eventId: e.eventId, replayed: true, workspaceId: WS })),
        { type: '(caught up)', position: head, workspaceId: WS },
      ]);

      // Written by the other ledger: this process's store connection is never told; the feed finds it.
      const observed = await fx.ledger.run('observeHead', WS, { ...AGENT, idempotencyKey: newUuidV7() }, { ...target, headSha: HEAD_B, source: 'test' });
      await until(() => heads.heads.includes(HEAD_B), 10_000, 'HeadObserved from the other ledger');
      const live = log.seen.filter((s) => s.position > head);
      expect(live).toEqual([{ type: 'HeadObserved', position: observed.response.firstPosition, eventId: observed.response.eventIds[0], replayed: false, workspaceId: WS }]);
      // Published only once durable: what the handler got is what the store holds at that position.
      const stored = (await fx.events()).find((e) => e.globalPosition === live[0].position)!;
      expect(stored.eventId).toBe(live[0].eventId);

      // A refused command appends nothing, so nothing reaches the bus.
      await expect(fx.ledger.run('setReviewLevel', WS, { ...AGENT, idempotencyKey: newUuidV7() }, { level: 'thorough' })).rejects.toMatchObject({ code: 'forbidden' });
      // An idempotent replay writes nothing either.
      const replay = await fx.ledger.run('observeHead', WS, { ...AGENT, idempotencyKey: observed.response.eventIds[0] }, { ...target, headSha: HEAD_B, source: 'test' });
      expect(replay.replayed).toBe(true);
      // This process's own append is delivered too (woken by its own store).
      await served.run('observeHead', WS, { ...AGENT, idempotencyKey: newUuidV7() }, { ...target, headSha: HEAD_A, source: 'test' });
      await app.feed.settled();
      expect(log.seen.filter((s) => s.position > head).map((s) => s.type)).toEqual(['HeadObserved', 'HeadObserved']);
      expect(heads.heads).toEqual([HEAD_B, HEAD_A]);
      // Bound to EveryBusEvent, a handler is given exactly what one bound to every class is given, once each, in order.
      expect(every.seen).toEqual(log.seen);
      expect(every.seen.length).toBeGreaterThan(before.length + 2);
    } finally {
      await app.close();
      await served.close();
      await fx.cleanup();
    }
  });

  it('follows a workspace created after start, and a restart delivers the whole log again as replayed', async () => {
    const fx = await ledgerFixture({ workspaceId: WS });
    let app = await cqrsContext(fx.ledger, { providers: [LogRecorder] });
    try {
      await fx.ledger.createWorkspace({ ...OWNER, idempotencyKey: newUuidV7() }, { workspaceId: 'later' });
      await until(() => app.get(LogRecorder).seen.some((s) => s.workspaceId === 'later' && s.type === 'WorkspaceCreated'), 10_000, 'the new workspace');
      expect(app.get(LogRecorder).seen.find((s) => s.workspaceId === 'later' && s.type === 'WorkspaceCreated')!.replayed).toBe(false);
      await app.close();
      app = await cqrsContext(fx.ledger, { providers: [LogRecorder] });
      await app.feed.settled();
      const again = app.get(LogRecorder).seen.filter((s) => s.workspaceId === 'later' && s.type !== '(caught up)');
      expect(again.map((s) => s.eventId)).toEqual((await fx.events('later')).map((e) => e.eventId));
      expect(again.every((s) => s.replayed)).toBe(true);
    } finally {
      await app.close();
      await fx.cleanup();
    }
  });
});
