import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Injectable } from '@nestjs/common';
import { EventsHandler, type IEventHandler } from '@nestjs/cqrs';
import { loadConfig } from '../../src/config';
import { InFlight, LedgerEventFeed, type CheckpointedConsumer } from '../../src/cqrs/event-feed';
import { ALL_LEDGER_EVENTS, LedgerEvent } from '../../src/cqrs/events';
import { newUuidV7 } from '../../src/events/ids';
import { LOCAL_OPERATOR, Ledger } from '../../src/ledger';
import { postgresStoreFactory } from '../../src/workspaces/store-factories';
import { DATABASE_URL, dropSchema, uniqueSchema, whenPostgres } from '../scale/pg-support';
import { ledgerFixture, OWNER } from '../support/ledger-fixture';
import { BASE, HEAD_A, HEAD_B } from '../rpc/support';
import { cqrsContext, until } from './support';
import { EVENT_FEED_OPTIONS_SERVICE } from '../../src/cqrs/event-feed';

const WS = 'ckpt';
const target = { repoId: 'shop', prNumber: 4 };

/**
 * A checkpointed consumer as a feature writes one: an @EventsHandler that registers with the feed,
 * skips what it handled before this start, and holds its position back while work is in flight
 * (`hold` makes the handling of one event wait until the test releases it).
 */
@EventsHandler(...ALL_LEDGER_EVENTS)
@Injectable()
class Recorder implements IEventHandler<LedgerEvent>, CheckpointedConsumer {
  readonly consumer = 'test.recorder';
  readonly seen: Array<{ position: number; type: string; replayed: boolean }> = [];
  readonly inFlight = new InFlight();
  hold: ((e: LedgerEvent) => boolean) | null = null;
  release: Array<() => void> = [];

  constructor(private readonly feed: LedgerEventFeed) {
    feed.register(this);
  }

  async handle(e: LedgerEvent): Promise<void> {
    const at = e.event.globalPosition;
    if (this.feed.handled(this.consumer, e.workspaceId, at)) return;
    this.seen.push({ position: at, type: e.type, replayed: e.replayed });
    if (!this.hold?.(e)) return;
    this.inFlight.begin(e.workspaceId, at);
    await new Promise<void>((r) => this.release.push(r));
    this.inFlight.end(e.workspaceId, at);
  }

  handledThrough(workspaceId: string, published: number): number {
    return this.inFlight.through(workspaceId, published);
  }
}

const observe = (ledger: Ledger, headSha: string) => ledger.run('observeHead', WS, { ...OWNER, idempotencyKey: newUuidV7() }, { ...target, headSha, source: 'test' });

