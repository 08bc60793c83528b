import { Controller, Get, Inject, Injectable, Module, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { hasAuditLog } from '../events/chain';
import { Ledger } from '../ledger';
import { AuditCheckpointer, AuditableStore, checkpointScheduleFrom } from './checkpointer';
import { AuditKeyring } from './keys';

/** The checkpoint key's public half, for anyone checking an export or a checkpoint (docs/audit.md). */
@Controller()
export class AuditKeyController {
  constructor(@Inject(Ledger) private readonly ledger: Ledger) {}

  @Get('/.well-known/review-ledger/audit-key')
  key() {
    const key = new AuditKeyring(this.ledger.config.dataDir).current();
    return { algorithm: 'Ed25519', keyId: key!.keyId, publicKey: key!.publicKey, format: 'spki-der-base64' };
  }
}

/** Signs checkpoints on the schedule of REVIEW_LEDGER_CHECKPOINT_EVENTS / _SECONDS while the server runs. */
@Injectable()
export class CheckpointService implements OnApplicationBootstrap, OnApplicationShutdown {
  private checkpointer: AuditCheckpointer | null = null;

  constructor(@Inject(Ledger) private readonly ledger: Ledger) {}

  onApplicationBootstrap(): void {
    const ring = new AuditKeyring(this.ledger.config.dataDir);
    ring.current();
    const stores = async (): Promise<AuditableStore[]> => {
      const out: AuditableStore[] = [];
      for (const w of this.ledger.workspaces.list()) {
        const { store } = await this.ledger.workspace(w.workspaceId);
        if (hasAuditLog(store)) out.push(store);
      }
      return out;
    };
    this.checkpointer = new AuditCheckpointer(
      stores,
      () => ring.current()!,
      this.ledger.clock,
      checkpointScheduleFrom(process.env),
      (err) => process.stderr.write(`review-ledger: audit checkpoint failed: ${(err as Error).message}\n`),
      this.ledger.operator.auditWitnessDir,
    );
    this.ledger.services.set('audit.checkpointer', this.checkpointer);
    this.checkpointer.start();
    // A chain signed by a key this server does not hold is reported at start (log line + /health).
    void this.checkpointer.checkKeys();
  }

  async onApplicationShutdown(): Promise<void> {
    // Before the ledger closes the stores (bootstrap closes the app first): sign the tail on a clean stop.
    await this.checkpointer?.stop({ final: true });
  }
}

@Module({ controllers: [AuditKeyController], providers: [CheckpointService] })
export class AuditModule {}
