import { Controller, Get, Inject } from '@nestjs/common';
import * as fs from 'node:fs';
import { AUDIT_CHECKPOINTER_SERVICE } from '../audit/checkpointer';
import { Ledger } from '../ledger';
import { JOB_SLOTS } from '../compute/job-slots';
import { foldCache } from '../workspaces/fold-cache';

/** Below this much free space on the data dir's filesystem the embedded store cannot be relied on. */
export const MIN_FREE_BYTES = 4 * 1024 * 1024;
/** How long /health waits for the workspace count before it answers without it (degraded). */
const HEALTH_COUNT_MS = 1000;

@Controller()
export class HealthController {
  constructor(@Inject(Ledger) private readonly ledger: Ledger) {}

  /**
   * Liveness plus the store status. `degraded` (with `reason`) when the embedded store's disk is
   * (nearly) full, when PostgreSQL cannot be reached (from the first failed call or probe until one
   * succeeds: commands meanwhile answer the retryable store_unavailable), or when the audit checkpoints
   * cannot be signed (store away, or a key this server does not hold). It answers during an outage: it
   * never waits on the database. The data dir's path is not shown: /health needs no token, and host
   * paths are nobody else's business.
   */
  @Get('/health')
  async health() {
    const reasons: string[] = [];
    let workspaces: number | undefined;
    // PostgreSQL's list is asynchronous (never the catalogue's blocking call) and waited for at most
    // HEALTH_COUNT_MS: a database that does not answer must not hold /health. With the connection
    // known to be down it is not asked at all.
    if (this.ledger.workspaces.storeHealth()?.status !== 'degraded') {
      let timer: NodeJS.Timeout | undefined;
      try {
        workspaces = await Promise.race([
          this.ledger.workspaces.listAsync().then((list) => list.length),
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error(`no answer within ${HEALTH_COUNT_MS} ms`)), HEALTH_COUNT_MS);
          }),
        ]);
      } catch (err) {
        reasons.push(`workspace catalogue: ${(err as Error).message}`);
      } finally {
        clearTimeout(timer);
      }
    }
    const connection = this.ledger.workspaces.storeHealth();
    const sqlite = this.ledger.config.store === 'sqlite';
    const disk = sqlite ? freeSpace(this.ledger.config.dataDir) : undefined;
    if (disk !== undefined && disk.freeBytes < MIN_FREE_BYTES) reasons.push(`the data dir's disk has ${disk.freeBytes} bytes free (less than ${MIN_FREE_BYTES}): commands answer store_unavailable`);
    if (connection?.status === 'degraded' && connection.reason) reasons.unshift(connection.reason);
    // The checkpointer's state: failures (store away, key mismatch) and witness refusals (a store that went
    // backwards). Refusals only as a count: their reasons name host paths (the server log has them).
    const signing = this.ledger.services.get(AUDIT_CHECKPOINTER_SERVICE)?.status();
    if (signing?.status === 'degraded' && signing.reason) reasons.push(signing.reason);
    const audit = signing
      ? { status: signing.status, ...(signing.since ? { since: signing.since } : {}), ...(signing.failures ? { failures: signing.failures } : {}), witness: signing.witness, signingRefused: signing.refused.length }
      : undefined;
    return {
      status: reasons.length ? 'degraded' : 'ok',
      ...(reasons.length ? { reason: reasons.join('; ') } : {}),
      store: {
        adapter: this.ledger.config.store,
        synchronous: sqlite || this.ledger.config.store === 'postgres' ? this.ledger.config.synchronous : undefined,
        ...(disk ? { freeBytes: disk.freeBytes } : {}),
        ...(connection ? { connection } : {}),
      },
      ...(audit ? { audit } : {}),
      ...(workspaces !== undefined ? { workspaces } : {}),
      // Index/compute jobs (compute/job-slots.ts): totals only, no workspace names (this answer is public).
      jobs: jobTotals(),
      // Folded stream states kept between loads (workspaces/fold-cache.ts): when its states pass the budget,
      // evictions and misses climb together and commands fold their streams again — the figure to watch
      // before raising REVIEW_LEDGER_FOLD_CACHE_BYTES. Totals only.
      foldCache: foldCache.stats(),
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

function jobTotals(): { slots: number; running: number; waiting: number } {
  const { running, waiting } = JOB_SLOTS.stats();
  return { slots: JOB_SLOTS.running, running, waiting: Object.values(waiting).reduce((a, b) => a + b, 0) };
}
