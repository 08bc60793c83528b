import { Inject, Injectable } from '@nestjs/common';
import { ofType, Saga, type ICommand, type IEvent } from '@nestjs/cqrs';
import { from, type Observable } from 'rxjs';
import { filter, mergeMap } from 'rxjs/operators';
import { loadPrState } from '../review/pr-state';
import { parseReviewStream } from '../events/streams';
import { loadRepoState } from '../compute/streams';
import { followUpKey, ledgerCommand, type LedgerCommand } from '../cqrs/commands';
import { ledgerEventClass, type LedgerEvent } from '../cqrs/events';
import { isEvent } from '../events/catalogue/event-types';
import type { DomainError } from '../domain-error';
import { Ledger } from '../ledger';
import { AUTO_RECOMPUTE_COMMAND, WEBHOOK_PRINCIPAL } from './github';

const HeadObservedEvent = ledgerEventClass('HeadObserved');

/**
 * Webhook auto-recompute (SPEC §10): a head observed through a GitHub webhook, on a repo registered with
 * `config.autoRecompute`, is computed. Driven by the recorded `HeadObserved` on the EventBus, so a head
 * recorded just before a crash is still computed after the restart, and one recorded by another server
 * on the same store is computed here too. The follow-up's idempotency key comes from the event: seeing
 * it again (a restart replays the log, a second server sees it as well) replays the first computation
 * instead of recording another. Only the PR's current head is computed: a superseded observation is
 * skipped, so a restart costs one replayed key per PR, not one computation per head ever observed.
 */
@Injectable()
export class AutoRecomputeSaga {
  constructor(@Inject(Ledger) private readonly ledger: Ledger) {}

  @Saga()
  headObserved = (events$: Observable<IEvent>): Observable<ICommand> =>
    events$.pipe(
      ofType(HeadObservedEvent),
      filter((e) => e.event.metadata.via === 'webhook'),
      mergeMap((e) => from(this.followUp(e))),
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
      if ((err as Error).message !== 'store is closed') console.error(`auto-recompute of ${target.repoId}#${target.prNumber}: ${(err as DomainError).code ?? 'internal'}: ${(err as Error).message}`);
      return null;
    }
  }
}
