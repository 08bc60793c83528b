import { Inject, Injectable, Module, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost, ModuleRef } from '@nestjs/core';
import { EventsHandler, type IEventHandler } from '@nestjs/cqrs';
import type { Server } from 'node:http';
import { EveryBusEvent, LedgerEvent, WorkspaceCaughtUp } from '../cqrs/events';
import { LedgerEventFeed, type CheckpointedConsumer } from '../cqrs/event-feed';
import { Ledger } from '../ledger';
import { statusCheckOptions, statusClientFactory, VerdictStatusSync } from './sync';
import { Slot } from '../slots';

/** Ledger service under which the running sync is registered (tests wait on `idle()`). */
export const STATUS_SYNC_SERVICE = new Slot<VerdictStatusSync>('statusCheck.sync');

/**
 * Runs the verdict status sync in the server — only when the server has a GitHub credential (or an
 * application registered a GitHub client): without one nothing could be posted, so nothing is kept.
 * The Review page link uses REVIEW_LEDGER_PUBLIC_URL, else the address the server listens on.
 */
@Injectable()
export class VerdictStatusRunner implements OnModuleInit, OnModuleDestroy {
  sync: VerdictStatusSync | null = null;

  constructor(@Inject(Ledger) private readonly ledger: Ledger, private readonly adapterHost: HttpAdapterHost) {}

  // Init, not bootstrap: the sync must exist before the event feed starts publishing (at bootstrap).
  onModuleInit(): void {
    const factory = statusClientFactory(this.ledger);
    if (!factory) return;
    const baseUrl = () => {
      const configured = statusCheckOptions(this.ledger).publicUrl ?? process.env.REVIEW_LEDGER_PUBLIC_URL;
      if (configured) return configured;
      const addr = (this.adapterHost.httpAdapter.getHttpServer() as Server).address();
      const port = typeof addr === 'object' && addr ? addr.port : this.ledger.config.port;
      const host = this.ledger.config.host === '0.0.0.0' ? '127.0.0.1' : this.ledger.config.host;
      return `http://${host}:${port}`;
    };
    this.sync = new VerdictStatusSync(this.ledger, factory, baseUrl);
    this.ledger.services.set(STATUS_SYNC_SERVICE, this.sync);
  }

  async onModuleDestroy(): Promise<void> {
    await this.sync?.stop();
    if (this.ledger.services.get(STATUS_SYNC_SERVICE) === this.sync) this.ledger.services.delete(STATUS_SYNC_SERVICE);
  }
}

/**
 * Every workspace's log, from the EventBus, into the sync (synchronously, in log order). A checkpointed
 * consumer: its position moves once the statuses its events asked for are synced, so a restart resumes
 * there instead of replaying the log.
 */
@EventsHandler(EveryBusEvent)
export class VerdictStatusEvents implements IEventHandler<LedgerEvent | WorkspaceCaughtUp>, CheckpointedConsumer, OnModuleInit {
  readonly consumer = 'verdictStatus';
  private readonly resumed = new Set<string>();
  private feed!: LedgerEventFeed;

  constructor(
    private readonly runner: VerdictStatusRunner,
    private readonly moduleRef: ModuleRef,
  ) {}

  // The feed lives in LedgerCqrsModule (imported by the application root): found across modules.
  onModuleInit(): void {
    this.feed = this.moduleRef.get(LedgerEventFeed, { strict: false });
    this.feed.register(this);
  }

  handle(e: LedgerEvent | WorkspaceCaughtUp): void {
    const sync = this.runner.sync;
    // Bound to EveryBusEvent: anything else published on the bus is not the log's.
    if (!sync || !(e instanceof LedgerEvent || e instanceof WorkspaceCaughtUp)) return;
    if (!this.resumed.has(e.workspaceId)) {
      this.resumed.add(e.workspaceId);
      sync.resumedAfter(e.workspaceId, this.feed.resumedAfter(this.consumer, e.workspaceId));
    }
    if (e instanceof WorkspaceCaughtUp) sync.onCaughtUp(e.workspaceId);
    else if (!this.feed.handled(this.consumer, e.workspaceId, e.event.globalPosition)) sync.onEvent(e.workspaceId, e.event);
  }

  handledThrough(workspaceId: string, published: number): number {
    return this.runner.sync ? this.runner.sync.handledThrough(workspaceId, published) : published;
  }
}

@Module({ providers: [VerdictStatusRunner, VerdictStatusEvents] })
export class StatusCheckModule {}
