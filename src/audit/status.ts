import * as path from 'node:path';
import { hasAuditLog } from '../events/chain';
import type { WorkspaceHandle } from '../workspaces/registry';
import { readCheckpointList, verifyStore } from './checkpointer';
import { AuditKeyring } from './keys';
import type { VerifyReport } from './verify';
import { Slot } from '../slots';

/** What the audit read and the Review page show about the log behind the audit rows. */
export interface AuditChainStatus {
  supported: boolean;
  ok: boolean;
  headPosition: number;
  chainedFrom: number;
  verifiedCheckpoint: VerifyReport['verifiedCheckpoint'];
  firstBroken: number | null;
  problems: VerifyReport['problems'];
  keyId: string | null;
  /** When this verification ran (server time). */
  verifiedAt: string;
}

const CACHE_KEY = new Slot<{ stamp: string; at: number; status: AuditChainStatus }>('audit-chain-status');
/** A full verification reads the whole log: reuse it while neither the head nor the checkpoints moved, up to this age. */
const MAX_AGE_MS = 30_000;

/**
 * Verifies the workspace's log (against the server's current key) for the audit read and the page.
 * The handle's folder is `<dataDir>/<workspaceId>` (WorkspaceRegistry), so the key is one level up.
 */
export async function auditChainStatus(ws: WorkspaceHandle, now: Date): Promise<AuditChainStatus> {
  const store = ws.store;
  if (!hasAuditLog(store)) {
    return { supported: false, ok: false, headPosition: await store.headPosition(), chainedFrom: 0, verifiedCheckpoint: null, firstBroken: null, problems: [], keyId: null, verifiedAt: now.toISOString() };
  }
  const [info, checkpoints] = await Promise.all([store.chainInfo(), readCheckpointList(store)]);
  const stamp = `${info.headPosition}/${info.headHash}/${checkpoints.length}`;
  const cached = ws.cache.get(CACHE_KEY);
  if (cached && cached.stamp === stamp && now.getTime() - cached.at < MAX_AGE_MS) return cached.status;
  const key = new AuditKeyring(path.dirname(ws.dir)).current(false);
  const r = await verifyStore(store, key?.publicKey);
  const status: AuditChainStatus = {
    supported: true, ok: r.ok, headPosition: r.headPosition, chainedFrom: r.chainedFrom, verifiedCheckpoint: r.verifiedCheckpoint,
    firstBroken: r.firstBroken, problems: r.problems.slice(0, 10), keyId: r.keyId, verifiedAt: now.toISOString(),
  };
  ws.cache.set(CACHE_KEY, { stamp, at: now.getTime(), status });
  return status;
}
