import * as path from 'node:path';
import { hasAuditLog } from '../events/chain';
import type { WorkspaceHandle } from '../workspaces/registry';
import { readCheckpointList, storedHashAt, storePages, verifyStore } from './checkpointer';
import { keyIdOf } from './checkpoint';
import { AuditKeyring } from './keys';
import { extendVerified, tipOf, type VerifiedTip, type VerifyReport } from './verify';
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

interface Cached {
  stamp: string;
  at: number;
  status: AuditChainStatus;
  /** What the last clean verification established (null after one that found a problem), and when the whole log was last read. */
  tip: VerifiedTip | null;
  wholeAt: number;
  /** The store's editMark when the tip was verified (null: the store has none). */
  mark: string | null;
}

const CACHE_KEY = new Slot<Cached>('audit-chain-status');
/** The whole-log verification in flight per workspace: concurrent reads that need one share it. */
const WHOLE_IN_FLIGHT = new Slot<Promise<VerifyReport>>('audit-chain-whole-in-flight');
/**
 * The status is reused while neither the head nor the checkpoints moved, up to this age; and the whole log is
 * read again at least this often. In between, a moved head is verified from the last clean verification's
 * tip (extendVerified): the rows and checkpoints added since, not the whole log again — under writes every
 * audit read re-read the whole log (on PostgreSQL, ~60k events: about 12 ms of the server's CPU per read;
 * at 1M events, seconds). Rows verified before are read again at once when the store's editMark moved (an
 * edit behind the server's back), else within this age — as an idle log's status always was.
 */
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
  const [info, checkpoints, mark] = await Promise.all([store.chainInfo(), readCheckpointList(store), store.editMark ? store.editMark() : null]);
  const stamp = `${info.headPosition}/${info.headHash}/${checkpoints.length}`;
  const cached = ws.cache.get(CACHE_KEY);
  if (cached && cached.stamp === stamp && now.getTime() - cached.at < MAX_AGE_MS) return cached.status;
  const key = new AuditKeyring(path.dirname(ws.dir)).current(false);
  if (cached?.tip && cached.mark === mark && now.getTime() - cached.wholeAt < MAX_AGE_MS && (info.headPosition > cached.tip.headPosition || (info.headPosition === cached.tip.headPosition && info.headHash === cached.tip.headHash))) {
    const tip = await extendVerified(cached.tip, {
      pages: storePages(store, cached.tip.headPosition),
      checkpoints,
      hashAt: (position) => storedHashAt(store, position),
      trustedPublicKey: key?.publicKey,
      chainedFrom: info.chainedFrom,
    });
    if (tip) {
      const status: AuditChainStatus = { ...cached.status, ok: true, headPosition: tip.headPosition, verifiedCheckpoint: tip.verifiedCheckpoint, firstBroken: null, problems: [], keyId: tip.activeKey ? keyIdOf(tip.activeKey) : null, verifiedAt: now.toISOString() };
      ws.cache.set(CACHE_KEY, { stamp, at: now.getTime(), status, tip, wholeAt: cached.wholeAt, mark });
      return status;
    }
    // Something past the tip does not hold: the whole log is read, and the report names what.
  }
  let whole = ws.cache.get(WHOLE_IN_FLIGHT);
  if (!whole) {
    const started = verifyStore(store, key?.publicKey).finally(() => {
      if (ws.cache.get(WHOLE_IN_FLIGHT) === started) ws.cache.delete(WHOLE_IN_FLIGHT);
    });
    ws.cache.set(WHOLE_IN_FLIGHT, (whole = started));
  }
  const r = await whole;
  const status: AuditChainStatus = {
    supported: true, ok: r.ok, headPosition: r.headPosition, chainedFrom: r.chainedFrom, verifiedCheckpoint: r.verifiedCheckpoint,
    firstBroken: r.firstBroken, problems: r.problems.slice(0, 10), keyId: r.keyId, verifiedAt: now.toISOString(),
  };
  ws.cache.set(CACHE_KEY, { stamp, at: now.getTime(), status, tip: tipOf(r, checkpoints), wholeAt: now.getTime(), mark });
  return status;
}