describe('EventBus consumers keep a stored position (SQLite beside the workspace)', () => {
  it('a restart resumes after what was handled: nothing handled is delivered again, what was appended meanwhile (also by another process) is', async () => {
    const fx = await ledgerFixture({ workspaceId: WS });
    await fx.ledger.run('requestReview', WS, { ...OWNER, idempotencyKey: newUuidV7() }, { ...target, baseSha: BASE, headSha: HEAD_A });
    let app = await cqrsContext(fx.ledger, { providers: [Recorder] });
    try {
      await app.feed.settled();
      const first = app.get(Recorder).seen.map((s) => s.position);
      const head = (await fx.events()).at(-1)!.globalPosition;
      expect(first).toEqual((await fx.events()).map((e) => e.globalPosition));
      await app.close();
      expect(fs.existsSync(path.join(fx.dataDir, WS, 'consumers.db'))).toBe(true);

      // Appended while no feed ran, by a ledger that is not the feed's own.
      const other = new Ledger(loadConfig({ dataDir: fx.dataDir }, {}));
      const whileDown = await observe(other, HEAD_B);
      app = await cqrsContext(fx.ledger, { providers: [Recorder] });
      await app.feed.settled();
      expect(app.get(Recorder).seen).toEqual([{ position: whileDown.response.firstPosition, type: 'HeadObserved', replayed: true }]);
      expect(app.feed.resumedAfter('test.recorder', WS)).toBe(head);

      // Live, from the other process (the SQLite feed finds it by its poll).
      const live = await observe(other, HEAD_A);
      await until(() => app.get(Recorder).seen.length === 2, 10_000, 'the other process\'s append');
      expect(app.get(Recorder).seen[1]).toEqual({ position: live.response.firstPosition, type: 'HeadObserved', replayed: false });
      await other.close();
    } finally {
      await app.close();
      await fx.cleanup();
    }
  });

  it('the position is committed after handling: an event whose handling had not finished is delivered again after a restart', async () => {
    const fx = await ledgerFixture({ workspaceId: WS });
    let app = await cqrsContext(fx.ledger, { providers: [Recorder] });
    try {
      await app.feed.settled();
      const recorder = app.get(Recorder);
      recorder.hold = (e) => e.type === 'HeadObserved';
      await fx.ledger.run('requestReview', WS, { ...OWNER, idempotencyKey: newUuidV7() }, { ...target, baseSha: BASE, headSha: HEAD_A });
      const held = await observe(fx.ledger, HEAD_B);
      const after = await observe(fx.ledger, HEAD_A);
      await until(() => recorder.seen.some((s) => s.position === after.response.firstPosition), 10_000, 'the later event');
      // Both HeadObserved are in flight; several commit intervals pass.
      await new Promise((r) => setTimeout(r, 700));
      recorder.release.splice(1).forEach((r) => r()); // the later one finishes, the first one never does
      await new Promise((r) => setTimeout(r, 700));
      await app.close();

      app = await cqrsContext(fx.ledger, { providers: [Recorder] });
      await app.feed.settled();
      // Everything from the unfinished event on is delivered again; nothing before it.
      expect(app.get(Recorder).seen.map((s) => s.position)).toEqual([held.response.firstPosition, after.response.firstPosition]);
      expect(app.feed.resumedAfter('test.recorder', WS)).toBe(held.response.firstPosition! - 1);
    } finally {
      app.get(Recorder).release.forEach((r) => r());
      await app.close();
      await fx.cleanup();
    }
  });
});

whenPostgres('EventBus consumer positions on PostgreSQL', () => {
  const schema = uniqueSchema('rl_ckpt');
  const dirs: string[] = [];
  const tmp = () => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), 'rl-ckpt-'));
    dirs.push(d);
    return d;
  };
  afterAll(async () => {
    await dropSchema(schema);
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it('stores positions in the schema and sees another process\'s append through the store\'s notification, without polling', async () => {
    const ledgerOn = () => new Ledger(loadConfig({ dataDir: tmp(), store: 'postgres', databaseUrl: DATABASE_URL }, {}), { storeFactory: postgresStoreFactory(DATABASE_URL, schema) });
    const writer = ledgerOn();
    await writer.createWorkspace({ ...LOCAL_OPERATOR, idempotencyKey: newUuidV7() }, { workspaceId: WS });
    await writer.run('requestReview', WS, { ...OWNER, idempotencyKey: newUuidV7() }, { ...target, baseSha: BASE, headSha: HEAD_A });
    let served = ledgerOn();
    // A poll that would never come in time: only the NOTIFY can wake the feed.
    served.services.set(EVENT_FEED_OPTIONS_SERVICE, { rescanMs: 100, pollMs: 3_600_000 });
    let app = await cqrsContext(served, { providers: [Recorder] });
    try {
      await app.feed.settled();
      const head = await (await writer.workspace(WS)).store.headPosition();
      expect(app.get(Recorder).seen.map((s) => s.position).at(-1)).toBe(head);
      const live = await observe(writer, HEAD_B);
      await until(() => app.get(Recorder).seen.some((s) => s.position === live.response.firstPosition), 5_000, 'the NOTIFY-woken delivery');
      await app.close();
      await served.close();

      served = ledgerOn();
      app = await cqrsContext(served, { providers: [Recorder] });
      await app.feed.settled();
      expect(app.get(Recorder).seen).toEqual([]);
      expect(app.feed.resumedAfter('test.recorder', WS)).toBe(live.response.firstPosition);
      expect(fs.existsSync(path.join(served.config.dataDir, WS, 'consumers.db'))).toBe(false);
    } finally {
      await app.close();
      await served.close();
      await writer.close();
    }
  });
});
