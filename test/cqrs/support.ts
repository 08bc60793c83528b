import 'reflect-metadata';
import { Module, type DynamicModule, type INestApplicationContext, type Provider, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { LedgerCqrsModule } from '../../src/cqrs/ledger-cqrs.module';
import { EVENT_FEED_OPTIONS_SERVICE, LedgerEventFeed } from '../../src/cqrs/event-feed';
import { Ledger } from '../../src/ledger';

@Module({})
class CqrsTestRoot {}

/**
 * A Nest application context around a ledger with the ledger's CQRS wiring (buses, generated handlers,
 * the event feed) plus what a test adds: its own handler and saga providers, or whole modules.
 */
export async function cqrsContext(ledger: Ledger, extra: { providers?: Provider[]; imports?: Array<Type<unknown> | DynamicModule> } = {}): Promise<INestApplicationContext & { feed: LedgerEventFeed }> {
  if (!ledger.services.has(EVENT_FEED_OPTIONS_SERVICE)) ledger.services.set(EVENT_FEED_OPTIONS_SERVICE, { rescanMs: 100, pollMs: 50 });
  const root: DynamicModule = {
    module: CqrsTestRoot,
    global: true,
    imports: [LedgerCqrsModule, ...(extra.imports ?? [])],
    providers: [{ provide: Ledger, useValue: ledger }, ...(extra.providers ?? [])],
    exports: [Ledger],
  };
  const app = await NestFactory.createApplicationContext(root, { logger: ['error', 'warn'] });
  await app.init();
  return Object.assign(app, { feed: app.get(LedgerEventFeed) });
}

/** Polls until `check` holds (or fails the test after `ms`). */
export async function until(check: () => boolean | Promise<boolean>, ms = 20_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
