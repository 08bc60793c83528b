import { Controller, Get, Inject } from '@nestjs/common';
import * as fs from 'node:fs';
import type { AuditCheckpointer } from '../audit/checkpointer';
import { Ledger } from '../ledger';

/** Below this much free space on the data dir's filesystem the embedded store cannot be relied on. */
export const MIN_FREE_BYTES = 4 * 1024 * 1024;

@Controller()
export class HealthController {
  constructor(@Inject(Ledger) private readonly ledger: Ledger) {}

  /**
   * Liveness plus the store status. `degraded` when the embedded store's disk is (nearly) full, so the
   * operator sees it before commands answer `store_unavailable`. The data dir's path is not shown:
   * /health needs no token, and host paths are nobody else's business.
   */
  @Get('/health')
  health() {
    const workspaces = this.ledger.workspaces.list();
    const sqlite = this.ledger.config.store === 'sqlite';
    const disk = sqlite ? freeSpace(this.ledger.config.dataDir) : undefined;
    const full = disk !== undefined && disk.freeBytes < MIN_FREE_BYTES;
    // Workspaces the checkpointer refuses to sign (their store went backwards relative to the audit witness).
    // Only how many here: /health needs no token, and the reason names host paths (the server log has it).
    const signing = (this.ledger.services.get('audit.checkpointer') as AuditCheckpointer | undefined)?.status();
    const refused = signing?.refused.map((r) => r.workspace) ?? [];
    const reasons = [
      ...(full ? [`the data dir's disk has ${disk!.freeBytes} bytes free (less than ${MIN_FREE_BYTES}): commands answer store_unavailable`] : []),
      ...(refused.length ? [`audit checkpoints are not being signed for ${refused.length} workspace(s): their log or checkpoints went backwards relative to the audit witness, or it cannot be read (see the server log and \`audit verify\`)`] : []),
    ];
    return {
      status: reasons.length ? 'degraded' : 'ok',
      ...(reasons.length ? { reason: reasons.join('; ') } : {}),
      store: { adapter: this.ledger.config.store, synchronous: sqlite ? this.ledger.config.synchronous : undefined, ...(disk ? { freeBytes: disk.freeBytes } : {}) },
      workspaces: workspaces.length,
      ...(signing ? { audit: { witness: signing.witness, signingRefused: refused.length } } : {}),
    };
  }
}

function freeSpace(dir: string): { freeBytes: number } | undefined {
  try {
    const s = fs.statfsSync(dir);
    return { freeBytes: Number(s.bavail) * Number(s.bsize) };
  } catch {
    return undefined;
  }
}
