import { Controller, Get, Inject, Injectable, Module, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { hasAuditLog } from '../events/chain';
import { Ledger } from '../ledger';
import { AUDIT_CHECKPOINTER_SERVICE, AuditCheckpointer, AuditableStore, checkpointScheduleFrom } from './checkpointer';
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
  private unhook: (() => void) | null = null;
  private visiting: Promise<void> | null = null;
  private stopping = false;

  constructor(@Inject(Ledger) private readonly ledger: Ledger) {}

  onApplicationBootstrap(): void {
    const ring = new AuditKeyring(this.ledger.config.dataDir);
    ring.current();
    // The scheduled passes sign the open workspaces; one closing when idle is signed as it closes, and
    // every workspace is visited once at start (below): a closed workspace has nothing new to sign.
    const stores = async (): Promise<AuditableStore[]> => (await this.ledger.workspaces.openHandles()).map((h) => h.store).filter(hasAuditLog);
    this.checkpointer = new AuditCheckpointer(
      stores,
      () => ring.current()!,
      this.ledger.clock,
      checkpointScheduleFrom(process.env),
      (err) => process.stderr.write(`review-ledger: audit checkpoint failed: ${(err as Error).message}\n`),
      this.ledger.operator.auditWitnessDir,
    );
    this.ledger.services.set(AUDIT_CHECKPOINTER_SERVICE, this.checkpointer);
    this.checkpointer.start();
    const checkpointer = this.checkpointer;
    this.unhook = this.ledger.workspaces.beforeClose(async (handle) => {
      if (hasAuditLog(handle.store)) await checkpointer.passOne(handle.store, true);
      checkpointer.forget(handle.id);
    });
    // A chain signed by a key this server does not hold is reported at start (log line + /health), and a
    // tail left unsigned by a crash is signed: each workspace once, one open at a time (never all at once).
    this.visiting = this.visitAll(checkpointer);
  }

  private async visitAll(checkpointer: AuditCheckpointer): Promise<void> {
    let list: Array<{ workspaceId: string }>;
    try {
      list = this.ledger.workspaces.list();
    } catch {
      return; // the catalogue is away (an outage): the scheduled passes report it
    }
    for (const w of list) {
      if (this.stopping) return;
      const lease = await this.ledger.workspaces.lease(w.workspaceId).catch(() => null);
      if (!lease) continue;
      try {
        if (hasAuditLog(lease.handle.store)) await checkpointer.passOne(lease.handle.store);
      } finally {
        lease.release();
      }
    }
  }

  async onApplicationShutdown(): Promise<void> {
    // Before the ledger closes the stores (bootstrap closes the app first): sign the tail on a clean stop.
    this.stopping = true;
    await this.visiting;
    this.unhook?.();
    await this.checkpointer?.stop({ final: true });
  }
}

@Module({ controllers: [AuditKeyController], providers: [CheckpointService] })
export class AuditModule {}
