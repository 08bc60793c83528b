import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { ofType, Saga, type ICommand, type IEvent } from '@nestjs/cqrs';
import { from, type Observable } from 'rxjs';
import { filter, mergeMap } from 'rxjs/operators';
import { loadPrState } from '../review/pr-state';
import { parseReviewStream } from '../events/streams';
import { loadRepoState } from '../compute/streams';
import { followUpKey, ledgerCommand, type LedgerCommand } from '../cqrs/commands';
import { ledgerEventClass, type LedgerEvent } from '../cqrs/events';
import { StoreClosed } from '../events/store/port';
import { InFlight, LedgerEventFeed, type CheckpointedConsumer } from '../cqrs/event-feed';
import { isEvent } from '../events/catalogue/event-types';
import type { DomainError } from '../domain-error';
import { Ledger } from '../ledger';
import { AUTO_RECOMPUTE_COMMAND, WEBHOOK_PRINCIPAL } from './github';

const HeadObservedEvent = ledgerEventClass('HeadObserved');

/**
 * Webhook auto-recompute (SPEC §10): a head observed through a GitHub webhook, on a repo registered with
 * `config.autoRecompute`, is computed. Driven by the recorded `HeadObserved` on the EventBus, so a head
 * recorded just before a crash is still computed after the restart, and one recorded by another server
 * on the same store is computed here too. Its stored position (a CheckpointedConsumer) moves only once
 * the command it issued ran, so a restart resumes after what was computed and re-delivers what was not.
 * The follow-up's idempotency key comes from the event: seeing it again (a crash before the position
 * was committed, a second server that sees it as well) replays the first computation instead of
 * recording another. Only the PR's current head is computed: a superseded observation is skipped.
 */
@Injectable()
export class AutoRecomputeSaga implements CheckpointedConsumer, OnModuleInit {
  /** A checkpointed consumer: its position waits for the computations it asked for, so a restart resumes there. */
  readonly consumer = 'autoRecompute';
  private readonly inFlight = new InFlight();

  private feed!: LedgerEventFeed;

  constructor(
    @Inject(Ledger) private readonly ledger: Ledger,
    private readonly moduleRef: ModuleRef,
  ) {}

  // The feed lives in LedgerCqrsModule (imported by the application root): found across modules.
  onModuleInit(): void {
    this.feed = this.moduleRef.get(LedgerEventFeed, { strict: false });
    this.feed.register(this);
  }

  handledThrough(workspaceId: string, published: number): number {
    return this.inFlight.through(workspaceId, published);
  }

  @Saga()
  headObserved = (events$: Observable<IEvent>): Observable<ICommand> =>
    events$.pipe(
      ofType(HeadObservedEvent),
      filter((e) => e.event.metadata.via === 'webhook' && !this.feed.handled(this.consumer, e.workspaceId, e.event.globalPosition)),
      mergeMap((e) => {
        const at = e.event.globalPosition;
        this.inFlight.begin(e.workspaceId, at);
        const done = () => this.inFlight.end(e.workspaceId, at);
        return from(
          this.followUp(e).then(
            (c) => {
              if (c) void c.executed.then(done);
              else done();
              return c;
            },
            (err) => {
              done();
              throw err;
            },
          ),
        );
      }),
      filter((c): c is LedgerCommand => c !== null),
    );

  /** The compute command for this observation, or null when there is nothing to compute. */
  async followUp(e: LedgerEvent): Promise<LedgerCommand | null> {
    const target = parseReviewStream(e.event.streamId);
    if (!target) return null;
    try {
      const ws = await this.ledger.workspace(e.workspaceId);
      const repo = await loadRepoState(ws, target.repoId);
      if (repo.config?.autoRecompute !== true) return null;
      if (!isEvent(e.event, 'HeadObserved')) return null;
      const { headSha, baseSha } = e.event.data;
      if ((await loadPrState(ws, e.event.streamId)).observedHead !== headSha) return null;
      return ledgerCommand(
        AUTO_RECOMPUTE_COMMAND,
        ws.id,
        { idempotencyKey: followUpKey('autoRecompute', e.event.eventId), principal: WEBHOOK_PRINCIPAL, role: 'member', via: 'webhook', correlationId: e.event.metadata.correlationId, causationId: e.event.eventId },
        { ...target, headSha, ...(baseSha ? { baseSha } : {}) },
      );
    } catch (err) {
      if (!(err instanceof StoreClosed)) console.error(`auto-recompute of ${target.repoId}#${target.prNumber}: ${(err as DomainError).code ?? 'internal'}: ${(err as Error).message}`);
      return null;
    }
  }
}
