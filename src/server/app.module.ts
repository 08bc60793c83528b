import { DynamicModule, Module } from '@nestjs/common';
import { LedgerCqrsModule } from '../cqrs/ledger-cqrs.module';
import { Ledger } from '../ledger';
import { HealthController } from './health.controller';
import { SERVER_FEATURES } from './features';

/** The Nest shell: DI wiring and transports only; the domain lives outside and knows nothing of Nest. */
@Module({})
export class AppModule {
  static forLedger(ledger: Ledger): DynamicModule {
    return {
      module: AppModule,
      global: true,
      imports: [LedgerCqrsModule, ...SERVER_FEATURES.map((f) => f.module)],
      controllers: [HealthController],
      providers: [{ provide: Ledger, useValue: ledger }],
      exports: [Ledger],
    };
  }
}
