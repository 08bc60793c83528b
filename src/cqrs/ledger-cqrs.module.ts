import { Module } from '@nestjs/common';
import { CqrsModule } from '@nestjs/cqrs';
import { LEDGER_COMMAND_HANDLERS } from './commands';
import { LedgerEventFeed } from './event-feed';
import { CachedEventIdProvider } from './events';
import { LEDGER_QUERY_HANDLERS } from './queries';

/**
 * @nestjs/cqrs wired to the ledger: a @CommandHandler per registry command, a @QueryHandler per registry
 * query, and the EventBus fed from every workspace's store subscription. A feature adds its own
 * @CommandHandler, @QueryHandler, @EventsHandler or @Saga as a provider of its module.
 */
@Module({
  imports: [CqrsModule.forRoot({ eventIdProvider: new CachedEventIdProvider() })],
  providers: [...LEDGER_COMMAND_HANDLERS, ...LEDGER_QUERY_HANDLERS, LedgerEventFeed],
  exports: [LedgerEventFeed],
})
export class LedgerCqrsModule {}
