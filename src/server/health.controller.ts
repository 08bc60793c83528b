import { Controller, Get, Inject } from '@nestjs/common';
import { Ledger } from '../ledger';

@Controller()
export class HealthController {
  constructor(@Inject(Ledger) private readonly ledger: Ledger) {}

  /** Liveness plus the store status, so an operator sees at once which adapter serves and where. */
  @Get('/health')
  health() {
    const workspaces = this.ledger.workspaces.list();
    return {
      status: 'ok',
      store: { adapter: this.ledger.config.store, dataDir: this.ledger.config.store === 'sqlite' ? this.ledger.config.dataDir : undefined, synchronous: this.ledger.config.store === 'sqlite' ? this.ledger.config.synchronous : undefined },
      workspaces: workspaces.length,
    };
  }
}
